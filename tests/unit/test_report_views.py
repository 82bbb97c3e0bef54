"""The report's views: rows per (job, operation), jobs picked by a view, metrics as columns, sweeps,
tables split to fit the page, the default views, and why an empty view is empty."""

from __future__ import annotations

import re

import pytest

from fsbench.ingest import parser_for
from fsbench.report.absent import why_empty
from fsbench.report.layout import split_wide
from fsbench.report.spec import default_views
from fsbench.report.views import build_view
from tests.paths import FIXTURES
from tests.unit.reportkit import row, run_view

MANY_RDS = FIXTURES / "public" / "vdbench" / "masakioui-vdb_oceanstor" / "50407_sd_multihost_many_rds"


def _numbers(view: dict) -> dict[str, list[float]]:
    """label -> the values of its cells, from every table of a view."""
    return {r["labels"][0]: [c["value"] for c in r["cells"]] for t in view["tables"] for r in t["rows"]
            if r.get("labels")}


def test_every_vdbench_run_definition_keeps_its_own_row():
    parsed = parser_for("vdbench")(MANY_RDS)
    rows = []
    for target, factor in (("a", 1.0), ("b", 2.0)):
        rows += [{**r, "case_id": f"{target}__w__r1", "target": target, "workload": "w", "repetition": 1,
                  "host": "h1", "value": r["value"] * factor} for r in parsed.rows if not r.get("host")]
    rv = run_view(rows, ["a", "b"])
    view = build_view(rv, {"view": "table", "workload": "w", "metrics": ["rate"]})
    shown = _numbers(view)
    want = {(r["job"], r["operation"]): r["value"] for r in parsed.rows
            if not r.get("host") and r["metric"] == "rate" and r["stat"] == "mean"}
    jobs = list(dict.fromkeys(j for j, _ in want))
    assert len(jobs) == 38
    assert len(shown) == len(want)  # one row per run definition and operation, none collapsed
    for (job, op), value in want.items():
        label = f"{job.replace('_', ' ')} · {op.capitalize()}"
        assert shown[label] == pytest.approx([value, 2 * value]), label
    # in the order vdbench ran them
    assert [lab.split(" · ")[0] for lab in shown][::1] == [j.replace("_", " ") for j, _ in want]
    # one measurement per run definition and operation: what the conclusions count
    assert len(view["measurements"]) == len(want)


def test_the_format_run_and_the_read_run_are_two_rows_and_a_view_picks_jobs():
    # vdbench's format pass opens files too: the guide's 627 read opens are rd1's, not format_for_rd1's
    rows = [row("a", "w", "vdbench", "create", "rate", 498, job="format_for_rd1", stat="mean"),
            row("a", "w", "vdbench", "open", "rate", 498, job="format_for_rd1", stat="mean"),
            row("a", "w", "vdbench", "open", "rate", 627, job="rd1", stat="mean"),
            row("a", "w", "vdbench", "read", "rate", 9000, job="rd1", stat="mean")]
    rv = run_view(rows, ["a"])
    both = _numbers(build_view(rv, {"view": "table", "workload": "w", "operations": ["create", "open"]}))
    assert both == {"format for rd1 · Create": [498], "format for rd1 · Open": [498], "rd1 · Open": [627]}
    picked = _numbers(build_view(rv, {"view": "table", "workload": "w", "jobs": ["rd1"]}))
    assert picked == {"Open": [627], "Read": [9000]}  # one job: no job names in the labels
    # the job order is the view's
    order = build_view(rv, {"view": "table", "workload": "w", "jobs": ["rd1", "format_for_rd1"]})
    labels = [r["labels"][0] for r in order["tables"][0]["rows"]]
    assert labels == ["rd1 · Read", "rd1 · Open", "format for rd1 · Create", "format for rd1 · Open"]  # vdbench's order


def test_fio_job_sections_in_by_value_columns():
    rows = [row(t, "w", "fio", "write", "bandwidth", bw, job=job, numjobs=n)
            for t, f in (("a", 1), ("b", 2)) for job, bw in (("seq", 100.0 * f), ("rand", 10.0 * f)) for n in (1, 4)]
    rv = run_view(rows, ["a", "b"])
    view = build_view(rv, {"view": "by_value", "workload": "w", "param": "numjobs", "metrics": ["bandwidth"]})
    assert [t["title"] for t in view["tables"]] == ["numjobs=1", "numjobs=4"]
    assert view["tables"][0]["head"] == ["", "seq · write bandwidth", "rand · write bandwidth"]
    assert [c["value"] for c in view["tables"][0]["rows"][1]["cells"]] == [200.0, 20.0]


def test_metrics_as_columns_follow_the_tools_own_columns():
    bench = [("write_big_file", "bandwidth", 300e6), ("write_big_file", "latency_mean", 0.2),
             ("stat_file", "rate", 5000.0), ("stat_file", "latency_mean", 0.001), ("fuse_operation", "latency_mean", 4e-4)]
    rows = [row("jfs", "bench", "juicefs-bench", op, m, v) for op, m, v in bench]
    rv = run_view(rows, ["jfs"])
    view = build_view(rv, {"view": "table", "workload": "bench", "columns": "metrics"})
    table = view["tables"][0]
    assert table["head"] == ["", "Value", "Cost"]  # juicefs bench's ITEM | VALUE | COST
    assert [(r["labels"][0], [c["text"] for c in r["cells"]]) for r in table["rows"]] == [
        ("Write big file", ["286 MiB/s", "200 ms"]), ("Stat file", ["5k op/s", "1 ms"]),
        ("Fuse operation", ["–", "400 µs"])]
    # several targets: each target's Value and Cost side by side, a header row of targets above
    rows += [{**r, "target": "jfs2", "case_id": r["case_id"].replace("jfs", "jfs2"), "value": r["value"] * 2}
             for r in rows]
    two = build_view(run_view(rows, ["jfs", "jfs2"]), {"view": "table", "workload": "bench", "columns": "metrics"})
    t2 = two["tables"][0]
    assert t2["groups"] == ["jfs", "jfs2"] and t2["per_target"] == 2 and t2["head"] == ["", "Value", "Cost", "Value", "Cost"]
    assert [c["ratio"] for c in t2["rows"][0]["cells"]] == ["(1.00)", "(1.00)", "(2.00)", "(2.00)"]
    assert [c["cls"] for c in t2["rows"][0]["cells"]][2:] == ["better", "worse"]  # twice the time is worse


def test_juicefs_bench_of_six_engines_is_the_seeds_table_then_a_cost_table():
    """Seed 000's JuiceFS Bench: seven rows, one value per engine with its ratio to the baseline (the cost
    of FUSE operation and Update meta, which have no rate), every engine in one table; the costs follow."""
    engines = ["redis-always", "redis-everysec", "sqlite", "mariadb", "postgres", "etcd"]
    items = [("write_big_file", "bandwidth", 300e6), ("read_big_file", "bandwidth", 350e6),
             ("write_small_file", "rate", 26.0), ("read_small_file", "rate", 1400.0), ("stat_file", "rate", 6700.0)]
    rows = []
    for n, e in enumerate(engines, 1):
        for i, (op, metric, v) in enumerate(items, 1):
            rows += [row(e, "bench", "juicefs-bench", op, metric, v * n), row(e, "bench", "juicefs-bench", op,
                                                                                 "latency_mean", 0.01 * n * i)]
        rows += [row(e, "bench", "juicefs-bench", op, m, v) for op, m, v in (
            ("fuse_operation", "ops", 1000.0), ("fuse_operation", "latency_mean", 4.5e-4 * n),
            ("update_meta", "ops", 300.0), ("update_meta", "latency_mean", 1.04e-3 * n))]
    view = build_view(run_view(rows, engines), {"view": "table", "workload": "bench", "columns": "metrics"})
    main, cost = view["tables"]
    natural = ["Write big file", "Read big file", "Write small file", "Read small file", "Stat file",
               "Fuse operation", "Update meta"]
    assert main["head"] == ["", *engines] and main["targets"] == engines and main["title"] == ""
    assert [r["labels"][0] for r in main["rows"]] == natural
    assert [r["metric"] for r in main["rows"]] == ["bandwidth"] * 2 + ["rate"] * 3 + ["latency_mean"] * 2
    assert [c["ratio"] for c in main["rows"][2]["cells"]] == [f"({n:.2f})" for n in range(1, 7)]
    assert [c["text"] for c in main["rows"][6]["cells"]][:2] == ["1.04 ms", "2.08 ms"]
    assert cost["title"] == "Cost" and cost["head"] == ["", *engines]
    assert [r["labels"][0] for r in cost["rows"]] == natural
    assert [c["text"] for c in cost["rows"][0]["cells"]][:2] == ["10 ms", "20 ms"]
    assert "per_target" not in main and "groups" not in main
    parts = [p for t in view["tables"] for p in split_wide(t, "redis-always")]
    assert len(parts) == 2 and not any("part" in p["title"].lower() for p in parts)  # never Part 1 of 2
    assert sum(m is not None for m in view["measurements"]) == 7  # each item measured once, not per table


def test_a_best_view_on_a_swept_workload_shows_every_value():
    rows = [row(t, "w", "fio", "read", "iops", v * n, numjobs=n) for t, v in (("a", 100.0), ("b", 50.0))
            for n in (1, 4, 16)]
    view = build_view(run_view(rows, ["a", "b"]), {"view": "best", "workload": "w"})
    assert [t["title"] for t in view["tables"]] == ["Read · numjobs=1", "Read · numjobs=4", "Read · numjobs=16"]
    assert [[c["text"] for c in r["cells"]] for r in view["tables"][2]["rows"]] == [["1.6k op/s", "100%"],
                                                                                    ["800 op/s", "50%"]]


def test_split_keeps_the_baseline_in_every_part_and_names_the_parts():
    targets = ["t1", "t2", "t3", "base", "t5", "t6", "t7"]
    table = {"kind": "compare", "title": "write", "head": ["", *targets], "targets": targets,
             "rows": [{"labels": ["x"], "cells": [{"text": t} for t in targets]}]}
    parts = split_wide(table, "base")
    assert [p["targets"] for p in parts] == [["base", "t1", "t2", "t3", "t5", "t6"], ["base", "t7"]]
    assert [p["title"] for p in parts] == ["write · part 1 of 2", "write · part 2 of 2"]
    for p in parts:  # each cell still under its own target's column
        assert [c["text"] for c in p["rows"][0]["cells"]] == p["targets"] == p["head"][1:]
    untitled = split_wide({**table, "title": ""}, "base")
    assert [p["title"] for p in untitled] == ["Part 1 of 2", "Part 2 of 2"]
    # two columns per target (metrics as columns): fewer targets per part, their columns kept together
    wide = {**table, "head": ["", *(["v", "c"] * 7)], "per_target": 2, "groups": targets,
            "rows": [{"labels": ["x"], "cells": [{"text": f"{t}:{k}"} for t in targets for k in "vc"]}]}
    parts = split_wide(wide, "base")
    assert all(p["targets"][0] == "base" and len(p["targets"]) <= 4 for p in parts)
    assert parts[0]["rows"][0]["cells"][:3] == [{"text": "base:v"}, {"text": "base:c"}, {"text": "t1:v"}]
    assert parts[0]["groups"] == parts[0]["targets"]
    assert split_wide({**table, "targets": targets[:6], "head": ["", *targets[:6]]}, "base")[0]["title"] == "write"


def test_default_views_follow_the_tools_and_the_sweep():
    rows = [row(t, "swept", "fio", "write", "bandwidth", 1e8, numjobs=n) for t in "ab" for n in (1, 2, 4)]
    rows += [row(t, "two", "fio", "write", "bandwidth", 1e8, numjobs=n) for t in "ab" for n in (1, 2)]
    rows += [row(t, "meta", "mdtest", "file_creation", "rate", 1e4, stat=s) for t in "ab" for s in ("mean", "max")]
    rows += [row(t, "meta", "juicefs-stats", "fuse", "rate", 10.0, job="stats", stat="mean") for t in "ab"]
    rv = run_view(rows, ["a", "b"], tools={"swept": "fio", "two": "fio", "meta": "mdtest"})
    got = [(v["view"], v["workload"], v.get("param"), v.get("tool")) for v in default_views(rv, ["swept", "two",
                                                                                                  "meta", "none"])]
    assert got == [("by_value", "swept", "numjobs", None), ("chart", "swept", "numjobs", None),
                   ("by_value", "two", "numjobs", None),
                   ("chart", "two", "numjobs", None),  # two values are a line too (issue 27: a picture by default)
                   ("table", "meta", None, None), ("stats", "meta", None, None), ("best", "meta", None, None),
                   ("table", "meta", None, "juicefs-stats")]
    assert default_views(rv, ["meta"])[-1]["columns"] == "metrics"
    # a tool with its own table's columns gets them by default: juicefs bench's ITEM | VALUE | COST
    bench = [row(t, "jb", "juicefs-bench", "write_big_file", m, v) for t in "ab"
             for m, v in (("bandwidth", 1e8), ("latency_mean", 0.01))]
    rvb = run_view(bench, ["a", "b"], tools={"jb": "juicefs-bench"})
    (table,) = [v for v in default_views(rvb, ["jb"]) if v["view"] == "table"]
    assert table["columns"] == "metrics" and "columns" not in default_views(rv, ["meta"])[0]
    built = build_view(rvb, table)
    assert [h for h in built["tables"][0]["head"] if h in ("Value", "Cost")][:2] == ["Value", "Cost"]


def test_a_default_chart_holds_every_target_when_each_has_one_line():
    # one operation: a chart per target would be one line each; one chart with a line per target compares
    one = [row(t, "w", "fio", "read", "bandwidth", 1e8 * n, numjobs=n) for t in "abc" for n in (1, 2, 4)]
    rv = run_view(one, ["a", "b", "c"])
    spec = next(v for v in default_views(rv, ["w"]) if v["view"] == "chart")
    assert spec["per"] == "operation"
    charts = build_view(rv, spec)["charts"]
    assert [c["title"] for c in charts] == ["Read: bandwidth by numjobs"]
    assert all(f">{t}<" in charts[0]["svg"] for t in "abc")  # a line per target, named in the legend
    # two operations per target: a chart per target, a line per operation (seed 002's shape)
    two = one + [row(t, "w", "fio", "write", "bandwidth", 5e7 * n, numjobs=n) for t in "abc" for n in (1, 2, 4)]
    rv2 = run_view(two, ["a", "b", "c"])
    spec2 = next(v for v in default_views(rv2, ["w"]) if v["view"] == "chart")
    assert spec2["per"] == "target"
    assert [c["title"] for c in build_view(rv2, spec2)["charts"]] == [f"{t}: bandwidth by numjobs" for t in "abc"]


CASES = [{"case_id": "a__v__r1", "workload": "v", "tool": "vdbench", "status": "skipped",
          "reason": "vdbench is not installed on local (`vdbench -t` failed): `fsbench deploy` puts it there"},
         {"case_id": "a__n__maps=1__r1", "workload": "n", "tool": "nnbench", "status": "ok", "param_maps": "1"},
         {"case_id": "a__n__maps=20__r1", "workload": "n", "tool": "nnbench", "status": "ok", "param_maps": "20"},
         {"case_id": "a__f__r1", "workload": "f", "tool": "fio", "status": "failed", "reason": "exit 1\nmore"}]


@pytest.mark.parametrize(("spec", "reason"), [
    ({"view": "table", "workload": "v"}, "not run: vdbench is not installed on local (`vdbench -t` failed): "
                                         "`fsbench deploy` puts it there (vdbench is bring-your-own)"),
    ({"view": "at", "workload": "n", "param": "maps", "value": 100}, "no case at maps=100 in this run (maps: 1, 20)"),
    ({"view": "table", "workload": "n", "tool": "juicefs-profile"},
     "no juicefs-profile rows beside n in this run (no collector of it ran there)"),
    ({"view": "table", "workload": "f"}, "failed: exit 1"),
    ({"view": "table", "workload": "gone"}, "no case of gone in this run"),
    ({"view": "chart", "workload": "n", "param": "threads"}, "n does not sweep threads in this run"),
])
def test_an_empty_view_says_why(spec, reason):
    from fsbench.tools import TOOLS

    rv = run_view([row("a", "n", "nnbench", "rename", "rate", 5.0, maps=m) for m in (1, 20)], ["a"])
    assert why_empty(spec, CASES, rv.summary, {"v": TOOLS.get("vdbench"), "n": TOOLS.get("nnbench")}) == reason


def test_a_title_that_names_its_tool_gets_no_second_suffix():
    rv = run_view([row("a", "m", "metabench", "rename", "rate", 5.0)], ["a"])
    assert build_view(rv, {"view": "table", "workload": "m", "title": "TPS (metabench)"})["tool"] == ""
    assert build_view(rv, {"view": "table", "workload": "m", "title": "TPS"})["tool"] == "metabench"


def test_stats_and_profile_views_in_their_columns():
    rows = [row("jfs", "bench", "juicefs-profile", op, m, v, job="profile", threads=n)
            for n in (1, 4) for op, m, v in (("write", "ops", 33168.0), ("write", "latency_mean", 45e-6),
                                             ("write", "time", 1.5), ("flush", "ops", 808.0),
                                             ("flush", "latency_mean", 0.05), ("flush", "time", 40.0))]
    rows += [row("jfs", "bench", "juicefs-bench", "stat_file", "rate", 100.0, threads=n) for n in (1, 4)]
    rv = run_view(rows, ["jfs"], tools={"bench": "juicefs-bench"})
    view = build_view(rv, {"view": "at", "workload": "bench", "param": "threads", "value": 4,
                           "tool": "juicefs-profile", "columns": "metrics"})
    table = view["tables"][0]
    assert table["head"] == ["", "Count", "Average", "Total"]
    # juicefs profile's order: the most total time first
    assert [(r["labels"][0], [c["text"] for c in r["cells"]]) for r in table["rows"]] == [
        ("Flush", ["808", "50 ms", "40 s"]), ("Write", ["33.2k", "45 µs", "1.5 s"])]
    assert re.fullmatch(r"bench · at threads=4", view["title"]) and view["tool"] == "juicefs-profile"


def test_a_tool_declares_which_of_its_metrics_are_better_big():
    from fsbench.api.tools import better_big
    from fsbench.tools import TOOLS

    assert better_big("functional", TOOLS.get("juicefs-objbench"))  # objbench: 1 pass beats -1 failed
    assert not better_big("exceptions", TOOLS.get("nnbench"))  # its own count of problems
    assert better_big("rate", TOOLS.get("nnbench")) and not better_big("latency_mean", TOOLS.get("fio"))
    assert not better_big("functional")  # without the tool: not a metric of the vocabulary
