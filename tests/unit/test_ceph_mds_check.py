"""CephFS's MDS counters and the check they feed, on output recorded from the lab cluster (Ceph 16.2: `ceph fs
dump` with two file systems, `ceph tell mds.* perf dump mds_server` after mdtest -n 200 -u -z 2 -i 1 through
ceph-fuse on cephfs-ssd, whose MDS is `b`)."""

from __future__ import annotations

from pathlib import Path

from fsbench.validity import ceph_mds as mds
from fsbench.validity.counters import OpCount, Snapshot
from fsbench.validity.engine import CHANGES_AT_ENGINE, CHANGES_AT_MDS
from fsbench.validity.judge import judge
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import BackendWatch, Evidence, Source

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "backend-counters"
DUMP = (GOLDEN / "ceph-fs-dump.json").read_text()
PERF = (GOLDEN / "ceph-tell-mds-perf-dump.txt").read_text()


def test_the_file_systems_mds_are_named_by_the_fs_dump() -> None:
    assert mds.serving_mds(DUMP, "cephfs-ssd") == {"b"}
    assert mds.serving_mds(DUMP, "cephfs-hdd") == {"a"}
    assert mds.serving_mds(DUMP, "") == {"b"}  # the default file system (default_fscid 1)
    assert mds.serving_mds(DUMP, "nope") is None
    assert mds.serving_mds("not json", "cephfs-ssd") is None


def test_the_requests_of_each_kind_are_read_from_the_named_mds_only() -> None:
    snap = mds.parse_perf(PERF, {"b"}, now=5.0)
    assert snap is not None and snap.now == 5.0
    got = {op: c.requests for op, c in snap.ops.items() if c.requests}
    assert got == {"mds_requests": 1031, "mds_create": 198, "mds_getattr": 28, "mds_lookup": 2, "mds_mkdir": 203,
                   "mds_readdir": 1, "mds_rename": 198, "mds_rmdir": 203, "mds_unlink": 198}
    assert all(c.bytes == 0 for c in snap.ops.values())
    idle = mds.parse_perf(PERF, {"a"})
    assert idle is not None and not any(c.requests for c in idle.ops.values())
    # an MDS of the file system that did not answer (a failover): its counters would not subtract
    assert mds.parse_perf(PERF, {"b", "c"}) is None
    assert mds.parse_perf("mds.b: not json", {"b"}) is None


def test_the_scope_reads_the_dump_and_the_counters_of_one_command() -> None:
    text = f"{mds.SECTION}fsdump\n{DUMP}\n\n{mds.SECTION}perf\n{PERF}"
    parse = mds.scoped_parser("cephfs-ssd")(text)
    assert parse is not None
    snap = parse(PERF)
    assert snap is not None and snap.ops["mds_create"].requests == 198
    assert mds.scoped_parser("cephfs-ssd")(f"{mds.SECTION}fsdump\n{DUMP}\n") is None  # no counters: left out
    assert mds.scoped_parser("nope")(text) is None


def _rows(items: int = 198) -> list[dict]:
    phases = ("directory_creation", "directory_stat", "directory_rename", "directory_removal", "file_creation",
              "file_stat", "file_read", "file_removal")
    return [{"tool": "mdtest", "operation": op, "metric": "rate", "stat": "mean", "value": 500.0, "items": items,
             "iterations": 1} for op in phases]


def test_a_cephfs_run_whose_changes_reached_the_mds_and_whose_stats_did_not() -> None:
    """The recorded run: every creation, rename and removal asked the MDS once; the stats and the opens of the
    files ceph-fuse had just made were answered by the client (28 getattr and 2 lookup for 396 stats, 0 open)."""
    requests = {op: c.requests for op, c in (mds.parse_perf(PERF, {"b"}) or Snapshot(0.0)).ops.items()}
    seen = Evidence(("cephfs-ssd", "cephfs-ssd-mds"), 0, 0, 0, 0, 1.0, None, 0.0, True, requests=requests)
    rows = _rows()
    verdicts = {v.operation: v for v in judge(rows, "mdtest", [CHANGES_AT_MDS], seen, Thresholds())}
    assert {op: v.ok for op, v in verdicts.items()} == {
        "directory_creation": True, "directory_rename": True, "directory_removal": True, "file_creation": True,
        "file_removal": True, "directory_stat": False, "file_stat": False, "file_read": False}
    assert verdicts["file_creation"].detail == ("the file system's MDSs served 198 create while mdtest ran, for 198 "
                                                "items of file creation: 1.00 per item")
    assert verdicts["file_stat"].detail.startswith(
        "the file system's MDSs served 30 getattr/lookup while mdtest ran, for 198 items of file stat: at most 0.15 "
        "per item (other phases send getattr/lookup too): most of these items were answered by a cache")
    assert verdicts["file_read"].detail.startswith("the file system's MDSs served 0 open")
    assert [r["validity"] for r in rows if r["operation"] == "file_stat"] == ["flagged"]
    assert verdicts["file_creation"].check == "never reached the MDS"


def test_stats_that_reached_the_mds_are_not_judged_by_a_whole_run_count() -> None:
    seen = Evidence(("m",), 0, 0, 0, 0, 1.0, None, 0.0, True,
                    requests={"mds_create": 198, "mds_getattr": 400, "mds_lookup": 10})
    rows = _rows()
    judge(rows, "mdtest", [CHANGES_AT_MDS], seen, Thresholds())
    stat = next(r for r in rows if r["operation"] == "file_stat")
    assert "validity" not in stat and stat["validity_detail"].endswith(
        "the MDSs count its kind of request for the whole mdtest run, which the other phases send too: no count can "
        "tell this phase's share")


def test_a_phase_without_items_gets_the_mds_words_not_the_juicefs_clients() -> None:
    rows = [{"tool": "mdtest", "operation": "file_read", "metric": "rate", "stat": "mean", "value": 1.0, "items": ""}]
    seen = Evidence(("m",), 0, 0, 0, 0, 1.0, None, 0.0, True, requests={"mds_create": 3})
    (v,) = CHANGES_AT_MDS.judge("mdtest", rows, seen, Thresholds())
    assert v.ok is None and v.detail.startswith("the MDSs count its kind of request") and "Lookup" not in v.detail


def test_without_the_mds_counters_nothing_is_judged_and_juicefs_counts_are_not_taken_for_them() -> None:
    osd_only = Evidence(("cephfs-ssd",), 0, 0, 0, 0, 1.0, None, 0.0, True, requests={"rados_write": 4})
    assert CHANGES_AT_MDS.judge("mdtest", _rows(), osd_only, Thresholds()) == []
    juicefs = Evidence(("jfs",), 0, 0, 0, 0, 1.0, None, 0.0, True, requests={"meta_Mknod": 400})
    assert CHANGES_AT_MDS.judge("mdtest", _rows(), juicefs, Thresholds()) == []
    assert CHANGES_AT_ENGINE.judge("mdtest", _rows(), Evidence(("m",), 0, 0, 0, 0, 1.0, None, 0.0, True,
                                                              requests={"mds_create": 198}), Thresholds()) == []


def test_the_mds_window_is_the_tools_and_it_makes_no_byte_rows() -> None:
    """The MDSs' counters are read before and after the tool, not while the case settles (each read is a
    `ceph tell`), and a metadata request carries no object data."""
    src = Source("f-mds", "h", "the MDSs", None, Path("."), argv=["ceph"], role="metadata")  # type: ignore[arg-type]
    w = BackendWatch([src], Thresholds())
    reads: list[str] = []

    def read(s: Source, stage: str) -> Snapshot:
        reads.append(stage)
        return Snapshot(float(len(reads)), {"mds_create": OpCount(10 * len(reads))})

    w._read = read  # type: ignore[method-assign]
    w.tool_start()
    w.tool_end()
    w.settle()
    assert reads == ["start", "end"]
    seen = w.evidence()
    assert seen is not None and seen.requests == {"mds_create": 10}
    rows = w.rows()
    assert [(r["operation"], r["metric"], r["value"]) for r in rows] == [("mds_create", "ops", 10.0)]
