"""mdtest's creations and removals on JuiceFS judged by the client's own count of its metadata-engine requests
(`juicefs_meta_ops_total_<Method>` of the mount's `.stats`): the parse, the window and the check's bounds."""

from __future__ import annotations

from pathlib import Path

from fsbench.kinds.juicefs import PLUGIN as JUICEFS
from fsbench.tools import get_tool
from fsbench.validity import juicefs
from fsbench.validity.counters import OpCount, Snapshot
from fsbench.validity.engine import CHANGES_AT_ENGINE
from fsbench.validity.judge import checks_of, judge
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import BackendWatch, Evidence, Source
from tests.paths import REPO

DATA = REPO / "tests" / "golden" / "backend-counters"


def test_the_stats_give_each_engine_method_as_a_request_count_without_bytes() -> None:
    snap = juicefs.parse_stats((DATA / "juicefs-1.4-stats.txt").read_text(), now=1.0)
    assert snap is not None
    # recorded after one file was created, written with fsync, stat'ed and read back
    assert snap.ops["meta_Mknod"] == OpCount(1) and snap.ops["meta_GetAttr"].requests == 36
    assert snap.ops["meta_Lookup"].requests == 3 and snap.ops["meta_StatFS"].requests == 14
    assert all(o.bytes == 0 for op, o in snap.ops.items() if op.startswith("meta_"))


def test_a_clients_engine_requests_are_evidence_even_where_the_store_counts_the_objects() -> None:
    store = Source("s3", "h", "http://s3/_fsbench/stats", None, Path("."))  # type: ignore[arg-type]
    client = Source("jfs", "h", "cat", None, Path("."), argv=["cat", "/mnt/jfs/.stats"])  # type: ignore[arg-type]
    w = BackendWatch([store, client], Thresholds())
    w.snaps["s3"] = {"start": Snapshot(0.0, {"put_object": OpCount(0)}),
                     "end": Snapshot(1.0, {"put_object": OpCount(3, 3 * 2**20)})}
    w.snaps["jfs"] = {"start": Snapshot(0.0, {"put_object": OpCount(0), "meta_Mknod": OpCount(5)}),
                      "end": Snapshot(1.0, {"put_object": OpCount(3, 3 * 2**20), "meta_Mknod": OpCount(405)})}
    seen = w.evidence()
    assert seen is not None and seen.services == ("s3",)
    assert seen.requests == {"put_object": 3, "meta_Mknod": 400}  # the objects counted once, the engine's added
    rows = w.rows()
    assert {"operation": "meta_Mknod", "metric": "ops", "value": 400.0} in [
        {k: r[k] for k in ("operation", "metric", "value")} for r in rows if r["window"] == "tool"]
    assert not [r for r in rows if r["operation"] == "meta_Mknod" and r["metric"] == "io_bytes"]


def _rows(items: int = 40, tree: int = 8, iterations: int = 1) -> list[dict]:
    phases = {"directory_creation": items, "directory_stat": items, "directory_rename": items,
              "directory_removal": items, "file_creation": items, "file_stat": items, "file_removal": items,
              "tree_creation": tree, "tree_removal": tree}
    return [{"tool": "mdtest", "operation": op, "metric": "rate", "stat": stat, "value": 900.0, "items": n,
             "iterations": iterations} for op, n in phases.items() for stat in ("mean", "max")]


def _seen(**requests: int) -> Evidence:
    return Evidence(("jfs",), 0, 0, 0, 0, 1.0, None, 1.0, True, requests={f"meta_{k}": v for k, v in requests.items()})


def test_creations_and_removals_that_reached_the_engine_hold_and_stats_are_not_judged() -> None:
    """The counts of a real run (meta-engines.yaml at smoke scale, mdtest -b 3 -z 1 -I 5 -u, 2 tasks, on Redis):
    JuiceFS counts a mkdir as a Mknod, so 40 files, 40 directories, the 8 tree directories and mdtest's own
    test directory made 89 Mknod; the removals 40 Unlink and 49 Rmdir."""
    assert CHANGES_AT_ENGINE in checks_of(get_tool("mdtest"), JUICEFS)
    rows = _rows()
    seen = _seen(Mknod=89, Unlink=40, Rmdir=49, Rename=40, GetAttr=300, Lookup=420)
    verdicts = judge(rows, "mdtest", checks_of(get_tool("mdtest"), JUICEFS), seen, Thresholds())
    assert {v.operation: v.ok for v in verdicts} == {
        "directory_creation": True, "directory_removal": True, "directory_rename": True, "file_creation": True,
        "file_removal": True, "tree_creation": True, "tree_removal": True}
    got = {v.operation: v for v in verdicts}
    assert got["file_removal"].detail == ("the client asked its metadata engine 40 Unlink while mdtest ran, for 40 "
                                          "items of file removal: 1.00 per item")
    # 89 Mknod shared by 40 files, 40 directories and 8 tree directories: at least 89 - 48 - 2 for the files
    assert got["file_creation"].detail.endswith(
        "89 Mknod while mdtest ran, for 40 items of file creation and 40 of directory creation and 8 of tree "
        "creation (same method): 0.97 to 2.23 per item")
    assert got["tree_creation"].detail.endswith("0.88 to 11.12 per item")
    stat = next(r for r in rows if r["operation"] == "file_stat")
    assert "validity" not in stat and stat["validity_detail"] == (
        "not checked: the client asked its metadata engine 720 Lookup/GetAttr while mdtest ran, for 40 items of file "
        "stat: at most 18.00 per item (other phases send Lookup/GetAttr too): the client counts its engine requests "
        "for the whole mdtest run, and a stat sends Lookup and GetAttr, which every other phase sends too: no count "
        "can tell this phase's share (metabench's getattr and lookup of the same target, each call counted, say "
        "whether they reach the engine)")


def test_a_phase_whose_changes_never_reached_the_engine_is_flagged_and_a_shared_method_gives_no_false_flag() -> None:
    rows = _rows(iterations=2)
    # a client that kept the file creations: the engine saw the directories (80), the trees (16) and 4 more
    seen = _seen(Mknod=100, Unlink=80, Rmdir=20)
    got = {v.operation: v for v in judge(rows, "mdtest", [CHANGES_AT_ENGINE], seen, Thresholds())}
    # 100 Mknod for 80 + 80 + 16 creations: none of them can be shown short by itself, nor all shown held
    assert "file_creation" not in got and "directory_creation" not in got
    creation = next(r for r in rows if r["operation"] == "file_creation")
    assert "validity" not in creation and creation["validity_detail"].endswith(
        "its share of the Mknod cannot be told from the other phases'")
    assert got["file_removal"].ok and "80 Unlink" in got["file_removal"].detail
    # 20 Rmdir for 80 directories (two iterations) and 16 tree directories: even all of them are 0.25 each
    assert not got["directory_removal"].ok and "0.00 to 0.25 per item" in got["directory_removal"].detail
    assert "stayed in the client while mdtest timed them" in got["directory_removal"].detail
    assert [r["validity"] for r in rows if r["operation"] == "directory_removal"] == ["flagged", "flagged"]
    # a run whose creations never reached the engine at all
    rows = _rows()
    got = {v.operation: v for v in judge(rows, "mdtest", [CHANGES_AT_ENGINE], _seen(Mknod=3), Thresholds())}
    assert not got["file_creation"].ok and not got["tree_creation"].ok and "0.00 to 0.07" in got["file_creation"].detail


def test_rows_without_items_are_not_judged() -> None:
    rows = [{"tool": "mdtest", "operation": "file_creation", "metric": "rate", "stat": "mean", "value": 1.0,
             "items": ""}]
    assert CHANGES_AT_ENGINE.judge("mdtest", rows, _seen(Mknod=0), Thresholds()) == []


def test_the_quiet_wait_looks_at_object_traffic_only() -> None:
    """A mounted JuiceFS client's engine requests never stop (sessions, fsbench's fault probe): the wait for
    the store to go quiet must not count them, or every case waits the whole `settle`."""
    client = Source("jfs", "h", "cat", None, Path("."), argv=["cat", "/mnt/jfs/.stats"])  # type: ignore[arg-type]
    w = BackendWatch([client], Thresholds())
    w.snaps["jfs"] = {"end": Snapshot(1.0, {"put_object": OpCount(3, 3 * 2**20), "meta_Lookup": OpCount(10)}),
                      "settled": Snapshot(2.0, {"put_object": OpCount(3, 3 * 2**20), "meta_Lookup": OpCount(14)})}
    assert w._totals("end") == w._totals("settled")
