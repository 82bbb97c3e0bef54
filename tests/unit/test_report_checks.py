"""`report.views` checked at load: a misspelled metric, an unknown tool, a parameter the workload does
not sweep or a value it never takes is an error with file:line, not a view that silently vanishes."""

from __future__ import annotations

import textwrap

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.scenario.load import load_scenario_text

BASE = """\
name: views
variables:
  scale: quick
  levels: {by: scale, smoke: [1, 20], quick: [1, 20, 100]}
targets:
  a: {path: /srv/a, baseline: true}
  b: {path: /srv/b}
workloads:
  w:
    tool: fio
    options: {rw: write, bs: 4k, size: 1m}
    sweep: {product: {numjobs: [1, 2, 4]}}
  lv:
    tool: fio
    options: {rw: read, bs: 4k, size: 1m}
    sweep: {product: {iodepth: "${levels}"}}
report:
  views:
"""


def load(views: str, sets: list[str] | None = None):
    text = BASE + textwrap.indent(textwrap.dedent(views), "    ")
    return load_scenario_text(text, "s.yaml", overrides=sets)


def issues(views: str, sets: list[str] | None = None) -> list[str]:
    with pytest.raises(ScenarioError) as err:
        load(views, sets)
    return [f"{i.line} {i.path}: {i.message} | {i.hint}" for i in err.value.issues]


def test_good_views_load():
    sc = load("""\
        - {view: table, workload: w, metrics: [bandwidth, iops], jobs: [w], columns: metrics}
        - {view: at, workload: w, param: numjobs, value: 4}
        - {view: table, workload: w, tool: juicefs-stats, metrics: [cpu_usage]}
        - {view: table, workload: w, tool: nnbench, metrics: [late_maps]}
        """)
    assert [v["view"] for v in sc.report.views] == ["table", "at", "table", "table"]
    assert sc.report.views[0]["columns"] == "metrics" and sc.report.views[0]["jobs"] == ["w"]


def test_misspelled_metrics_and_tools_are_named_with_a_suggestion():
    got = issues("""\
        - {view: table, workload: w, metrics: [bandwith, iops]}
        - {view: table, workload: w, tool: juicefs-profil}
        """)
    assert got[0].startswith("19 report.views[0].metrics[0]: fio gives no metric 'bandwith' | did you mean 'bandwidth'?")
    assert got[1].startswith("20 report.views[1].tool: unknown tool 'juicefs-profil' | did you mean "
                             "'juicefs-profile'?")
    assert len(got) == 2


def test_a_metric_is_checked_against_the_views_own_tool():
    got = issues("""\
        - {view: by_value, workload: w, param: numjobs, metrics: [late_maps, exec_time_mean, iops]}
        """)
    assert [g.split(" | ")[0] for g in got] == ["19 report.views[0].metrics[0]: fio gives no metric 'late_maps'",
                                                "19 report.views[0].metrics[1]: fio gives no metric 'exec_time_mean'"]
    assert "late_maps" not in got[0].split(" | ")[1]  # the hint lists fio's own metrics


def test_a_parameter_must_be_swept_and_a_value_one_it_takes():
    got = issues("""\
        - {view: by_value, workload: w, param: bs}
        - {view: at, workload: w, param: numjobs, value: 3}
        """)
    assert got == ["19 report.views[0].param: w does not sweep 'bs' | swept: numjobs",
                   "20 report.views[1].value: numjobs=3 is not among the values w sweeps | numjobs: 1, 2, 4"]


def test_a_value_swept_at_another_scale_is_not_an_error():
    # seed 002's 100 concurrent clients: swept at quick and full, not at smoke, where the report says so
    view = "- {view: at, workload: lv, param: iodepth, value: 100}\n"
    assert load(view, ["scale=smoke"]).workloads["lv"].sweep.product == {"iodepth": [1, 20]}
    assert issues("- {view: at, workload: lv, param: iodepth, value: 50}\n", ["scale=smoke"]) == [
        "19 report.views[0].value: iodepth=50 is not among the values lv sweeps | iodepth: 1, 20, 100"]
