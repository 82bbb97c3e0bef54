"""Each mdtest phase's own metadata-engine requests: the script mdtest runs before each phase, the phase order
from its command line, the rows from the snapshots, the build that asks for it, and the check that judges it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

from fsbench.api.tools import BuildContext, HostInfo
from fsbench.tools import get_tool
from fsbench.tools.mdtest import phase_probe
from fsbench.tools.mdtest.results import read_flags
from fsbench.validity.engine import CHANGES_AT_ENGINE
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

COUNTERS = (".stats", "juicefs_meta_ops_total_")


def _flags(line: str) -> dict[str, str]:
    flags = read_flags(line)
    assert flags is not None
    return flags


def test_the_phase_order_follows_mdtests_flags() -> None:
    every = ["directory_creation", "directory_stat", "directory_read", "directory_rename", "directory_removal",
             "file_creation", "file_stat", "file_read", "file_removal"]
    assert phase_probe.sequence(_flags("mdtest -n 20 -u -d /x"), 20) == every
    # one item per task: mdtest 4 skips the rename
    assert "directory_rename" not in phase_probe.sequence(_flags("mdtest -n 1 -d /x"), 1)
    assert phase_probe.sequence(_flags("mdtest -F -n 50 -d /x"), 50) == every[5:]
    assert phase_probe.sequence(_flags("mdtest -D -n 50 -d /x"), 50) == every[:5]
    # phases chosen: no rename then; -S (a shared file): no directory test
    assert phase_probe.sequence(_flags("mdtest -C -T -n 9 -d /x"), 9) == [
        "directory_creation", "directory_stat", "file_creation", "file_stat"]
    assert phase_probe.sequence(_flags("mdtest -S -n 9 -d /x"), 9) == every[5:]


def test_each_phase_is_the_difference_of_the_snapshots_around_it_and_each_iterations_last_is_left_out() -> None:
    phases = ["file_creation", "file_stat", "file_read", "file_removal"]
    # two iterations; each snapshot has two methods whose sums are 10, 110, 111, 150 then 400, 500, 520, 600
    sums = [10, 110, 111, 150, 400, 500, 520, 600]
    text = "".join(f"@phase 1.{i}\njuicefs_meta_ops_total_Mknod {s - 4}\njuicefs_meta_ops_total_Lookup 4\n"
                   for i, s in enumerate(sums))
    rows, warnings = phase_probe.phase_rows(text, phases, 2, {p: 100 for p in phases}, tasks=2)
    assert warnings == []
    got = {r["operation"]: (r["value"], r["engine_requests"], r["engine_items"]) for r in rows}
    assert got == {"file_creation": (1.0, 200, 200), "file_stat": (0.105, 21, 200), "file_read": (0.595, 119, 200)}
    assert {r["metric"] for r in rows} == {"engine_requests_per_item"} and {r["unit"] for r in rows} == {"request/item"}


def test_snapshots_that_do_not_match_the_phases_are_not_used_and_said() -> None:
    rows, warnings = phase_probe.phase_rows("@phase 1\nx 1\n@phase 2\nx 5\n", ["file_creation", "file_stat",
                                                                               "file_removal"], 1, {})
    assert rows == [] and "2 snapshots" in warnings[0] and "make 3" in warnings[0]


def test_only_mdtest_4_and_later_runs_a_command_before_each_phase() -> None:
    assert phase_probe.supported("mdtest-4.0.0 (Open MPI 4.1.4)")
    assert phase_probe.supported("mdtest-4.1.0+dev (Open MPI 4.1.4)")
    assert not phase_probe.supported("mdtest-3.3.0 (Open MPI 4.1.4)")
    assert not phase_probe.supported("") and not phase_probe.supported("not found")


def test_the_script_appends_rank_0s_counters_from_the_mounts_root_and_other_ranks_do_nothing(tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    (mount / "bench" / "case").mkdir(parents=True)
    (mount / ".stats").write_text("juicefs_meta_ops_total_Mknod 7\njuicefs_other 9\njuicefs_meta_ops_total_Rmdir 2\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / phase_probe.SCRIPT).write_text(phase_probe.script(str(mount / "bench" / "case" / "mdtest"), COUNTERS))
    command = phase_probe.argv_flag().split("=", 1)[1]  # what mdtest hands to system(): `sh SCRIPT`
    for rank in ("0", "1"):
        subprocess.run(["sh", "-c", command], cwd=work, check=True, env={"OMPI_COMM_WORLD_RANK": rank, "PATH": "/usr/bin:/bin"})
    text = (work / phase_probe.SNAPSHOTS).read_text()
    assert text.count("@phase") == 1 and "juicefs_other" not in text  # rank 1 wrote nothing
    assert phase_probe.snapshots(text) == [9]


def _ctx(version: str, counters=COUNTERS, hosts: int = 1) -> BuildContext:
    infos = {f"h{i}": HostInfo(f"h{i}", f"10.0.0.{i}", 2, None, {"mdtest_version": version, "uid": "0"})
             for i in range(hosts)}
    return BuildContext(infos, controller=HostInfo("c", "c", facts={"uid": "0"}), meta_counters=counters)


def test_the_build_asks_for_the_probe_only_where_it_can_count() -> None:
    mdtest = get_tool("mdtest")
    case = SimpleNamespace(options={"n": 20, "u": True, "tasks": 2})
    inv = mdtest.build(case, "/mnt/jfs/t/mdtest", _ctx("mdtest-4.0.0 (Open MPI 4.1.4)"))
    assert phase_probe.argv_flag() in inv.argv and inv.argv[-2:] == ["-d", "/mnt/jfs/t/mdtest"]
    assert phase_probe.SCRIPT in inv.files and phase_probe.SNAPSHOTS in inv.outputs
    for ctx in (_ctx("mdtest-3.3.0 (Open MPI 4.1.4)"), _ctx("mdtest-4.0.0", counters=None),
                _ctx("mdtest-4.0.0", hosts=2), None):
        other = mdtest.build(case, "/mnt/jfs/t/mdtest", ctx)
        assert phase_probe.argv_flag() not in other.argv and not other.files.get(phase_probe.SCRIPT)


def test_a_probed_phase_is_judged_by_its_own_count_stats_included() -> None:
    rows = [{"tool": "mdtest", "operation": op, "metric": "rate", "stat": "mean", "value": 900.0, "items": 100,
             "iterations": 1} for op in ("file_creation", "file_stat", "file_read", "file_removal")]
    rows += [{"tool": "mdtest", "operation": "file_creation", "metric": "engine_requests_per_item", "value": 2.0,
              "engine_requests": 200, "engine_items": 100},
             {"tool": "mdtest", "operation": "file_stat", "metric": "engine_requests_per_item", "value": 0.03,
              "engine_requests": 3, "engine_items": 100},
             {"tool": "mdtest", "operation": "file_read", "metric": "engine_requests_per_item", "value": 3.0,
              "engine_requests": 300, "engine_items": 100}]
    seen = Evidence(("jfs",), 0, 0, 0, 0, 1.0, None, 1.0, True, requests={"meta_Mknod": 104, "meta_Unlink": 100})
    verdicts = {v.operation: v for v in CHANGES_AT_ENGINE.judge("mdtest", rows, seen, Thresholds())}
    assert verdicts["file_creation"].ok is True and "200 requests during file creation" in verdicts["file_creation"].detail
    assert verdicts["file_stat"].ok is False and "answered by a cache" in verdicts["file_stat"].detail
    assert verdicts["file_read"].ok is True
    assert verdicts["file_removal"].ok is True and "Unlink" in verdicts["file_removal"].detail  # the whole run's


def test_a_snapshot_that_read_no_counters_leaves_its_phases_uncounted_not_zero() -> None:
    # the counters file was not found before file_stat: creation and stat are not counted, read is
    text = "@phase 1\nx 10\n@phase 2\n@phase 3\nx 50\n@phase 4\nx 90\n"
    rows, _ = phase_probe.phase_rows(text, ["file_creation", "file_stat", "file_read", "file_removal"], 1,
                                     {"file_creation": 10, "file_stat": 10, "file_read": 10})
    assert [(r["operation"], r["engine_requests"]) for r in rows] == [("file_read", 40)]
    assert phase_probe.snapshots(text) == [10, None, 50, 90]
