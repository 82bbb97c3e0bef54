"""Each example campaign's report beside its seed, in a real Chromium at 1280 px: the seed's tables and
charts are there, in the seed's order and shape, and nothing is wider than the page.

The run directories are built from genuine tool outputs (tests/e2e/test_example_scenarios.build_run);
the numbers differ per target, so ratios and conclusions are real computations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsbench.report import write_report
from tests.conftest import require
from tests.e2e.test_example_scenarios import CEPH, JUICEFS, METABENCH_CALLS, METADATA, OSSFS, build_run
from tests.paths import REPO

META_ENGINES = REPO / "scenarios" / "meta-engines.yaml"
WIDTH = 1280
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    chromium = require("chromium")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=ARGS)
        yield b
        b.close()


def _open(browser, tmp_path: Path, scenario: Path, sets: list[str], extra_rows=None):
    run = build_run(tmp_path, scenario, sets, extra_rows=extra_rows)
    report = write_report(run)
    page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(report.as_uri(), wait_until="load")
    return page, errors


def _views(page) -> list[str]:
    return [t.split(" (")[0].strip() for t in page.locator("section.view > h2").all_inner_texts()]


def _fits(page) -> None:
    """No table and no chart reaches beyond the page at 1280 px, and the page does not scroll sideways."""
    over = page.evaluate("""() => [...document.querySelectorAll('table, figure svg')]
        .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
        .map(e => (e.closest('section') || {}).id + ' ' + Math.round(e.getBoundingClientRect().width))""")
    assert over == [], over
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH


def _first_order(page) -> None:
    ids = page.evaluate("""() => [...document.querySelectorAll('main > section')].map(s => s.id || s.className)""")
    first = [i for i in ids if i in ("use-case", "conclusions")]
    assert ids[:len(first)] == first and "conclusions" in ids  # the use case (when given), then conclusions
    assert page.locator("#conclusions li").count() >= 1  # sentences drawn from the numbers


def test_seed_000_meta_engines(browser, tmp_path):
    page, errors = _open(browser, tmp_path, META_ENGINES, ["scale=quick"])
    assert _views(page) == ["Metadata calls", "JuiceFS Bench", "mdtest", "fio"]  # the seed's four tables
    _first_order(page)
    heads = page.locator("section.view table.results").first.locator("th").all_inner_texts()
    assert [h.replace(" baseline", "") for h in heads[1:]] == ["redis-always", "redis-everysec", "sqlite",
                                                                "mariadb", "postgres", "etcd"]
    calls = page.locator("#view-meta-calls-table")
    ops = [r for r in calls.locator("tr td:first-child").all_inner_texts() if not r.startswith("client")]
    assert ops == ["Mkdir", "Mvdir", "Rmdir", "Readdir 10", "Readdir 1k", "Mknod", "Create", "Rename", "Unlink",
                   "Lookup", "Getattr", "Setattr", "Access", "Setxattr", "Getxattr", "Removexattr", "Listxattr 1",
                   "Listxattr 10", "Link", "Symlink", "Write", "Read 1", "Read 10"]  # seed 000's rows, its order
    mkdir = calls.locator("tr").nth(1).locator("td.num")
    made = json.loads(METABENCH_CALLS.read_text())["operations"][0]
    assert mkdir.nth(0).inner_text().startswith(f"{made['mean_ns'] / 1e3:.0f} µs")  # µs per call, as the seed's
    assert " ms" not in calls.inner_text() and "µs" in calls.inner_text()
    # 10 % slower than Redis-always: a latency ratio above 1 is worse (red), where a bandwidth's is better
    assert "(1.10)" in mkdir.nth(1).inner_text() and "worse" in (mkdir.nth(1).get_attribute("class") or "")
    bench = page.locator("#view-juicefs-bench-table tr").nth(1).locator("td.num").nth(1)
    assert "(1.10)" in bench.inner_text() and "better" in (bench.get_attribute("class") or "")
    bench_rows = page.locator("#view-juicefs-bench-table tr td:first-child").all_inner_texts()
    items = [r for r in bench_rows if not r.startswith("client")]
    natural = ["Write big file", "Read big file", "Write small file", "Read small file", "Stat file",
               "Fuse operation", "Update meta"]
    assert items == [n for n in natural if n in items] and len(items) >= 5  # the seed's items, its order
    sections = page.locator("#view-mdtest-meta-mdtest-small-files-table tr.section th").all_inner_texts()
    assert [s.split(" ")[0].lower() for s in sections] == ["empty", "small"]  # one table, two blocks
    assert "(1.10)" in page.locator("section.view td.num").nth(1).inner_text()  # ratio to Redis-always
    _fits(page)  # six engines side by side in 1280 px
    assert errors == []


def test_seed_001_fuse_clients(browser, tmp_path):
    from tests.e2e.test_example_scenarios import _ossfs_monitor_rows

    page, errors = _open(browser, tmp_path, OSSFS, ["scale=full"], extra_rows=_ossfs_monitor_rows)
    assert len(_views(page)) == 4
    for table in page.locator("section.view table.results.by_value").all():
        head = table.locator("th").all_inner_texts()
        assert head[1:] == ["bandwidth", "client CPU", "client peak memory"], head  # side by side
        assert [r.replace(" baseline", "") for r in table.locator("tr td:first-child").all_inner_texts()] == \
            ["ossfs-2", "ossfs-1"]
    write = page.locator("section.view table.results.by_value").first.inner_text()
    assert "207.0%" in write and "2.12 GiB" in write  # ossfs 2.0's CPU and peak memory, with ratios below
    _first_order(page)
    _fits(page)
    assert errors == []


def test_seed_002_metadata_curves(browser, tmp_path):
    page, errors = _open(browser, tmp_path, METADATA, ["scale=full"])
    assert _views(page) == ["TPS by concurrency, per system", "TPS by concurrency, per operation",
                            "Latency per operation at 20 concurrent clients", "Throughput at 100 concurrent clients",
                            "TPS by concurrency through the JuiceFS FUSE mount",
                            "Latency per operation at 20 threads through the JuiceFS FUSE mount"]
    per_system = page.locator("section.view").nth(0).locator("figure svg").count()
    per_operation = page.locator("section.view").nth(1).locator("figure svg").count()
    # a chart per system reached through Hadoop (NNBench), a chart per operation
    assert per_system == 3 and per_operation == 4
    assert page.locator("section.view").nth(2).locator("table.results").count() == 1
    assert page.locator("section.view").nth(2).locator("figure svg").count() == 1
    _fits(page)
    assert errors == []


def test_seed_003_evaluation_guide(browser, tmp_path):
    page, errors = _open(browser, tmp_path, JUICEFS, ["scale=full"])
    # the views of the synthetic run (no collector rows: profile and stats appear only in a real run)
    assert _views(page) == ["juicefs bench -p 4", "juicefs bench: time per file or operation by threads",
                            "juicefs objbench: functional checks", "juicefs objbench: performance",
                            "fio, 1 MiB, 4 jobs", "vdbench, three clients", "vdbench on one client"]
    _first_order(page)
    assert page.locator("#use-case dt").count() >= 6  # the guide's use-case checklist, first
    bench = page.locator("section.view").first
    assert bench.locator("span.verdict").count() >= 3 and bench.locator(".ratio").all_inner_texts() == \
        [""] * bench.locator(".ratio").count()  # one target: colours, no meaningless (1.00) ratios
    checks = page.locator("section.view").nth(2)
    assert checks.locator("td.worse").count() == 2 and checks.locator("td.better").count() == 11
    _fits(page)
    assert errors == []


def test_seed_004_cephfs_rbd(browser, tmp_path):
    page, errors = _open(browser, tmp_path, CEPH, ["scale=full"])
    assert _views(page) == ["Metadata Benchmark", "Compare", "Sequential Write", "Sequential Read",
                            "Random Write", "Random Read"]
    stats = page.locator("section.view").nth(0)
    assert stats.locator("h3").all_inner_texts() == ["rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"]
    assert stats.locator("table").first.locator("th").all_inner_texts() == \
        ["Operation", "Max IOPS", "Min IOPS", "Mean IOPS", "Std Dev"]
    compare = page.locator("section.view").nth(1)
    assert compare.locator("h3").first.inner_text() == "Directory creation"
    assert compare.locator("table").first.locator("th").all_inner_texts() == ["Name", "IOPS", "%"]
    write = page.locator("section.view").nth(2)
    assert write.locator("h3").all_inner_texts() == ["numjobs=1", "numjobs=4", "numjobs=16", "numjobs=64"]
    assert write.locator("table").first.locator("th").all_inner_texts()[:3] == ["", "iops", "bandwidth"]
    _first_order(page)
    _fits(page)
    assert errors == []
