"""Backend counters of JuiceFS and Ceph, on output recorded from the real programs (JuiceFS 1.4's `.stats`,
Ceph 16.2's `ceph tell osd.* perf dump` and the scope command's `fs ls`, `osd pool ls detail`, `pg dump`
from the lab cluster), and the kinds that declare them."""

from __future__ import annotations

from types import SimpleNamespace

from fsbench.kinds.cephfs import PLUGIN as CEPHFS
from fsbench.kinds.cephfs import CephFS
from fsbench.kinds.juicefs import PLUGIN as JUICEFS
from fsbench.kinds.juicefs import JuiceFS
from fsbench.kinds.rbd import PLUGIN as RBD
from fsbench.kinds.rbd import Rbd
from fsbench.validity import ceph, juicefs
from fsbench.validity.counters import READ_OPS, WRITE_OPS, data_bytes
from tests.paths import REPO

DATA = REPO / "tests" / "golden" / "backend-counters"


def test_juicefs_stats_give_object_get_and_put_bytes_and_requests():
    snap = juicefs.parse_stats((DATA / "juicefs-1.4-stats.txt").read_text(), now=10.0)
    assert snap is not None and snap.now == 10.0
    # after an 8 MiB file was written with fsync and read back once the caches were dropped
    assert snap.ops["put_object"].bytes_in == 8 * 2**20 and snap.ops["put_object"].requests == 2
    assert snap.ops["get_object"].bytes_out == 8 * 2**20 and snap.ops["get_object"].requests == 2
    before = juicefs.parse_stats("juicefs_uptime 1\njuicefs_object_request_errors 0\n", now=0.0)
    assert before is not None and before.ops["get_object"].bytes == 0  # no request yet: no metric, zero
    moved = snap.minus(before)
    assert data_bytes(moved, READ_OPS) == data_bytes(moved, WRITE_OPS) == 8 * 2**20


def test_a_file_that_is_not_juicefs_metrics_gives_no_snapshot():
    assert juicefs.parse_stats("") is None
    assert juicefs.parse_stats("cat: /mnt/x/.stats: No such file or directory\n") is None


def test_ceph_perf_dump_sums_client_reads_and_writes_of_the_serving_osds_only():
    text = (DATA / "ceph-tell-osd-perf-dump.txt").read_text()
    ssd, both = ceph.parse_perf(text, {0}, now=1.0), ceph.parse_perf(text, None, now=1.0)
    assert ssd is not None and both is not None
    # a 32 MiB object put into rbd-ssd (osd.0); osd.1 only had CephFS metadata writes
    assert ssd.ops["rados_write"].bytes_in == 33556738 and ssd.ops["rados_write"].requests == 41
    assert both.ops["rados_write"].bytes_in == 33556738 + 2306
    assert ssd.ops["rados_read"].bytes == 0
    assert ceph.parse_perf(text, {7}) is None  # no such OSD: no counters, not zeros
    assert ceph.parse_perf("Error ENXIO: problem getting command descriptions from osd.0\n") is None


def test_the_scope_finds_the_osds_of_a_file_systems_data_pools_and_of_a_named_pool():
    text = (DATA / "ceph-scope-queries-cephfs-hdd.txt").read_text()
    assert ceph.serving_osds(text, fs="cephfs-hdd") == {1}
    assert ceph.serving_osds(text, fs="") == {0}  # the first file system: cephfs-ssd
    assert ceph.serving_osds(text, pools=("rbd-ssd",)) == {0}
    assert ceph.serving_osds(text, fs="nope") is None
    # the perf section is required: an OSD that never answers a tell leaves the backend out
    assert ceph.scoped_parser(fs="cephfs-hdd")(text) is None
    perf = (DATA / "ceph-tell-osd-perf-dump.txt").read_text()
    parse = ceph.scoped_parser(fs="cephfs-hdd")(text + f"\n{ceph.SECTION}perf\n" + perf)
    assert parse is not None
    snap = parse(perf)
    assert snap is not None and snap.ops["rados_write"].bytes_in == 2306  # osd.1's only


def test_the_scope_reads_the_three_answers_of_one_ceph_process_by_their_shape():
    """The scope command asks the monitors its three queries through one `ceph` (its interactive mode,
    Ceph 16.2's real output); an answer that is missing (a query that failed) leaves the scope undecided
    instead of taking another answer for it."""
    text = (DATA / "ceph-scope-queries-cephfs-hdd.txt").read_text()
    assert ceph.serving_osds(text, pools=("rbd-hdd",)) == {1}
    head, fs_line, *rest = text.splitlines()
    assert head == f"{ceph.SECTION}queries" and '"data_pool_ids"' in fs_line
    without_fs = "\n".join([head, *rest])
    assert ceph.serving_osds(without_fs, fs="cephfs-hdd") is None  # no file system list: not the pools' PGs
    assert ceph.serving_osds(without_fs, pools=("rbd-ssd",)) == {0}
    no_pgs = "\n".join(line for line in text.splitlines() if '"pg_stats"' not in line)
    assert ceph.serving_osds(no_pgs, pools=("rbd-ssd",)) is None
    argv = ceph.scope_argv(["ceph", "-c", "/s/ceph.conf"], pools=("rbd-ssd",))
    assert "printf '%s\\n' 'osd pool ls detail' 'pg dump pgs_brief' | ceph -c /s/ceph.conf --format json" in argv[-1]
    assert "'fs ls'" in ceph.scope_argv(["ceph"], fs="")[-1]


def test_kinds_declare_their_counters_with_the_targets_settings():
    jfs = SimpleNamespace(name="jfs", path="/mnt/jfs", settings=None)
    (c,) = JUICEFS.counters(jfs, {})
    assert c.name == "jfs" and c.argv == ["cat", "/mnt/jfs/.stats"] and c.per_host and c.scope_argv is None
    # with its engine's URL: the engine's own count too, read once, its password in the environment
    jfs = SimpleNamespace(name="jfs", path="/mnt/jfs", settings=JuiceFS(meta="${services.r.url}/1"))
    _, engine = JUICEFS.counters(jfs, {"services.r.url": "redis://:pw@127.0.0.1:6390"})
    assert engine.name == "jfs-engine" and engine.role == "engine" and not engine.per_host
    assert engine.argv[:5] == ["redis-cli", "-h", "127.0.0.1", "-p", "6390"] and engine.env == {"REDISCLI_AUTH": "pw"}
    rbd = SimpleNamespace(name="r", path="/mnt/r", settings=Rbd(pool="${services.ceph.rbd_pool_ssd}",
                                                                 conf="${services.ceph.conf}"))
    (c,) = RBD.counters(rbd, {"services.ceph.rbd_pool_ssd": "rbd-ssd", "services.ceph.conf": "/s/ceph.conf"})
    assert c.argv == ["ceph", "-c", "/s/ceph.conf", "--id", "admin", "tell", "osd.*", "perf", "dump",
                      "--format", "json"]
    assert not c.per_host and c.scope_argv is not None and "'osd' 'pool' 'ls'" not in c.scope_argv[-1]
    assert "'osd pool ls detail' 'pg dump pgs_brief' | ceph -c /s/ceph.conf --id admin --format json" in c.scope_argv[-1]
    fs = SimpleNamespace(name="f", path="/mnt/f", settings=CephFS(fs="cephfs-hdd"))
    c, mds = CEPHFS.counters(fs, {})
    assert "'fs ls'" in c.scope_argv[-1] and c.what == "the OSDs of CephFS cephfs-hdd"
    assert mds.name == "f-mds" and mds.role == "metadata" and mds.what == "the MDSs of CephFS cephfs-hdd"
    assert mds.argv == ["ceph", "-c", "/etc/ceph/ceph.conf", "--id", "admin", "tell", "mds.*", "perf", "dump", "mds_server",
                        "--format", "json"]
    assert "\nceph -c /etc/ceph/ceph.conf --id admin fs dump --format json\n" in (mds.scope_argv or [""])[-1]


def test_a_clients_counters_and_its_stores_are_not_added_up():
    """JuiceFS's own counters beside fsbench-s3's count the same bytes: the store's are the evidence."""
    from pathlib import Path

    from fsbench.validity.counters import OpCount, Snapshot
    from fsbench.validity.settings import Thresholds
    from fsbench.validity.watch import BackendWatch, Source

    store = Source("s3", "h", "http://s3/_fsbench/stats", None, Path("."))  # type: ignore[arg-type]
    client = Source("jfs", "h", "cat", None, Path("."), argv=["cat", "/mnt/jfs/.stats"])  # type: ignore[arg-type]
    w = BackendWatch([store, client], Thresholds())
    for name, op in (("s3", "get_object"), ("jfs", "get_object")):
        w.snaps[name] = {"start": Snapshot(0.0, {op: OpCount(0, 0, 0)}),
                         "end": Snapshot(1.0, {op: OpCount(4, 0, 16 * 2**20)})}
    seen = w.evidence()
    assert seen is not None and seen.services == ("s3",) and seen.read_tool == 16 * 2**20
    w.sources = [client]
    seen = w.evidence()
    assert seen is not None and seen.services == ("jfs",) and seen.read_tool == 16 * 2**20


def test_mdtest_on_rbd_is_flagged_when_no_block_reached_the_pool():
    from fsbench.tools import get_tool
    from fsbench.validity.ceph import METADATA_IN_CLIENT_CACHE
    from fsbench.validity.judge import checks_of, judge
    from fsbench.validity.settings import Thresholds
    from fsbench.validity.watch import Evidence

    assert METADATA_IN_CLIENT_CACHE in checks_of(get_tool("mdtest"), RBD)
    assert METADATA_IN_CLIENT_CACHE not in checks_of(get_tool("mdtest"), CEPHFS)  # its MDS journals elsewhere

    def rows() -> list[dict]:
        return [{"tool": "mdtest", "operation": op, "metric": "rate", "stat": "mean", "value": 9000.0}
                for op in ("file_creation", "file_stat", "tree_removal")]

    cached = Evidence(("rbd",), 8192, 0, 0, 0, 1.2, None, 1.0, True)
    marked = rows()
    verdicts = judge(marked, "mdtest", [METADATA_IN_CLIENT_CACHE], cached, Thresholds())
    assert [(v.operation, v.ok) for v in verdicts] == [("file_creation", False), ("tree_removal", False)]
    assert marked[0]["validity"] == "flagged" and "validity" not in marked[1]  # a stat changes nothing
    assert marked[1]["validity_detail"].startswith(  # and the pool cannot count it: why, in words
        "not checked: the file system on the image (ext4, xfs) answers a stat or an open of what it has just made "
        "from the client's own memory")
    assert marked[0]["validity_detail"].startswith(
        "metadata changes not in the store: the image's pool took 0 B of writes while mdtest ran and 0 B in the "
        "1 s after: its file creation, tree removal stayed in the client's page cache and journal")
    later = Evidence(("rbd",), 0, 0, 0, 106496, 1.2, None, 1.0, True)  # the lab's rbd-hdd: a commit after it
    marked = rows()
    judge(marked, "mdtest", [METADATA_IN_CLIENT_CACHE], later, Thresholds())
    assert marked[0]["validity"] == "flagged" and "0 B of writes while mdtest ran and 104 KiB" in \
        marked[0]["validity_detail"]
    committed = Evidence(("rbd",), 0, 2 * 2**20, 0, 4096, 6.0, None, 1.0, True)
    marked = rows()
    judge(marked, "mdtest", [METADATA_IN_CLIENT_CACHE], committed, Thresholds())
    assert marked[0]["validity"] == "ok" and "2 MiB of writes" in marked[0]["validity_detail"]
    fio = [{"tool": "fio", "operation": "write", "metric": "bandwidth", "value": 1.0}]
    assert judge(fio, "fio", [METADATA_IN_CLIENT_CACHE], cached, Thresholds()) == []


def test_the_namenode_s_own_counters_vouch_for_nnbench_s_operations() -> None:
    """Real JMX answers of a Hadoop 3.3.6 NameNode before and after NNBench (2 maps x 5 files): each NNBench
    operation against the NameNode's count of it; one that never reached it is flagged."""
    from fsbench.validity.namenode import REACHED_NAMENODE, jmx_url, parse_jmx
    from fsbench.validity.settings import Thresholds
    from fsbench.validity.watch import Evidence

    start = parse_jmx((DATA / "namenode-3.3.6_jmx_activity_start.json").read_text(), now=1.0)
    end = parse_jmx((DATA / "namenode-3.3.6_jmx_activity_end.json").read_text(), now=2.0)
    assert start is not None and end is not None
    moved = end.minus(start)
    assert set(moved) == {"namenode_create", "namenode_open", "namenode_rename", "namenode_delete"}
    assert all(o.bytes == 0 and o.requests > 0 for o in moved.values())
    seen = Evidence(("hdfs",), 0, 0, 0, 0, 1.0, None, 0.0, True, None, {k: o.requests for k, o in moved.items()})
    rows = [{"tool": "nnbench", "operation": op, "metric": "ops", "stat": "value", "value": 10.0, "host": "local"}
            for op in ("create_write", "open_read", "rename", "delete")]
    verdicts = {v.operation: v for v in REACHED_NAMENODE.judge("nnbench", rows, seen, Thresholds())}
    assert all(v.ok for v in verdicts.values())
    assert verdicts["rename"].detail.startswith(f"the NameNode counted {moved['namenode_rename'].requests} "
                                                "FilesRenamed while nnbench ran 10 rename")
    never = Evidence(("hdfs",), 0, 0, 0, 0, 1.0, None, 0.0, True, None, {"namenode_create": 0})
    flagged = REACHED_NAMENODE.judge("nnbench", rows, never, Thresholds())
    # the others were not counted here: not judged, saying why
    assert [(v.operation, v.ok) for v in flagged] == [("create_write", False), ("open_read", None), ("rename", None),
                                                      ("delete", None)]
    assert flagged[1].detail.startswith("no counter of the NameNode covers this case")
    assert parse_jmx('{"beans": []}') is None and parse_jmx("<html>") is None
    assert jmx_url({"services.h.host": "127.0.0.5", "services.h.port_http": "9870"}, "h") == \
        "http://127.0.0.5:9870/jmx?qry=Hadoop:service=NameNode,name=NameNodeActivity"
    assert jmx_url({"services.h.url": "hdfs://nn:8020"}, "h") is None  # an existing cluster: no port known


def test_nnbench_on_s3a_is_checked_against_the_s3_server_and_both_checks_are_told_apart() -> None:
    """The s3a kind's check and NNBench's own (the NameNode's) have names of their own: a case runs both."""
    from fsbench.kinds import KINDS
    from fsbench.tools import get_tool
    from fsbench.validity.judge import checks_of
    from fsbench.validity.settings import Thresholds
    from fsbench.validity.watch import Evidence

    checks = checks_of(get_tool("nnbench"), KINDS.get("s3a"))
    assert [c.name for c in checks] == ["operations that never reached the NameNode",
                                        "operations that never reached the S3 server"]
    # a real S3A run of 2 maps x 5 files on fsbench-s3 counted these while NNBench ran
    seen = Evidence(("s3",), 0, 0, 0, 0, 1.0, None, 0.0, True, None,
                    {"put_object": 52, "get_object": 15, "copy_object": 15, "delete_object": 25, "head_object": 178})
    rows = [{"tool": "nnbench", "operation": op, "metric": "ops", "stat": "value", "value": 10.0, "host": "local"}
            for op in ("create_write", "open_read", "rename", "delete")]
    verdicts = [v for c in checks for v in c.judge("nnbench", rows, seen, Thresholds()) if v.ok is not None]
    assert [(v.operation, v.ok) for v in verdicts] == [("create_write", True), ("open_read", True),
                                                       ("rename", True), ("delete", True)]
    assert verdicts[2].detail == "the S3 server counted 15 CopyObject while nnbench ran 10 rename"


def test_the_parts_nnbench_times_of_an_operation_share_its_verdict() -> None:
    from fsbench.tools.nnbench.parse import PARTS as TOOL_PARTS
    from fsbench.validity.namenode import PARTS, REACHED_NAMENODE
    from fsbench.validity.settings import Thresholds
    from fsbench.validity.watch import Evidence

    assert PARTS == TOOL_PARTS  # the check's copy of the tool's parts
    rows = [{"tool": "nnbench", "operation": op, "metric": "ops", "stat": "value", "value": 40.0}
            for op in ("create_write", "create", "close", "open_read", "open", "read")]
    seen = Evidence(("hdfs",), 0, 0, 0, 0, 1.0, None, 0.0, True, None, {"namenode_create": 80, "namenode_open": 40})
    verdicts = {v.operation: v for v in REACHED_NAMENODE.judge("nnbench", rows, seen, Thresholds())}
    assert {o: v.ok for o, v in verdicts.items()} == {"create_write": True, "create": True, "close": True,
                                                    "open_read": True, "open": True, "read": True}
    assert verdicts["close"].detail == "the NameNode counted 80 CreateFileOps while nnbench ran 40 create write " \
        "(this is a part of create write)"
