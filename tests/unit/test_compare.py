"""Run-to-run comparison: tolerance parsing, Welch's test, verdicts on hand-made runs, renderers."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
import yaml

from fsbench.compare import (
    Comparison,
    RunData,
    ToleranceError,
    compare,
    compare_runs,
    exit_code,
    parse_metrics,
    parse_tolerances,
    to_html,
    to_markdown,
    tolerance_for,
)
from fsbench.compare.judge import judge
from fsbench.compare.stats import t_two_sided_p, welch
from fsbench.core.tidy import measurement
from fsbench.core.units import format_value

FAIL = None  # a repetition that failed
FIO = {"tool": "fio", "options": {"rw": "write", "bs": "64k", "size": "4m"}}


def make_run(label: str, points: dict, *, workloads: dict | None = None, hosts: list[dict] | None = None,
             tool: str = "fio", prefix: str = "", reasons: str = "fio: exit status 3") -> RunData:
    """points: {(target, workload, "param=value ..."): {metric or (operation, metric): [value per repetition]}}."""
    results, cases = [], []
    for (target, workload, point), metrics in points.items():
        params = dict(p.split("=") for p in point.split())
        reps = max((len(v) for v in metrics.values()), default=1)
        for rep in range(1, reps + 1):
            cid = prefix + "__".join([target, workload, *(f"{k}={v}" for k, v in params.items()), f"r{rep}"])
            failed = any(len(v) >= rep and v[rep - 1] is FAIL for v in metrics.values())
            cases.append({"case_id": cid, "target": target, "workload": workload, "tool": tool, "repetition": rep,
                          "status": "failed" if failed else "ok", "reason": reasons if failed else "",
                          "hosts": "local", **{f"param_{k}": v for k, v in params.items()}})
            if failed:
                continue
            for key, values in metrics.items():
                op, metric = key if isinstance(key, tuple) else ("write", key)
                if len(values) >= rep:
                    results.append({"case_id": cid, "target": target, "workload": workload, "repetition": rep,
                                    **measurement(tool, op, metric, values[rep - 1], host="local", job=workload)})
    wl = workloads if workloads is not None else {w: FIO for (_, w, _) in points}
    hosts = hosts if hosts is not None else [{"host": "local", "kernel": "6.1", f"{tool}_version": "fio-3.33"}]
    return RunData.from_frames(label, pd.DataFrame(results), pd.DataFrame(cases), workloads=wl, hosts=hosts,
                               manifest={"run_id": label, "scenario": "s", "fsbench_version": "0.1.0"})


def one(c: Comparison, metric: str = "bandwidth", **where: str) -> pd.Series:
    f = c.frame[c.frame["metric"] == metric]
    for k, v in where.items():
        f = f[f[k] == v]
    assert len(f) == 1, f
    return f.iloc[0]


# ---------------------------------------------------------------- tolerances


def test_tolerances_are_read_from_specs_strings_and_mappings():
    assert parse_tolerances(["bandwidth:5%", "clat_p99:10%", "*:3%"]) == {"bandwidth": 0.05, "clat_p99": 0.10,
                                                                         "*": 0.03}
    assert parse_tolerances("bandwidth: 2.5 %, clat_*:50%") == {"bandwidth": 0.025, "clat_*": 0.5}
    assert parse_tolerances({"iops": 0.2}) == {"iops": 0.2}
    assert parse_tolerances(None) == {} and parse_tolerances([]) == {}


@pytest.mark.parametrize("spec, message", [
    ("bandwidth:5", "write METRIC:PERCENT"),
    ("bandwidth=5%", "write METRIC:PERCENT"),
    ("bandwidth:-5%", "write METRIC:PERCENT"),
    ("bandwith:5%", "did you mean 'bandwidth'"),
    ("nothing_*:5%", "matches no metric"),
    (["iops:5%", "iops:10%"], "given twice"),
    ({"iops": -0.1}, "not a fraction"),
])
def test_bad_tolerances_say_what_is_allowed(spec, message):
    with pytest.raises(ToleranceError, match=re.escape(message)):
        parse_tolerances(spec)


def test_the_most_specific_tolerance_wins():
    tol = parse_tolerances(["clat_*:20%", "clat_p9*:30%", "clat_p99:40%", "*:3%"])
    assert tolerance_for("clat_p99", tol) == 0.40
    assert tolerance_for("clat_p95", tol) == 0.30
    assert tolerance_for("clat_mean", tol) == 0.20
    assert tolerance_for("bandwidth", tol) == 0.03
    assert tolerance_for("bandwidth", {}) == 0.05  # the default band


def test_metric_selection_is_checked():
    assert parse_metrics("bandwidth,clat_*") == ["bandwidth", "clat_*"]
    with pytest.raises(ToleranceError, match="did you mean 'iops'"):
        parse_metrics(["iosp"])


# ---------------------------------------------------------------- statistics


def test_welch_matches_reference_values():
    # reference values from scipy.stats.ttest_ind(equal_var=False) and t.sf
    assert welch([1, 2, 3], [4, 5, 6]).p == pytest.approx(0.021311641128756727, rel=1e-9)
    r = welch([10, 11, 12, 13], [1, 1.5, 1.8])
    assert r.df == pytest.approx(3.7394514877640384) and r.p == pytest.approx(1.9268e-4, rel=1e-3)
    assert t_two_sided_p(2.0, 10) == pytest.approx(0.07338803477074, rel=1e-9)
    assert t_two_sided_p(4.302652729911275, 2) == pytest.approx(0.05, rel=1e-9)
    assert t_two_sided_p(1.0, 1) == pytest.approx(0.5, rel=1e-12)
    assert t_two_sided_p(1.96, 1e7) == pytest.approx(0.05, abs=1e-4)


def test_welch_with_constant_sides_is_certain():
    assert welch([5, 5, 5], [5, 5, 5]).p == 1.0
    assert welch([5, 5, 5], [6, 6, 6]).p == 0.0


# ---------------------------------------------------------------- verdict of one measurement


@pytest.mark.parametrize("metric, a, b, verdict", [
    ("bandwidth", [100], [120], "better"),
    ("bandwidth", [100], [80], "worse"),
    ("bandwidth", [100], [104], "same"),
    ("bandwidth", [100], [105], "same"),  # exactly the band is inside it
    ("clat_p99", [100e-6], [120e-6], "worse"),  # latencies are better smaller
    ("clat_p99", [100e-6], [80e-6], "better"),
    ("runtime", [10], [12], "worse"),
    ("iops", [0], [0], "same"),
])
def test_direction_and_band(metric, a, b, verdict):
    r = judge(a, b, metric, 0.05, 0.05)
    assert r["verdict"] == verdict and r["confidence"] == "untested"


def test_with_three_repetitions_a_change_must_also_be_significant():
    noisy = judge([100, 60, 140], [70, 120, 50], "bandwidth", 0.05, 0.05)
    assert noisy["change"] < -0.05 and noisy["verdict"] == "same" and noisy["confidence"] == "not significant"
    assert "not significant" in noisy["detail"] and noisy["p_value"] > 0.05
    clear = judge([100, 101, 99], [80, 81, 79], "bandwidth", 0.05, 0.05)
    assert clear["verdict"] == "worse" and clear["p_value"] < 0.001 and clear["confidence"] == "significant"
    inside = judge([100, 100.1, 99.9], [102, 102.1, 101.9], "bandwidth", 0.05, 0.05)
    assert inside["verdict"] == "same" and inside["p_value"] < 0.05  # significant but inside the band
    assert clear["ratio"] == pytest.approx(0.8) and clear["change"] == pytest.approx(-0.2)


def test_significance_is_judged_on_ratios():
    # one fast repetition swamps Welch's test on raw values: a 300-fold slowdown would be "not significant"
    fast, slow = [8016.0, 1749.0, 2297.0], [10.0, 10.1, 9.9]
    assert welch(fast, slow).p > 0.05
    r = judge(fast, slow, "bandwidth", 0.05, 0.05)
    assert r["verdict"] == "worse" and r["p_value"] < 0.01
    assert judge([0.0, 1.0, 2.0], [5.0, 6.0, 7.0], "iops", 0.05, 0.05)["p_value"] == pytest.approx(
        welch([0.0, 1.0, 2.0], [5.0, 6.0, 7.0]).p)  # a zero has no logarithm: raw values then


def test_alpha_decides_significance():
    a, b = [100, 104, 96], [88, 93, 91]
    p = judge(a, b, "bandwidth", 0.05, 0.05)["p_value"]
    assert 0.01 < p < 0.05
    assert judge(a, b, "bandwidth", 0.05, 0.05)["verdict"] == "worse"
    assert judge(a, b, "bandwidth", 0.05, 0.01)["verdict"] == "same"


# ---------------------------------------------------------------- matching runs


def test_cases_are_matched_by_what_they_ran_not_by_their_ids():
    a = make_run("A", {("t1", "w", "numjobs=1"): {"bandwidth": [100, 101, 99]},
                       ("t1", "w", "numjobs=4"): {"bandwidth": [300, 301, 299]}})
    b = make_run("B", {("t1", "w", "numjobs=4"): {"bandwidth": [200, 201, 199]},
                       ("t1", "w", "numjobs=1"): {"bandwidth": [100, 100, 101]}}, prefix="other-ids-")
    c = compare(a, [b])
    assert one(c, point="numjobs=4")["verdict"] == "worse"
    assert one(c, point="numjobs=1")["verdict"] == "same"
    assert one(c, point="numjobs=4")["param_numjobs"] == "4"
    assert one(c, point="numjobs=4")["mean_a"] == pytest.approx(300)


def test_different_options_are_not_comparable_and_say_why():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100]}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [50]}},
                 workloads={"w": {**FIO, "options": {**FIO["options"], "rate": "20m"}}})
    row = one(compare(a, [b]))
    assert row["verdict"] == "not comparable" and "options.rate: – → 20m" in row["detail"]
    assert row["mean_a"] == 100 and row["mean_b"] == 50  # the numbers are still shown


def test_a_different_tool_version_is_not_comparable():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100]}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [100]}},
                 hosts=[{"host": "local", "kernel": "6.1", "fio_version": "fio-3.36"}])
    row = one(compare(a, [b]))
    assert row["verdict"] == "not comparable" and "fio version: fio-3.33 → fio-3.36" in row["detail"]


def test_what_does_not_change_a_case_keeps_runs_comparable():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100]}},
                 workloads={"w": {**FIO, "description": "one", "repetitions": 1, "timeout": "1m"}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [100]}},
                 workloads={"w": {**FIO, "description": "two", "repetitions": 3}},
                 hosts=[{"host": "local", "kernel": "6.9", "fio_version": "fio-3.33"}])
    c = compare(a, [b])
    assert one(c)["verdict"] == "same"
    assert c.environment["B"] == [("local: kernel", "6.1", "6.9")]  # reported as context, not as a verdict


def test_missing_and_new_points_and_measurements():
    a = make_run("A", {("t", "old", ""): {"bandwidth": [1]},
                       ("t", "w", ""): {"bandwidth": [1], "clat_mean": [1e-3]}})
    b = make_run("B", {("t", "new", ""): {"bandwidth": [1]},
                       ("t", "w", ""): {"bandwidth": [1], "iops": [5]}})
    c = compare(a, [b])
    assert one(c, workload="old")["verdict"] == "missing"
    assert one(c, workload="new")["verdict"] == "new"
    assert one(c, "clat_mean", workload="w")["verdict"] == "missing"
    assert one(c, "iops", workload="w")["verdict"] == "new"
    assert one(c, workload="w")["verdict"] == "same"
    assert c.summary["B"] == {"worse": 0, "failed": 0, "not comparable": 0, "missing": 2, "new": 2, "better": 0,
                              "same": 1}


def test_a_failed_repetition_on_either_side_is_failed_with_its_reason():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100, 100, 100]},
                       ("t", "x", ""): {"bandwidth": [FAIL]}}, reasons="setup failed: mount")
    b = make_run("B", {("t", "w", ""): {"bandwidth": [100, FAIL, 100], "iops": [1, FAIL, 1]},
                       ("t", "x", ""): {"bandwidth": [5]},
                       ("t", "y", ""): {"bandwidth": [FAIL]}})
    c = compare(a, [b])
    w = c.frame[c.frame["workload"] == "w"]
    assert set(w["verdict"]) == {"failed"} and len(w) == 2
    assert "1 of 3 repetitions failed in this run: fio: exit status 3" in w["detail"].iloc[0]
    x = c.frame[c.frame["workload"] == "x"]
    assert list(x["verdict"]) == ["failed"] and "in the reference: setup failed: mount" in x["detail"].iloc[0]
    y = c.frame[c.frame["workload"] == "y"]  # new and failed: a gate must see it
    assert list(y["verdict"]) == ["failed"] and y["metric"].isna().all()
    assert exit_code(c) == 0 and exit_code(c, ["failed"]) == 1


def test_more_runs_are_each_compared_with_the_first():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100, 100, 101]}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [50, 51, 50]}})
    c2 = make_run("C", {("t", "w", ""): {"bandwidth": [200, 201, 200]}})
    c = compare(a, [b, c2])
    assert [r.label for r in c.runs] == ["B", "C"] and c.reference.label == "A"
    assert one(c, run="B")["verdict"] == "worse" and one(c, run="C")["verdict"] == "better"
    assert set(c.frame["reference"]) == {"A"}
    assert c.summary["B"]["worse"] == 1 and c.summary["C"]["better"] == 1
    assert exit_code(c) == 1 and exit_code(c, ["better"]) == 1 and exit_code(c, []) == 0
    with pytest.raises(ValueError, match="unknown verdict"):
        exit_code(c, ["wrose"])


def test_tolerances_and_metric_selection_apply():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100], "clat_p99": [1e-3]}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [90], "clat_p99": [1.3e-3]}})
    c = compare(a, [b], tolerances=["bandwidth:15%", "clat_*:50%"])
    assert set(c.frame["verdict"]) == {"same"}
    assert one(c)["tolerance"] == 0.15 and one(c, "clat_p99")["tolerance"] == 0.5
    c = compare(a, [b], metrics=["clat_*"])
    assert list(c.frame["metric"]) == ["clat_p99"] and c.frame["verdict"].iloc[0] == "worse"


def test_jobs_of_one_case_are_never_taken_for_repetitions():
    cases = pd.DataFrame([{"case_id": f"c{r}", "target": "t", "workload": "w", "tool": "fio", "repetition": r,
                           "status": "ok", "hosts": "local"} for r in (1, 2)])
    results = pd.DataFrame([{"case_id": f"c{r}", "target": "t", "workload": "w", "repetition": r,
                             **measurement("fio", "write", "bandwidth", 100.0, host="local", job=j)}
                            for r in (1, 2) for j in ("writer", "reader")])
    c = compare(RunData.from_frames("A", results, cases, workloads={"w": FIO}),
                [RunData.from_frames("B", results, cases, workloads={"w": FIO})])
    assert (c.frame["n_a"] == 2).all() and (c.frame["n_b"] == 2).all()


def test_tool_side_spread_rows_are_not_compared():
    cases = pd.DataFrame([{"case_id": "c1", "target": "t", "workload": "md", "tool": "mdtest", "repetition": 1,
                           "status": "ok", "hosts": ""}])
    rows = [measurement("mdtest", "file_creation", "rate", v, stat=s) for s, v in
            (("max", 10.0), ("min", 5.0), ("mean", 7.0), ("stddev", 2.0))]
    results = pd.DataFrame([{"case_id": "c1", "target": "t", "workload": "md", "repetition": 1, **r} for r in rows])
    run = RunData.from_frames("A", results, cases, workloads={"md": {"tool": "mdtest"}})
    other = RunData.from_frames("B", results, cases, workloads={"md": {"tool": "mdtest"}})
    c = compare(run, [other], metrics="all")
    assert sorted(c.frame["stat"]) == ["max", "mean", "min"] and set(c.frame["verdict"]) == {"same"}
    assert list(compare(run, [other]).frame["stat"]) == ["mean"]  # by default the tool's mean alone


# ---------------------------------------------------------------- renderers


def test_markdown_shows_counts_marks_formatted_values_and_reasons():
    a = make_run("A", {("t", "w", "bs=4k"): {"bandwidth": [100e6, 101e6, 99e6], "clat_p99": [1e-3] * 3},
                       ("t", "x", ""): {"bandwidth": [1e6]}})
    b = make_run("B", {("t", "w", "bs=4k"): {"bandwidth": [50e6, 51e6, 50e6], "clat_p99": [1e-3] * 3},
                       ("t", "x", ""): {"bandwidth": [FAIL]}}, reasons="fio | broke\nsecond line")
    md = to_markdown(compare(a, [b]))
    assert md.startswith("# Comparison with A\n")
    assert "| `B` | 1 | 1 | 0 | 0 | 0 | 0 | 1 |" in md
    assert format_value(100e6, "B/s") in md and format_value(50.333e6, "B/s") in md
    assert "❌ worse" in md and "≈ same" in md and "💥 failed" in md and "-49.7%" in md
    assert "fio \\| broke" in md and "second line" not in md  # pipes escaped; the first line of a reason
    assert "t · w · bs=4k" in md and "`*:5%`" in md
    assert "| 💥 failed | t | x |  | 1 |" in md  # a case without parameters has none, not "bs=nan"


def test_markdown_lists_changes_that_more_repetitions_could_confirm():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100, 60, 140]}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [70, 120, 50]}})
    md = to_markdown(compare(a, [b]))
    assert "**Outside the band and the floors but not significant** (more repetitions would tell):" in md
    assert "No change outside the tolerance bands." in md


def test_html_is_self_contained_and_escapes_what_runs_wrote():
    a = make_run("A", {("t", "w", ""): {"bandwidth": [100e6]}})
    b = make_run("B", {("t", "w", ""): {"bandwidth": [FAIL]}}, reasons="<script>alert(1)</script>")
    html = to_html(compare(a, [b]))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "Content-Security-Policy" in html and not re.search(r'(src|href)="(https?:)?//', html)
    assert 'data-verdict="failed"' in html and "‼ failed" in html and "💥" not in html


# ---------------------------------------------------------------- run directories


def write_run_dir(path, run_id: str, params: list[str], bandwidth: list[float]) -> None:
    """A minimal run directory as `fsbench run` writes it."""
    path.mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps({"schema_version": 1, "fsbench_version": "0.1.0",
                                                    "run_id": run_id, "scenario": "s", "status": "complete"}))
    (path / "scenario.yaml").write_text(yaml.safe_dump({"name": "s", "workloads": {"w": FIO}}))
    (path / "hosts.csv").write_text("host,fio_version\nlocal,fio-3.33\n")
    cases = pd.DataFrame([{"case_id": f"t__w__{i}", "target": "t", "workload": "w", "tool": "fio", "repetition": 1,
                           "status": "ok", "reason": "", "hosts": "local", "param_numjobs": p}
                          for i, p in enumerate(params)])
    cases.to_csv(path / "cases.csv", index=False)
    rows = [{"run_id": run_id, "case_id": f"t__w__{i}", "target": "t", "workload": "w", "repetition": 1,
             **measurement("fio", "write", "bandwidth", v, host="local")} for i, v in enumerate(bandwidth)]
    pd.DataFrame(rows).to_csv(path / "results.csv", index=False)


def test_compare_runs_reads_run_directories(tmp_path):
    write_run_dir(tmp_path / "a", "s-1", ["1", ""], [100.0, 10.0])
    write_run_dir(tmp_path / "b", "s-2", ["1", ""], [50.0, 10.0])
    c = compare_runs(tmp_path / "a", tmp_path / "b", tmp_path / "b")
    assert [r.label for r in c.runs] == ["s-2", "s-2 (2)"] and c.reference.label == "s-1"
    assert one(c, run="s-2", point="numjobs=1")["verdict"] == "worse"  # "1", not "1.0": parameters stay text
    assert one(c, run="s-2", point="")["verdict"] == "same"
    assert c.reference.path == str(tmp_path / "a")
    assert math.isnan(one(c, run="s-2", point="numjobs=1")["p_value"])
