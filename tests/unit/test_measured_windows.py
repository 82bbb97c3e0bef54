"""Issue 21: collector means over the tool's run (recorded real `juicefs stats` output), and a quick/lab
report whose headings state this run's sizes and say how the scale differs from full."""

from __future__ import annotations

import json

import pytest
import yaml

from fsbench.api.collectors import ToolWindow
from fsbench.collectors.juicefs_stats import parse_stats
from fsbench.report.html import write_report
from fsbench.scenario.load import load_scenario
from tests.paths import GOLDEN, REPO

STATS = (GOLDEN / "collectors" / "inputs" / "juicefs-1.4.2_stats_verbosity1.txt").read_text()
MIB = 2**20


def _row(rows: list[dict], op: str, stat: str) -> dict:
    return next(r for r in rows if r["operation"] == op and r["stat"] == stat)


def test_juicefs_stats_means_cover_the_tools_run_not_the_idle_samples():
    """Real output: one busy second (17M written) among 12 samples. Over all of them the mean is diluted
    twelvefold; over the tool's 0.5 s run (the busy line arrives 0.4 s after it starts) it is what moved
    per second of the run."""
    lines = STATS.splitlines()
    busy = next(i for i, line in enumerate(lines) if "17M" in line)
    diluted = parse_stats(STATS, "h1", "stats", 1.0)
    window = ToolWindow(0.5, tuple(i - busy + 0.4 for i in range(len(lines))))  # one line a second
    got = parse_stats(STATS, "h1", "stats", 1.0, window)
    all_mean = _row(diluted.rows, "fuse_write", "mean")["value"]
    run_mean = _row(got.rows, "fuse_write", "mean")["value"]
    assert all_mean == pytest.approx(17 * MIB / 12)
    # the busy line and the one after it (its interval overlaps the run's end) are the run's: 17M in 0.5 s
    assert run_mean == pytest.approx(17 * MIB / 0.5)
    assert _row(got.rows, "fuse_write", "max")["value"] == 17 * MIB  # the peak stays the peak
    assert not got.warnings and all("warnings" not in r for r in got.rows)


def test_juicefs_stats_without_a_sample_in_the_run_says_its_means_include_idle_time():
    lines = STATS.splitlines()
    late = ToolWindow(0.2, tuple(-100.0 for _ in lines))  # every line arrived long before the tool ran
    got = parse_stats(STATS, "h1", "stats", 1.0, late)
    assert any("no juicefs stats sample fell in the tool's 0.20 s run" in w for w in got.warnings)
    assert "idle ones included" in _row(got.rows, "fuse_write", "mean")["warnings"]


@pytest.mark.parametrize("name, full_sizes, run_sizes", [
    ("cephfs-vs-rbd", ["mdtest -n 5000", "1 GiB or 60 s", "5000 items", "(1 GiB at full scale)"],
     ["mdtest -n 200 ", "128m or 2 s", "200 items per mdtest iteration"]),
    ("meta-engines", ["-I N ", "about 3 GiB", "tens of GiB"], ["-I 20 -u, 2 tasks", "4 fio files of 256m"]),
])
def test_a_quick_report_states_the_sizes_it_ran_and_how_they_differ_from_full(tmp_path, name, full_sizes,
                                                                              run_sizes):
    """A run directory of the scenario at its default (quick or lab) scale, without results: the report's
    use case and workload descriptions say this run's sizes, and its top says the scale and the differences."""
    sc = load_scenario(REPO / "scenarios" / f"{name}.yaml")
    run = tmp_path / "run"
    run.mkdir()
    (run / "scenario.yaml").write_text(yaml.safe_dump(sc.resolved, sort_keys=False))
    (run / "manifest.json").write_text(json.dumps({"run_id": "r1", "scenario": name, "status": "complete",
                                                   "started": "2026-01-01T00:00:00+00:00"}))
    target, workload = next(iter(sc.targets)), next(iter(sc.workloads))
    case = f"{target}__{workload}__r1"
    (run / "cases.csv").write_text(f"case_id,target,workload,status,reason,warnings\n{case},{target},{workload},ok,,\n")
    (run / "results.csv").write_text(
        "run_id,case_id,scenario,target,workload,repetition,tool,host,job,operation,metric,stat,value,unit\n"
        f"r1,{case},{name},{target},{workload},1,{sc.workloads[workload].tool},local,,x,rate,value,1.0,op/s\n")
    html = write_report(run).read_text()
    for text in full_sizes:
        assert text not in html, text
    for text in run_sizes:
        assert text in html, text
    scale = html[html.index('id="scale"'):html.index("</p>", html.index('id="scale"'))]
    assert "Scale <strong>" in scale and "not\n    full" in scale
    assert ("<code>md_items</code> 200\n    (at full: 5000)" if name == "cephfs-vs-rbd"
            else "<code>mdtest_items</code> 20\n    (at full: 100)") in scale
