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


def _rows(items: int = 400, tree: int = 8, iterations: int = 1) -> list[dict]:
    phases = {"directory_creation": items, "directory_stat": items, "file_creation": items, "file_stat": items,
              "file_removal": items, "directory_removal": items, "tree_creation": tree, "tree_removal": tree}
    return [{"tool": "mdtest", "operation": op, "metric": "rate", "stat": stat, "value": 900.0, "items": n,
             "iterations": iterations} for op, n in phases.items() for stat in ("mean", "max")]


def _seen(**requests: int) -> Evidence:
    return Evidence(("jfs",), 0, 0, 0, 0, 1.0, None, 1.0, True, requests={f"meta_{k}": v for k, v in requests.items()})


def test_creations_and_removals_that_reached_the_engine_hold_and_stats_are_not_judged() -> None:
    assert CHANGES_AT_ENGINE in checks_of(get_tool("mdtest"), JUICEFS)
    rows = _rows()
    seen = _seen(Mkdir=410, Mknod=400, Unlink=400, Rmdir=410, GetAttr=900, Lookup=1200)
    verdicts = judge(rows, "mdtest", checks_of(get_tool("mdtest"), JUICEFS), seen, Thresholds())
    assert {v.operation: v.ok for v in verdicts} == {
        "directory_creation": True, "directory_removal": True, "file_creation": True, "file_removal": True,
        "tree_creation": True, "tree_removal": True}
    got = {v.operation: v for v in verdicts}
    assert got["file_creation"].ok and "400 Mknod while mdtest ran, for 400 items of file creation: 1.00" in \
        got["file_creation"].detail
    # 410 Mkdir for 400 directories and a tree of 8: at least 400 (410 - 8 - 2 outside the phases) for the
    # directories, at least 8 (410 - 400 - 2) for the tree
    assert "1.00 to 1.02 per item" in got["directory_creation"].detail
    assert "1.00 to 51.25 per item" in got["tree_creation"].detail
    stat = next(r for r in rows if r["operation"] == "file_stat")
    assert "validity" not in stat and stat["validity_detail"].startswith(
        "not checked: the client counts its engine requests for the whole mdtest run, and a stat sends Lookup and "
        "GetAttr, which every other phase sends too")


def test_a_phase_whose_changes_never_reached_the_engine_is_flagged_and_a_shared_method_gives_no_false_flag() -> None:
    rows = _rows(iterations=2)
    # a client that kept the creations (the engine saw only the tree's directories and a few files)
    seen = _seen(Mkdir=20, Mknod=3, Unlink=800, Rmdir=420)
    got = {v.operation: v for v in judge(rows, "mdtest", [CHANGES_AT_ENGINE], seen, Thresholds())}
    assert not got["file_creation"].ok and "0.00 per item" in got["file_creation"].detail
    assert "stayed in the client while mdtest timed them" in got["file_creation"].detail
    assert not got["directory_creation"].ok  # even all 20 Mkdir are 0.03 per item of its 800
    assert "tree_creation" not in got  # 20 Mkdir could be the tree's 16 and more: neither held nor flagged
    tree = next(r for r in rows if r["operation"] == "tree_creation")
    assert "validity" not in tree and tree["validity_detail"].endswith(
        "its share of the Mkdir cannot be told from directory creation's")
    assert got["file_removal"].ok and "800 Unlink" in got["file_removal"].detail
    # removals: 420 Rmdir for 800 directories (two iterations) and 16 tree directories: at most 0.53 each,
    # at least (420 - 16 - 4) / 800 = 0.50
    assert got["directory_removal"].ok and "0.50 to 0.53" in got["directory_removal"].detail
    assert [r["validity"] for r in rows if r["operation"] == "file_creation"] == ["flagged", "flagged"]


def test_rows_without_items_are_not_judged() -> None:
    rows = [{"tool": "mdtest", "operation": "file_creation", "metric": "rate", "stat": "mean", "value": 1.0,
             "items": ""}]
    assert CHANGES_AT_ENGINE.judge("mdtest", rows, _seen(Mknod=0), Thresholds()) == []
