"""The written conclusions in the seeds' voice, on synthetic tidy tables: each target against the baseline
with its factor or percentage, "no clear difference" for the rest, the leader of a table, pairing by round,
the floors, one measurement per run, one note about single runs, the use case, and stats and chart views."""

from __future__ import annotations

from fsbench.core.stats_settings import Floors
from fsbench.report import voice
from fsbench.report.conclusions import judge, single_run_note, tool_sentences
from fsbench.report.views import build_view
from tests.unit.reportkit import row, run_view


def _rows(values: dict[str, list[float]], op: str = "write", metric: str = "bandwidth", workload: str = "w",
          tool: str = "fio", **params: object) -> list[dict]:
    """Tidy rows: per target its value in each round."""
    return [row(t, workload, tool, op, metric, v, rep=i, **params) for t, vals in values.items()
            for i, v in enumerate(vals, 1)]


def _said(rows: list[dict], targets: list[str], spec: dict | None = None, **kw) -> list[str]:
    view = build_view(run_view(rows, targets), spec or {"view": "table", "workload": "w", "title": "T"})
    return [line for _, lines in tool_sentences([view], targets[0], **kw) for line in lines]


def test_who_wins_and_by_how_much_in_words():
    rows = (_rows({"a": [100, 102, 98], "b": [210, 205, 200], "c": [101, 99, 100]}, op="write")
            + _rows({"a": [100, 101, 99], "b": [300, 310, 290], "c": [80, 81, 79]}, op="read"))
    assert _said(rows, ["a", "b", "c"]) == [
        "T: b leads (clearly first on 2 of 2). b is 2.0-3.0× faster than a on read and write. "
        "c is 20 % slower than a on read; no clear difference on the other 1."]


def test_nothing_significant_is_named_no_clear_difference():
    rows = _rows({"a": [100, 130, 90], "b": [120, 95, 105]})
    assert _said(rows, ["a", "b"]) == [
        "T: No clear difference between the targets on it (none differs from a significantly at 95 % and by "
        "more than 10%)."]


def test_a_significant_difference_under_the_floor_is_not_stated():
    rows = _rows({"a": [100, 100.5, 99.5], "b": [105, 105.4, 104.6]})   # 5 %, steady: significant, too small
    assert "No clear difference" in _said(rows, ["a", "b"])[0]
    assert _said(rows, ["a", "b"], floors=Floors(min_effect=0.02))[0] == (
        "T: b leads (clearly first on 1 of 1). b is 5 % faster than a on write.")


def test_latencies_under_the_time_floor_are_not_stated():
    fast = _rows({"a": [10e-6, 10.1e-6, 9.9e-6], "b": [25e-6, 25.2e-6, 24.8e-6]}, metric="latency_mean",
                 tool="metabench", op="mkdir")
    assert "No clear difference" in _said(fast, ["a", "b"])[0]  # 2.5x, but 15 µs: the floor
    slow = _rows({"a": [100e-6, 101e-6, 99e-6], "b": [250e-6, 252e-6, 248e-6]}, metric="latency_mean",
                 tool="metabench", op="mkdir")
    assert _said(slow, ["a", "b"])[0] == "T: a leads (clearly first on 1 of 1). b is 2.5× slower than a on mkdir."


def test_rounds_in_a_rounds_run_are_paired_so_drift_does_not_hide_a_difference():
    # every round slower than the one before (the machine got busy); b 25 % faster than a in each round
    a = [100.0, 140.0, 200.0, 120.0]
    rows = _rows({"a": a, "b": [x * 1.25 for x in a]})
    view = build_view(run_view(rows, ["a", "b"]), {"view": "table", "workload": "w", "title": "T"})
    m = view["measurements"][0]
    assert judge(m)["best_sure"]  # paired: the ratio is the same every round
    unpaired = {**m, "values": {t: {k: x for k, x in v.items() if k != "reps"} for t, v in m["values"].items()}}
    assert not judge(unpaired)["best_sure"]  # Welch on the same values: the drift swamps it


def test_iops_and_bandwidth_of_one_run_are_one_measurement():
    rows = [row(t, "w", "fio", "write", m, v * f + rep, numjobs=n, rep=rep) for t, f in (("a", 1), ("b", 2))
            for n in (1, 4) for m, v in (("iops", 1000.0), ("bandwidth", 4e6)) for rep in (1, 2, 3)]
    view = build_view(run_view(rows, ["a", "b"]), {"view": "by_value", "workload": "w", "param": "numjobs",
                                                  "metrics": ["iops", "bandwidth"], "title": "T"})
    assert len(view["measurements"]) == 2
    assert [x for _, lines in tool_sentences([view], "a") for x in lines] == [
        "T: b leads (clearly first on 2 of 2). b is 2.0× faster than a on write (numjobs=1) and write (numjobs=4)."]


def test_two_views_of_one_measurement_say_it_once_and_the_single_run_note_comes_once():
    rows = [row(t, "w", "fio", "write", "bandwidth", v) for t, v in (("a", 100.0), ("b", 150.0))]
    rv = run_view(rows, ["a", "b"])
    views = [build_view(rv, {"view": "table", "workload": "w"}), build_view(rv, {"view": "best", "workload": "w"})]
    said = tool_sentences(views, "a")
    assert len(said) == 1 and "No clear difference" in said[0][1][0]  # one run each: nothing stated
    assert single_run_note(views).startswith("Each value comes from a single run, so run-to-run noise cannot")
    rows3 = [row(t, "w", "fio", "write", "bandwidth", v + rep, rep=rep) for t, v in (("a", 100.0), ("b", 150.0))
             for rep in (1, 2, 3)]
    assert single_run_note([build_view(run_view(rows3, ["a", "b"]), {"view": "table", "workload": "w"})]) == ""


def test_mdtest_stats_judge_by_the_tools_own_spread():
    # mdtest's Max / Min / Mean / StdDev over its iterations: a single fsbench run still has a spread
    rows = []
    for t, mean, std in (("a", 1000.0, 10.0), ("b", 1300.0, 10.0), ("c", 1010.0, 300.0)):
        for stat, v in (("mean", mean), ("stddev", std), ("max", mean + std), ("min", mean - std)):
            rows.append(row(t, "md", "mdtest", "file_creation", "rate", v, stat=stat))
    view = build_view(run_view(rows, ["a", "b", "c"]), {"view": "stats", "workload": "md", "title": "S"})
    # b beats a by 30 %, but not c, whose iterations spread ±300: no winner a rerun would keep
    assert [x for _, lines in tool_sentences([view], "a") for x in lines] == [
        "S: No target is clearly first or last on most of these. b is 30 % faster than a on file creation. "
        "No clear difference between c and a on it (none significant at 95 % and beyond 10%)."]
    assert single_run_note([view]) == ""  # mdtest's own iterations give the spread


def test_a_chart_view_is_concluded_per_swept_value_and_the_use_case_is_told():
    rows = [row(t, "nn", "nnbench", "rename", "rate", v * m + rep, maps=m, rep=rep)
            for t, v in (("hdfs", 10.0), ("s3a", 5.0)) for m in (1, 20, 100) for rep in (1, 2, 3)]
    view = build_view(run_view(rows, ["hdfs", "s3a"]), {"view": "chart", "workload": "nn", "param": "maps",
                                                        "per": "operation", "metrics": ["rate"], "title": "C"})
    said = tool_sentences([view], "hdfs", application="a Hadoop data lake")
    assert said[0][1][0] == ("C: hdfs leads (clearly first on 3 of 3). s3a is 1.7-2.0× slower than hdfs on "
                             "rename (maps=1), rename (maps=20) and rename (maps=100).")
    assert said[-1] == ("What it means", ["For the use case (a Hadoop data lake): on C, hdfs is the pick."])


def test_the_use_case_names_picks_and_the_tables_that_do_not_decide():
    assert voice.use_case_sentence("builds", [("A", "x", "z"), ("B", "", ""), ("C", "", "")]) == (
        "For the use case (builds): on A, x is the pick and avoid z; B and C do not decide between them.")
    assert voice.use_case_sentence("builds", [("B", "", "")]) == (
        "For the use case (builds): none of these tables decides between the targets at this run's precision.")
    assert voice.use_case_sentence("", [("A", "x", "")]) == ""


def test_amounts_read_as_percent_below_one_and_a_half_and_as_factors_above():
    assert voice.amount([1.12, 1.3]) == "12-30 %"
    assert voice.amount([0.8]) == "20 %"   # a bandwidth 20 % lower
    assert voice.amount([2.1, 4.26]) == "2.1-4.3×"
    assert voice.amount([0.5, 1 / 3.01]) == "2.0-3.0×"   # half and a third of the baseline's bandwidth


def test_one_target_has_nothing_to_compare():
    view = build_view(run_view([row("a", "w", "fio", "write", "bandwidth", 1.0)], ["a"]),
                      {"view": "table", "workload": "w"})
    assert view["measurements"] == [] and tool_sentences([view], "a") == [] and single_run_note([view]) == ""


def test_without_a_single_leader_the_front_group_and_those_behind_it_are_named():
    """Seed 000's shape: two engines about as fast as the baseline, two clearly slower on most items."""
    rows = []
    for op in ("mkdir", "rename", "unlink"):
        rows += _rows({"a": [100, 101, 99], "b": [99, 100, 101], "c": [100, 100, 100], "d": [40, 41, 39],
                       "e": [30, 31, 29]}, op=op)
    said = _said(rows, ["a", "b", "c", "d", "e"], application="builds")
    assert said[0].startswith("T: e trails (clearly last on 3 of 3); no single target leads: d and e are clearly "
                              "behind a on most of these, a, b and c are the front group."), said[0]
    assert said[-1] == "For the use case (builds): on T, pick among a, b and c and avoid d and e.", said[-1]
