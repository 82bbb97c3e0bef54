"""Each example campaign's report beside its seed, in a real Chromium at 1280 px: the seed's tables and
charts are there, in the seed's order and shape, and nothing is wider than the page.

The run directories are built from genuine tool outputs (tests/e2e/test_example_scenarios.build_run);
the numbers differ per target, so ratios and conclusions are real computations.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from fsbench.collectors import COLLECTORS
from fsbench.core.tidy import measurement
from fsbench.kinds import KINDS
from fsbench.report import write_report
from fsbench.scenario.load import load_scenario
from tests.conftest import require
from tests.e2e.test_example_scenarios import CEPH, JUICEFS, METABENCH_CALLS, METADATA, OSSFS, build_run
from tests.paths import GOLDEN, REPO

META_ENGINES = REPO / "scenarios" / "meta-engines.yaml"
S3_FUSE = REPO / "scenarios" / "s3-fuse-clients.yaml"
COLLECTED = GOLDEN / "collectors" / "inputs"
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


def _open(browser, tmp_path: Path, scenario: Path, sets: list[str], extra_rows=None, *, default_views: bool = False,
          **build):
    """The report of a run built from genuine outputs (`build`: more of build_run's keywords), in a page."""
    run = build_run(tmp_path, scenario, sets, extra_rows=extra_rows, **build)
    if default_views:  # each tool's own shapes, as a scenario without `report.views` gets them
        data = yaml.safe_load((run / "scenario.yaml").read_text())
        data["report"].pop("views")
        (run / "scenario.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
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


def _legible(page) -> None:
    """No two texts of a chart overlap: axis labels, tick labels, title and legend each readable."""
    clashes = page.evaluate("""() => {
        const out = [];
        document.querySelectorAll('section.view figure svg').forEach(svg => {
            const texts = [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBoundingClientRect()])
                .filter(x => x[1].width > 0 && x[1].height > 0);
            for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
                const a = texts[i][1], b = texts[j][1];
                const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
                const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
                if (x > 1 && y > 1) out.push(svg.closest('section').id + ': ' + texts[i][0] + ' x ' + texts[j][0]);
            }
        });
        return out;
    }""")
    assert clashes == [], clashes[:10]
    assert page.locator("section.view figure svg text").count() > 0 or \
        page.locator("section.view figure svg").count() == 0


def _first_order(page) -> None:
    ids = page.evaluate("""() => [...document.querySelectorAll('main > section')].map(s => s.id || s.className)""")
    first = [i for i in ids if i in ("summary", "use-case", "conclusions")]
    # the one-page summary, the use case (when given), then conclusions
    assert ids[:len(first)] == first and first[0] == "summary" and "conclusions" in ids
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
    # µs per call, as the seed's: the mean of 3 rounds (build_run's repetitions are 0 %, 2 % and 4 % apart)
    assert mkdir.nth(0).inner_text().startswith(f"{made['mean_ns'] * 1.02 / 1e3:.0f} µs")
    assert " ms" not in calls.inner_text() and "µs" in calls.inner_text()
    # 10 % slower than Redis-always: a latency ratio above 1 is worse (red), where a bandwidth's is better
    assert "(1.10)" in mkdir.nth(1).inner_text() and "worse" in (mkdir.nth(1).get_attribute("class") or "")
    # seed 000's JuiceFS Bench: one value per engine, all six side by side with their ratios to Redis-always
    # (never "Part 1 of 2"), then juicefs bench's COST column as a table of its own
    bench = page.locator("#view-juicefs-bench-table table.results")
    assert bench.count() == 2
    assert page.locator("#view-juicefs-bench-table h3").all_inner_texts() == ["Cost"]
    for table in bench.all():
        heads = [h.replace(" baseline", "") for h in table.locator("th").all_inner_texts()]
        assert heads == ["", "redis-always", "redis-everysec", "sqlite", "mariadb", "postgres", "etcd"]
    small = bench.first.locator("tr", has_text="Write small file").locator("td.num")
    assert "(1.10)" in small.nth(1).inner_text() and "better" in (small.nth(1).get_attribute("class") or "")
    cost = bench.nth(1).locator("tr", has_text="Write small file").locator("td.num")
    assert "(1.10)" in cost.nth(1).inner_text() and "worse" in (cost.nth(1).get_attribute("class") or "")
    natural = ["Write big file", "Read big file", "Write small file", "Read small file", "Stat file",
               "Fuse operation", "Update meta"]
    for table in bench.all():
        items = [r for r in table.locator("tr td:first-child").all_inner_texts() if not r.startswith("client")]
        assert items == [n for n in natural if n in items] and len(items) >= 5  # the seed's items, its order
    sections = page.locator("#view-mdtest-meta-mdtest-small-files-table tr.section th").all_inner_texts()
    assert [s.split(" ")[0].lower() for s in sections] == ["empty", "small"]  # one table, two blocks
    assert "(1.10)" in page.locator("section.view td.num").nth(1).inner_text()  # ratio to Redis-always
    conclusions = page.locator("#conclusions li").all_inner_texts()
    # per table in words, paired by round: redis-everysec's 10 % is within the floor, etcd's 1.5x is not
    assert conclusions[0].startswith("Metadata calls (µs per call): ")
    assert "etcd is 1.5× slower than redis-always on 23 of 23." in conclusions[0]
    assert "No clear difference between redis-everysec and redis-always on any of the 23" in conclusions[0]
    assert not any("best on" in c for c in conclusions)  # no more counts
    _fits(page)  # six engines side by side in 1280 px
    _legible(page)
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
    assert "207%" in write and "2.12 GiB" in write  # ossfs 2.0's CPU and peak memory (as the seed writes them)
    _first_order(page)
    _fits(page)
    _legible(page)
    assert errors == []


def _client_rows(scenario: Path):
    """Monitor rows of each target's own client process (as case_run's monitor records them), each
    target's a different CPU and memory, and a process of no target's beside them."""
    sc = load_scenario(scenario)
    clients = {n: t.client_process or KINDS.get(t.kind).client_process for n, t in sc.targets.items()}

    def rows(case) -> list[dict]:
        k = list(clients).index(case.target) + 1
        host = case.hosts[0]
        return [measurement("monitor", "process", "cpu_usage", 40.0 * k, host=host, job=clients[case.target],
                            stat="mean"),
                measurement("monitor", "process", "memory_peak", 100 * k * 2**20, host=host,
                            job=clients[case.target], stat="max"),
                measurement("monitor", "process", "cpu_usage", 5.0, host=host, job="fsbench-s3", stat="mean")]

    return clients, rows


def test_seed_001_the_real_campaign_s3_fuse_clients(browser, tmp_path):
    clients, rows = _client_rows(S3_FUSE)
    assert set(clients.values()) == {"s3fs", "rclone", "juicefs"}
    # its hosts are this machine's (the example inventory has no `client` group)
    page, errors = _open(browser, tmp_path, S3_FUSE, ["scale=quick"], extra_rows=rows, inventory=None)
    assert _views(page) == ["Sequential write of one big file, one thread", "Sequential read of one big file, one thread",
                            "The same big file read again, the client's own cache kept",
                            "Sequential read, 4 threads, 4 files",  # its "(...)" is shown apart
                            "Writing many 128 KiB files, many threads", "Reading many 128 KiB files, many threads"]
    for table in page.locator("section.view table.results.by_value").all():
        head = table.locator("th").all_inner_texts()
        assert head[1] == "bandwidth" and head[-2:] == ["client CPU", "client peak memory"], head
        assert [r.replace(" baseline", "") for r in table.locator("tr td:first-child").all_inner_texts()] == \
            list(clients)
        cpu = [c.split("\n")[0] for c in table.locator("tr").nth(2).locator("td.num").all_inner_texts()]
        assert cpu[-2:] == ["80%", "200 MiB"]  # rclone's own process, not the S3 server's
    _first_order(page)
    _fits(page)
    _legible(page)
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
    conclusions = page.locator("#conclusions li").all_inner_texts()
    # one run per case: nothing a rerun could reverse is stated, and the report says why
    assert conclusions[0] == ("TPS by concurrency, per system: No clear difference between the targets on any of "
                              "the 24 (none differs from hdfs significantly at 95 % and by more than 10%).")
    assert conclusions[-1].startswith("Each value comes from a single run")
    _fits(page)
    _legible(page)
    assert errors == []


def test_seed_002_at_smoke_scale_says_which_view_has_no_case(browser, tmp_path):
    page, errors = _open(browser, tmp_path, METADATA, ["scale=smoke"])
    assert "Throughput at 100 concurrent clients" in _views(page)  # in its place, saying why it is empty
    empty = page.locator("section.view", has_text="Throughput at 100 concurrent clients").locator("p.empty")
    assert empty.inner_text() == "no case at maps=100 in this run (maps: 1, 20)"
    assert errors == []


def _collector_rows(case) -> list[dict]:
    """What the scenario's juicefs stats and juicefs profile collectors give beside juicefs bench and fio:
    their parsers over real outputs (juicefs 1.4.2, `juicefs bench -p 1`'s access log and its replay)."""
    if case.target != "juicefs" or case.tool not in ("juicefs-bench", "fio"):
        return []
    stats = COLLECTORS.get("juicefs-stats").parse(SimpleNamespace(name="stats", interval_s=1.0), (
        COLLECTED / "juicefs-1.4.2_stats_verbosity1.txt").read_text(), None, case.hosts[0])
    profile = COLLECTORS.get("juicefs-profile").parse(SimpleNamespace(name="profile"), (
        COLLECTED / "juicefs-1.4.2_accesslog_bench_p1.txt").read_text(), (
        COLLECTED / "juicefs-1.4.2_profile_interval0.txt").read_text(), case.hosts[0])
    return stats.rows + profile.rows


GUIDE = ["juicefs bench -p 4", "juicefs bench: time per file or operation by threads",
         "juicefs objbench: functional checks", "juicefs objbench: performance",
         "juicefs stats during juicefs bench -p 4", "juicefs profile during juicefs bench -p 4",
         "fio, 1 MiB, 4 jobs", "juicefs stats during fio", "vdbench, three clients: files created and opened per second",
         "vdbench on one client"]


def test_seed_003_evaluation_guide(browser, tmp_path):
    page, errors = _open(browser, tmp_path, JUICEFS, ["scale=full"], extra_rows=_collector_rows)
    # the guide's order: juicefs bench, objbench, juicefs stats and profile watched during juicefs bench, fio,
    # vdbench (and juicefs stats during fio, data fsbench has too)
    assert _views(page) == GUIDE
    _first_order(page)
    assert page.locator("#use-case dt").count() >= 6  # the guide's use-case checklist, first
    bench = page.locator("section.view").first
    assert bench.locator("tr").first.locator("th").all_inner_texts() == ["", "Value", "Cost"]  # ITEM | VALUE | COST
    assert bench.locator("span.verdict").count() >= 3 and bench.locator(".ratio").all_inner_texts() == \
        [""] * bench.locator(".ratio").count()  # one target: colours, no meaningless (1.00) ratios
    checks = page.locator("section.view").nth(2)
    assert checks.locator("td.worse").count() == 2 and checks.locator("td.better").count() == 11
    stats = page.locator("section.view").nth(4)
    assert stats.locator("tr").first.locator("th").all_inner_texts() == ["", "Ops", "Throughput", "Latency", "CPU",
                                                                         "Memory"]
    assert stats.locator("tr td:first-child").all_inner_texts()[:3] == ["Client", "Client buf", "Client cache"]
    assert stats.locator("tr", has_text="Fuse").first.locator("td.num").first.inner_text() == "51.3 op/s"
    profile = page.locator("section.view").nth(5)
    assert profile.locator("tr").first.locator("th").all_inner_texts() == ["", "Count", "Average", "Total"]
    # juicefs profile's own order, the most total time first: the log of `juicefs bench -p 1`
    assert profile.locator("tr td:first-child").all_inner_texts()[:3] == ["Open", "Read", "Write"]
    vdbench = page.locator("section.view").nth(8)
    assert vdbench.locator("tr td:first-child").all_inner_texts() == ["format for rd1 · Create",
                                                                     "format for rd1 · Open", "rd1 · Open"]
    assert page.locator("section.view").nth(9).locator("tr td:first-child").count() >= 2 * 38  # every RD
    _fits(page)
    _legible(page)
    assert errors == []


def test_seed_003_without_vdbench_keeps_its_views_with_the_reason(browser, tmp_path):
    def skipped(case):
        if case.tool == "vdbench":
            return ("skipped", "vdbench is not installed on local (`/opt/vdbench/vdbench -t` failed): "
                               "`fsbench deploy` puts it there, or remove the workload")
        return None

    page, errors = _open(browser, tmp_path, JUICEFS, ["scale=smoke"], status_of=skipped, inventory=None)
    assert _views(page)[-2:] == GUIDE[-2:]
    for n in (-2, -1):
        assert page.locator("section.view").nth(n).locator("p.empty").inner_text() == (
            "not run: vdbench is not installed on local (`/opt/vdbench/vdbench -t` failed): `fsbench deploy` puts "
            "it there, or remove the workload (vdbench is bring-your-own)")
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
    # mdtest judged by its own spread over 3 iterations; fio once per thread count and variant
    conclusions = page.locator("#conclusions li").all_inner_texts()
    assert conclusions[0].startswith("Metadata Benchmark: No clear difference between the targets on any of the 10")
    assert conclusions[-1].startswith("Each value of fio comes from a single run")  # fio: nothing stated
    _first_order(page)
    _fits(page)
    _legible(page)
    assert errors == []


def test_seed_004_a_views_tables_sit_side_by_side_in_the_seeds_order(browser, tmp_path):
    page, errors = _open(browser, tmp_path, CEPH, ["scale=full"])

    def boxes(n: int) -> list[tuple[str, int, int]]:
        return [(h.inner_text(), round(h.bounding_box()["y"]), round(h.bounding_box()["x"]))
                for h in page.locator("section.view").nth(n).locator("h3").all()]

    # the four variants two by two (the seed's tables one after another, read left to right)
    variants = boxes(0)
    assert [v[0] for v in variants] == ["rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"]
    assert variants[0][1] == variants[1][1] < variants[2][1] == variants[3][1] and variants[1][2] > variants[0][2]
    # the thread counts of one operation: several on a line, in their order
    counts = boxes(2)
    assert [c[0] for c in counts] == ["numjobs=1", "numjobs=4", "numjobs=16", "numjobs=64"]
    assert counts[0][1] == counts[1][1] == counts[2][1] and counts[0][2] < counts[1][2] < counts[2][2]
    _fits(page)
    assert errors == []


@pytest.mark.parametrize("scenario", [META_ENGINES, OSSFS, METADATA, JUICEFS, CEPH], ids=lambda p: p.stem)
def test_default_views_of_each_example_are_legible(browser, tmp_path, scenario):
    sets = {META_ENGINES: ["scale=quick"]}.get(scenario, ["scale=full"])
    page, errors = _open(browser, tmp_path, scenario, sets, default_views=True)
    assert page.locator("section.view figure svg").count() >= 1
    _fits(page)
    _legible(page)  # mdtest's ten operations and objbench's seven under their bars (D5) once overlapped
    assert errors == []


def _findings(run: Path) -> list[tuple[str, str]]:
    """(verdict, line) of each finding in summary.md, after checking that every claim of the scenario is there,
    in its order, and that the report's page lists the same ones."""
    from fsbench.report.md_text import escape

    claims = [f["claim"] for f in yaml.safe_load((run / "scenario.yaml").read_text())["report"]["findings"]]
    summary = (run / "summary.md").read_text()
    section = summary.split("## The study's findings, here", 1)[1].split("## Flagged", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == len(claims) and all(escape(c) in line for c, line in zip(claims, lines)), lines
    html = (run / "report.html").read_text()
    assert html.count('<strong class="finding ') == len(claims)
    return [(line.split("**")[1], line) for line in lines]


def test_seed_findings_are_judged_in_the_summary_of_each_seed_campaign(tmp_path):
    """Each seed campaign at its default scale (3 rounds) states its seed's findings with a verdict and the
    numbers: values built from genuine outputs, each target a fixed factor of the baseline in every round
    (1 + 0.1 x its position), so each verdict is computed, and known: a 1.2x gap holds as a difference, a
    1.1x gap is within the 10 % floor (no difference: `same` holds, `higher` does not), the other way fails."""
    s3 = build_run(tmp_path / "s3", S3_FUSE, ["scale=quick"], inventory=None)
    write_report(s3)
    said = _findings(s3)
    # juicefs is 1.2x s3fs in every round: each "faster" finding holds, paired by round over 3 rounds; the
    # genuine fio output the small-file read is built from has no per-file rate, and the finding says so
    assert [v for v, _ in said] == ["holds"] * 3 + ["not decided"]
    assert all("1.2× &#91;1.2–1.2&#93;, paired by round over 3 rounds" in line for _, line in said[:3]), said
    assert "not measured: juicefs has no read file_rate in this run" in said[3][1]

    hdfs = build_run(tmp_path / "hdfs", METADATA, ["scale=quick"])
    write_report(hdfs)
    verdicts = [v for v, _ in _findings(hdfs)]
    # s3a 1.1x hdfs: within the floor, so "S3 slower" does not hold here; juicefs 1.2x hdfs: its lead holds,
    # and its create latency 1.2x hdfs's is the other way round of the seed's
    assert verdicts == ["does not hold", "does not hold", "does not hold", "holds", "holds", "does not hold"]
    lines = [line for _, line in _findings(hdfs)]
    assert "no difference here: the whole interval within the 10% floor" in lines[0]
    assert "the other way: juicefs higher" in lines[5]

    ceph = build_run(tmp_path / "ceph", CEPH, ["scale=lab"])
    write_report(ceph)
    verdicts = [v for v, _ in _findings(ceph)]
    # cephfs-ssd is 1.1x rbd-ssd everywhere: no difference beyond the floor, so every "same" holds and every
    # difference the seed states does not
    assert verdicts == ["does not hold", "does not hold", "holds", "holds", "does not hold", "does not hold",
                        "does not hold", "holds", "does not hold"]
