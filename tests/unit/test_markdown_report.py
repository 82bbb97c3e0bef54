"""report.md: the HTML report's content as Markdown, built from the same context (same numbers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fsbench.core.tidy import measurement
from fsbench.report.context import build_context
from fsbench.report.markdown import code, escape, table, write_markdown_report
from fsbench.run.store import RunDir

SCENARIO = {
    "name": "md-check",
    "description": "Does the <Markdown> report carry everything?",
    "use_case": {"application": "CI of a | pipe-y app"},
    "targets": {"fast": {"path": "/mnt/fast", "description": "NVMe", "baseline": True},
                "slow": {"path": "/mnt/slow"}},
    "workloads": {"seq": {"tool": "fio", "options": {"rw": "write", "bs": "64k"}},
                  "rand": {"tool": "fio", "options": {"rw": "randread", "bs": "4k"}}},
}
REASON = "on local: `fio job.fio` exit status 3\n  fio: bad | thing\n  ```fence``` inside"


def make_run(root: Path) -> Path:
    """A run directory written by the real RunDir writer: two targets, a sweep, one failed case."""
    rd = RunDir.create(root, "md-check", SCENARIO)
    values = {("fast", "1"): 200e6, ("fast", "4"): 400e6, ("slow", "1"): 100e6, ("slow", "4"): 420e6}
    records, rows = [], []
    for (target, nj), bw in values.items():
        for rep in (1, 2):
            cid = f"{target}__seq__numjobs={nj}__r{rep}"
            records.append({"case_id": cid, "target": target, "workload": "seq", "tool": "fio", "repetition": rep,
                            "status": "ok", "reason": "", "hosts": "local", "params": {"numjobs": nj}})
            ctx = {"run_id": rd.run_id, "case_id": cid, "scenario": "md-check", "target": target,
                   "workload": "seq", "repetition": rep}
            bw_rep = bw * (1 + 0.01 * rep)
            rows += [{**ctx, **measurement("fio", "write", "bandwidth", bw_rep, host="local", job="seq")},
                     {**ctx, **measurement("fio", "write", "clat_mean", 1e6 / bw, host="local", job="seq")}]
    records += [{"case_id": "fast__rand__r1", "target": "fast", "workload": "rand", "tool": "fio", "repetition": 1,
                 "status": "ok", "reason": "", "hosts": "local", "params": {}},
                {"case_id": "slow__rand__r1", "target": "slow", "workload": "rand", "tool": "fio", "repetition": 1,
                 "status": "failed", "reason": REASON, "hosts": "local", "params": {}}]
    rows.append({"run_id": rd.run_id, "case_id": "fast__rand__r1", "scenario": "md-check", "target": "fast",
                 "workload": "rand", "repetition": 1, **measurement("fio", "read", "iops", 12345.0, host="local",
                                                                   job="rand")})
    rd.write_cases(records)
    rd.write_hosts([{"host": "local", "kernel": "6.1.0", "memory_bytes": 8 * 2**30, "fio_version": "fio-3.33"}])
    rd.write_results(rows)
    rd.manifest.update(status="failed", ended="2026-01-01T00:00:00+00:00")
    rd.save_manifest()
    return rd.path


@pytest.fixture
def run(tmp_path) -> Path:
    return make_run(tmp_path / "reports")


def test_report_md_has_the_html_reports_sections(run):
    out = write_markdown_report(run)
    assert out == run / "report.md"
    md = out.read_text()
    assert md.startswith("# md-check\n\nDoes the &lt;Markdown&gt; report carry everything?\n")
    assert f"Run `{run.name}`" in md and "status **failed**" in md
    assert "## Cases" in md and "10 cases: 9 ok, 1 failed" in md and "Baseline target **fast**" in md
    # the use case first (the evaluation guide asks for it), then conclusions, then the tables
    assert md.index("## Use case") < md.index("## Conclusions") < md.index("## seq") \
        < md.index("## All measurements") < md.index("## Environment")
    assert "## Use case" in md and "CI of a \\| pipe-y app" in md  # a pipe must not end the cell
    assert "## Environment" in md and "| **fast** (baseline) | `/mnt/fast` | NVMe |" in md
    assert "| **kernel** | 6.1.0 |" in md and "| **memory** | 8 GiB |" in md
    assert "## seq (fio)" in md and "`rw=write` `bs=64k`" in md and "## rand (fio)" in md
    assert "[results.csv](results.csv)" in md and "[cases.csv](cases.csv)" in md


def test_failed_cases_keep_their_whole_reason_in_a_fence(run):
    md = write_markdown_report(run).read_text()
    assert "### Cases that did not succeed" in md and "`slow__rand__r1`" in md
    block = md[md.index("````"):]
    assert "  fio: bad | thing" in block and "```fence``` inside" in block  # the longer fence keeps it whole


def test_every_number_is_the_contexts(run):
    md = write_markdown_report(run).read_text()
    ctx = build_context(run)
    cells = [c for w in ctx["workloads"] for t in w["tables"] for r in t["rows"] for c in r["cells"]]
    assert cells and all(escape(c["text"]) in md for c in cells)
    ratios = [c["ratio"] for c in cells if c["ratio"] and c["cls"]]
    assert ratios and all(c["ratio"][:-1] in md for c in cells if c["ratio"])
    # marks where the HTML colours, after the ratio and its 95 % interval
    assert re.search(r"\(2\.10( \[[^]]+\])? ✅\)", md) or re.search(r"\(0\.50( \[[^]]+\])? ❌\)", md)


def test_written_elsewhere_the_links_still_reach_the_run(run, tmp_path):
    (run / "report.html").write_text("<html></html>")
    out = write_markdown_report(run, output=tmp_path / "docs" / "bench.md", baseline="slow")
    md = out.read_text()
    assert out.parent.name == "docs" and "Baseline target **slow**" in md
    assert f"(../reports/{run.name}/results.csv)" in md and f"(../reports/{run.name}/report.html)" not in md
    assert "| **slow** (baseline) |" in md


def test_markdown_helpers():
    assert code("a`b") == "``a`b``" and code("x") == "`x`"
    assert escape("a<b>&") == "a&lt;b&gt;&amp;"
    assert table(["a", "b"], [["1|2", "x\ny"]], ["l", "r"]) == ["| a | b |", "| --- | ---: |",
                                                               "| 1\\|2 | x<br>y |", ""]


def test_a_view_without_data_keeps_its_place_and_says_why(tmp_path):
    from fsbench.report import write_report

    scenario = {**SCENARIO, "report": {"views": [
        {"view": "at", "workload": "seq", "param": "numjobs", "value": 16, "title": "At 16 jobs"},
        {"view": "table", "workload": "seq", "title": "Seq", "columns": "metrics"}]}}
    rd = RunDir.create(tmp_path / "reports", "md-check", scenario)
    run = make_run(tmp_path / "other")
    for name in ("results.csv", "results.parquet", "cases.csv", "hosts.csv"):
        (rd.path / name).write_bytes((run / name).read_bytes())
    rd.manifest.update(status="complete")
    rd.save_manifest()
    md = write_markdown_report(rd.path).read_text()
    html = write_report(rd.path).read_text()
    reason = "no case at numjobs=16 in this run (numjobs: 1, 4)"
    assert f"## At 16 jobs (fio)\n\n*{reason}*\n" in md
    assert f'<p class="empty muted">{reason}</p>' in html
    # a column per metric of each target, named by both in Markdown's single header row
    assert "|  | fast (baseline) · bandwidth | fast (baseline) · clat mean | slow · bandwidth | slow · clat mean |" in md
    assert '<th class="group" colspan="2">fast <span class="baseline">baseline</span></th>' in html


def test_the_report_is_the_same_whichever_storage_its_strings_have(run, monkeypatch):
    """The report builds its tables with Python-stored strings (report.html.STRING_STORAGE, faster on its many
    small frames than Arrow-stored ones): the same `str` dtype, so the same report, byte for byte."""
    import pandas as pd

    from fsbench.report import html

    assert html.STRING_STORAGE == "python"  # what a report uses
    seen = []
    real = html.build_context

    def noting(*args, **kwargs):
        seen.append(pd.get_option("mode.string_storage"))
        return real(*args, **kwargs)

    monkeypatch.setattr(html, "build_context", noting)
    pages = {}
    for storage in ("pyarrow", "python"):
        monkeypatch.setattr(html, "STRING_STORAGE", storage)
        pages[storage] = html.render_html(run)[0]
    assert seen == ["pyarrow", "python"] and pd.get_option("mode.string_storage") == "auto"
    assert pages["pyarrow"] == pages["python"] and "md-check" in pages["python"]
