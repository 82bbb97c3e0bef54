"""The `best` view as seed 004's Compare computes it: each target a % of the reference (RBD-SSD), capped at
100 and rounded down, and a system that worked never shown as 0 %."""

from __future__ import annotations

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.report.tool_views import percent_text
from fsbench.report.views import build_view
from fsbench.scenario.load import load_scenario_text
from tests.unit.reportkit import row, run_view

TARGETS = ["rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"]
#: seed 004's File creation rates, then one where RBD-HDD beats RBD-SSD and CephFS-SSD barely worked
RATES = {"file_creation": (54073.120, 1596.902, 52556.927, 29069.639),
         "file_stat": (83389.259, 980.843, 90000.0, 0.4)}


def _view(spec: dict) -> dict:
    rows = [row(t, "mdtest", "mdtest", op, "rate", v) for op, vals in RATES.items() for t, v in zip(TARGETS, vals)]
    return build_view(run_view(rows, TARGETS, baseline="rbd-ssd"), {"view": "best", "workload": "mdtest", **spec})


def _percents(table: dict) -> dict[str, str]:
    return {r["labels"][0]: r["cells"][1]["text"] for r in table["rows"]}


def test_percent_of_the_reference_is_capped_at_100_and_rounded_down_as_the_seed_does():
    create, stat = _view({"reference": "rbd-ssd"})["tables"]
    # the seed's own numbers and its own column: 2 % (2.95), 97 % (97.2), 53 % (53.8)
    assert _percents(create) == {"rbd-ssd": "100%", "cephfs-ssd": "2%", "rbd-hdd": "97%", "cephfs-hdd": "53%"}
    # RBD-HDD above RBD-SSD is 100 %, not 107 %; 0.4 op/s is a system that worked: <1 %, not 0 %
    assert _percents(stat) == {"rbd-ssd": "100%", "cephfs-ssd": "1%", "rbd-hdd": "100%", "cephfs-hdd": "<1%"}
    assert [r["cells"][1]["cls"] for r in stat["rows"]] == ["better", "", "better", ""]


def test_reference_baseline_is_the_reports_baseline_and_the_default_is_the_best():
    assert _percents(_view({"reference": "baseline"})["tables"][1])["rbd-ssd"] == "100%"
    by_best = _percents(_view({})["tables"][1])  # without a reference: % of the best (RBD-HDD here)
    assert by_best["rbd-ssd"] == "92%" and by_best["rbd-hdd"] == "100%"


def test_a_reference_without_a_value_falls_back_to_the_best_and_says_so():
    table = _view({"reference": "nowhere"})["tables"][1]
    assert table["head"][2] == "% of the best (nowhere: no value)"
    assert _percents(table)["rbd-hdd"] == "100%"


def test_percent_text_rounds_down_and_never_says_zero_for_a_value():
    assert [percent_text(p) for p in (100.0, 99.999999999, 99.97, 53.76, 1.0, 0.9, 0.0)] == \
        ["100%", "100%", "99%", "53%", "1%", "<1%", "0%"]


def test_a_reference_that_names_no_target_is_an_error_at_load(tmp_path):
    text = ("name: s\ntargets:\n  a: {path: " + str(tmp_path / "a") + "}\n  b: {path: " + str(tmp_path / "b")
                    + "}\nworkloads:\n  m: {tool: mdtest, options: {n: 10}}\nreport:\n  views:\n"
                    "    - {view: best, workload: m, reference: c}\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "s.yaml")
    issue = next(i for i in err.value.issues if "reference 'c' is no target" in i.message)
    assert issue.line == 9 and "known: best, baseline, a, b" in issue.hint
