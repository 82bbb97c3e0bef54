"""objbench in the report, from real outputs (juicefs 1.4.2 on fsbench-s3 and on a file store): a failed check
says why beside `failed`, and performance items a store does not support are rows saying so, as in the guide."""

from __future__ import annotations

import pandas as pd

from fsbench.analysis.summarise import summarise, with_baseline
from fsbench.report.conclusions import view_sentences
from fsbench.report.markdown import _value
from fsbench.report.rows import RunView
from fsbench.report.tables import Style
from fsbench.report.tool_views import checks_view
from fsbench.report.views import table_view
from fsbench.scenario.load import load_scenario
from fsbench.tools import TOOLS
from fsbench.tools.objbench.parse import parse_path
from tests.paths import GOLDEN, REPO

INPUTS = GOLDEN / "objbench" / "inputs"
STORES = {"s3": INPUTS / "juicefs-1.4.2_objbench_fsbench-s3_p2.txt", "file": INPUTS / "juicefs-1.4.2_objbench_file_p2.txt"}


def _view(stores: tuple[str, ...] = tuple(STORES)) -> RunView:
    rows = [{"case_id": f"{t}__objbench__r1", "target": t, "workload": "objbench", "repetition": 1, **r}
            for t in stores for r in parse_path(STORES[t]).rows]
    summary = with_baseline(summarise(pd.DataFrame(rows)), stores[0])
    tool = TOOLS.get("juicefs-objbench")
    return RunView(summary, list(stores), stores[0], Style(), tools={"objbench": tool},
                   tool_names={"objbench": "juicefs-objbench"})


def _row(table: dict, label: str) -> dict:
    return next(r for r in table["rows"] if r["labels"] == [label])


def test_a_failed_check_shows_the_tools_reason_beside_it():
    view = checks_view(_view(), {"view": "checks", "workload": "objbench", "title": "checks"})
    (table,) = view["tables"]
    s3, file = _row(table, "Get partial object")["cells"]
    assert (s3["text"], s3["cls"], s3["ratio"]) == ("failed", "worse", "(failed to get object with the offset out of r...)")
    assert (file["text"], file["ratio"]) == ("pass", "")
    assert _row(table, "Special key")["cells"][0]["ratio"].startswith("(list encode file failed: expect key ")
    assert [c["ratio"] for c in _row(table, "Change mtime")["cells"]] == ["", ""]  # not supported: nothing to say
    assert _value(s3) == "failed (failed to get object with the offset out of r... ❌)"  # report.md
    # the conclusions still count outcomes, not texts
    assert "checks on s3: 11 of 16 checks pass; failed: get partial object, special key; not supported: " \
           "change owner group, change permission, change mtime." in view_sentences(view)


def test_performance_items_a_store_does_not_support_are_rows_that_say_so():
    seed = load_scenario(REPO / "scenarios" / "juicefs-evaluation.yaml")  # seed 003's own view of them
    spec = next(dict(v) for v in seed.report.views if v.get("title") == "juicefs objbench: performance")
    (table,) = table_view(_view(), spec)["tables"]
    assert table["head"] == ["", "Value", "Cost", "Value", "Cost"]  # the guide's ITEM | VALUE | COST, per store
    for item in ("Change permissions", "Change owner group", "Update mtime"):
        cells = [c["text"] for c in _row(table, item)["cells"]]
        assert cells[:2] == ["not supported", "not supported"], item
        assert "not supported" not in cells[2:] and all(c != "–" for c in cells[2:]), item
    assert [c["text"] for c in _row(table, "Upload objects")["cells"]][0] == "263 MiB/s"
    # seed 003 has one store: its three unsupported items are three rows, not one taken for a repeat
    (alone,) = table_view(_view(("s3",)), spec)["tables"]
    assert [r["labels"][0] for r in alone["rows"] if r["cells"][0]["text"] == "not supported"] == [
        "Change permissions", "Change owner group", "Update mtime"]
