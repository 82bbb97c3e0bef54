"""The seed campaigns as example scenarios (scenarios/*.yaml on configs/inventory-example.yaml).

Each one validates and plans through the command line with the cases and parameters of its seed.
Then its report is rendered from a run directory built without running anything: every planned case
gets a genuine output of its tool, read in place from the shared fixtures and parsed by the tool's
own parser, with values scaled per target so the targets differ. No root, network or server needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fsbench.api.tools import BuildContext, HostInfo
from fsbench.core.tidy import ParseResult, measurement
from fsbench.ingest import parser_for
from fsbench.report import write_report
from fsbench.report.markdown import write_markdown_report
from fsbench.run.store import RunDir, utc_now
from fsbench.scenario.load import load_scenario
from fsbench.scenario.plan import Case, plan_cases
from fsbench.tools import get_tool
from tests.conftest import run_cli
from tests.paths import FIXTURES, GOLDEN, REPO

INVENTORY = REPO / "configs" / "inventory-example.yaml"
OSSFS = REPO / "scenarios" / "ossfs-1-vs-2.yaml"
METADATA = REPO / "scenarios" / "hdfs-s3-juicefs.yaml"
JUICEFS = REPO / "scenarios" / "juicefs-evaluation.yaml"
CEPH = REPO / "scenarios" / "cephfs-vs-rbd.yaml"
EXAMPLES = [OSSFS, CEPH]  # juicefs-evaluation and hdfs-s3-juicefs run here for real: their own tests below

# genuine outputs, read in place (never copied into the repository)
FIO_WRITE = FIXTURES / "fio" / "json_single_write_128k_libaio_direct.json"
FIO_READ = FIXTURES / "fio" / "json_status_interval_timebased_randread.json"
MDTEST_SEED_004 = FIXTURES / "mdtest" / "4.0.0" / "seed_n500_u_z2_i3_np4_ext4.stdout.txt"  # -n -u -z 2 -i 3
MDTEST_FILES = FIXTURES / "mdtest" / "4.0.0" / "files_only_F_np4_ext4.stdout.txt"  # -F
VDBENCH_MULTI_HOST = FIXTURES / "public" / "vdbench" / "masakioui-vdb" / "50407_fs_8host_random_read"
VDBENCH_ONE_HOST = FIXTURES / "public" / "vdbench" / "masakioui-vdb_nvme" / "50407_fs_1host_read"
# vdbench's format pass (run definition format_for_rd1: files created) of a multi-host file-system run,
# beside the read run (rd1: files opened): the guide's two figures come from two run definitions
VDBENCH_FORMAT = FIXTURES / "public" / "vdbench" / "masakioui-vdb" / "50407_fs_8host_format_only"
# one output with 38 run definitions (random and sequential reads and writes at 8 sizes and more)
VDBENCH_MANY_RDS = FIXTURES / "public" / "vdbench" / "masakioui-vdb_oceanstor" / "50407_sd_multihost_many_rds"
# (issue 3681's output is cut before its table ends: fsbench refuses it, so a whole output of our own stands in)
JUICEFS_BENCH = [FIXTURES / "public" / "juicefs-bench" / name for name in (
    "juicedata-juicefs_README_2021_old_text_format.txt",
    "issue-4712_table_negative_update_meta.txt",
)] + [REPO / "tests" / "golden" / "juicefs-bench" / "inputs" / "juicefs-1.4.2_bench_p1_sqlite_file_store.txt"]
# a real run under a pseudo-terminal, as fsbench runs it: juicefs bench's own colours (green, one yellow)
JUICEFS_BENCH_COLOURS = REPO / "tests" / "golden" / "juicefs-bench" / "inputs" / "juicefs-1.4.2_bench_p2_pty_colours.txt"
OBJBENCH = REPO / "tests" / "golden" / "objbench" / "inputs" / "juicefs-1.4.2_objbench_fsbench-s3_p2.txt"
# fsbench's own tool: real outputs made on this project's machine (tests/golden/metabench/inputs)
METABENCH_CALLS = GOLDEN / "metabench" / "inputs" / "calls_juicefs_redis_cache_wait_1.2s.json"
METABENCH_CONCURRENCY = GOLDEN / "metabench" / "inputs" / "concurrency_s3fs_4_threads_4k.json"
# NNBench's results log and fsbench's runner lines, real runs on HDFS, S3A and JuiceFS's Hadoop SDK
NNBENCH = [GOLDEN / "nnbench" / "inputs" / name for name in ("hdfs__maps-1__late-create-done-again",
                                                             "s3a__maps-20", "juicefs__maps-20",
                                                             "hdfs__maps-100")]

# the seed's CPU (100 = one core) and peak memory (MiB) of each version's FUSE process, per test
OSSFS_PROCESS = {
    "seq-write-1m": {"ossfs2": (207, 2167), "ossfs": (5, 15)},
    "seq-read-1m": {"ossfs2": (378, 1617), "ossfs": (50, 400)},
    "seq-read-1m-4-threads": {"ossfs2": (1187, 6349), "ossfs": (210, 1638)},
    "small-files-read-128-threads": {"ossfs2": (247, 212), "ossfs": (3, 200)},
}

NETWORK_LINK = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//""", re.IGNORECASE)
MD_NETWORK_LINK = re.compile(r"\]\(\s*<?\s*(?:[a-z][a-z0-9+.-]*:)?//|<[a-z][a-z0-9+.-]*://", re.IGNORECASE)


# -- the shared run-directory builder --------------------------------------------------------------

def fixtures_for(case: Case, point: int = 0) -> list[Path]:
    """Genuine outputs of the case's tool that fit the case, their rows taken together: a multi-host
    vdbench run gets its format pass (format_for_rd1) and its read (rd1), one with several run
    definitions an output of many; `point` (the sweep point's position) picks among several."""
    if case.tool == "vdbench" and len(case.hosts) > 1:
        return [VDBENCH_FORMAT, VDBENCH_MULTI_HOST]
    if case.tool == "vdbench" and len([n for n in case.jobs if n.startswith("rd")]) > 1:
        return [VDBENCH_MANY_RDS]
    return [fixture_for(case, point)]


def fixture_for(case: Case, point: int = 0) -> Path:
    """A genuine output of the case's tool that fits the case (write or read, files only, multi-host);
    `point` (the sweep point's position) picks among several."""
    if case.tool == "fio":
        return FIO_WRITE if "write" in str(case.options.get("rw", "read")) else FIO_READ
    if case.tool == "mdtest":
        return MDTEST_FILES if case.options.get("F") else MDTEST_SEED_004
    if case.tool == "vdbench":
        return VDBENCH_MULTI_HOST if len(case.hosts) > 1 else VDBENCH_ONE_HOST
    if case.tool == "juicefs-bench":  # -p 4 (the guide's, third point) is the coloured one
        return [*JUICEFS_BENCH[:2], JUICEFS_BENCH_COLOURS, JUICEFS_BENCH[2]][point % 4]
    if case.tool == "juicefs-objbench":
        return OBJBENCH
    if case.tool == "metabench":
        return METABENCH_CONCURRENCY if case.options.get("mode") == "concurrency" else METABENCH_CALLS
    if case.tool == "nnbench":
        return NNBENCH[point % len(NNBENCH)]
    raise AssertionError(f"no fixture for {case.tool}")


def build_run(root: Path, scenario: Path, sets: list[str] | None = None, extra_rows=None, status_of=None,
              inventory: Path | None = INVENTORY) -> Path:
    """A complete run directory for the scenario, as `fsbench run` would leave it, without running.

    Every planned case is `ok` with the rows of a genuine tool output (fixture_for), parsed by the
    tool's parser; values are multiplied by 1 + 0.1 x the target's position, 1 + 0.25 x the sweep
    point's position and 1 + 0.02 x (repetition - 1), so targets, swept values and repetitions
    differ while every ratio to the baseline stays exact. `extra_rows(case)` may add rows, e.g. the
    monitor's; `status_of(case)` may give (status, reason) for a case that did not run (a skipped
    vdbench: no rows). Rows carry the runner's context columns and its host rule (blank host: the case's
    first host); hosts.csv lists the hosts the cases and services use, as a run without
    `--inventory` records them.
    """
    sc = load_scenario(scenario, sets, inventory=inventory)
    cases = plan_cases(sc)
    rd = RunDir.create(root, sc.name, sc.resolved)
    targets = list(sc.targets)
    records, results = [], []
    for case in cases:
        point = sc.workloads[case.workload].sweep.points().index(case.params)
        status, reason = (status_of(case) if status_of else None) or ("ok", "")
        parsed = ParseResult()
        for path in fixtures_for(case, point) if status == "ok" else []:
            one = parser_for(case.tool)(path)
            parsed.rows += one.rows
            parsed.warnings += one.warnings
        factor = (1 + 0.1 * targets.index(case.target)) * (1 + 0.25 * point) * (1 + 0.02 * (case.repetition - 1))
        context = {"run_id": rd.run_id, "case_id": case.case_id, "scenario": sc.name, "target": case.target,
                   "workload": case.workload, "repetition": case.repetition}
        rows = [{**context, **r, "value": r["value"] * factor, "host": r.get("host") or case.hosts[0]}
                for r in parsed.rows]
        rows += [{**context, **r} for r in (extra_rows(case) if extra_rows and status == "ok" else [])]
        rd.set_case_rows(case.case_id, rows)
        results += rows
        now = utc_now()
        records.append({"case_id": case.case_id, "index": case.index, "target": case.target,
                        "workload": case.workload, "tool": case.tool, "repetition": case.repetition,
                        "status": status, "reason": reason, "exit_status": 0 if status == "ok" else "", "started": now, "ended": now,
                        "duration_s": 1.0, "tool_wall_s": 1.0, "estimate_s": case.estimate_s,
                        "hosts": " ".join(case.hosts), "warnings": "; ".join(parsed.warnings),
                        "params": case.params})
        rd.manifest["cases"][case.case_id] = status
    rd.write_results(results)
    rd.write_cases(records)
    used = {h for c in cases for h in c.hosts} | {h for s in sc.services.values() for h in sc.resolve_hosts(s.hosts)}
    tools = sorted({c.tool for c in cases})
    rd.write_hosts([{"host": name, "hostname": getattr(h.spec, "target", name), "kernel": "6.1.0-27-amd64",
                     "arch": "x86_64", "os": "Debian GNU/Linux 12 (bookworm)", "cpus": 4,
                     "memory_bytes": 16 * 2**30, **{f"{t}_version": "recorded" for t in tools}}
                    for name, h in sc.hosts.items() if name in used])
    rd.manifest.update(status="complete", ended=utc_now())
    rd.save_manifest()
    return rd.path


def render(run: Path) -> tuple[str, str]:
    """report.html and report.md of a run directory."""
    html = write_report(run).read_text()
    md = write_markdown_report(run).read_text()
    return html, md


def sections(html: str) -> dict[str, str]:
    """The HTML of each workload's section, by workload name."""
    return dict(re.findall(r'<details class="workload" id="workload-([^"]+)">(.*?)</details>', html, re.S))


def check_common(html: str, md: str, scenario: Path, baseline: str) -> dict[str, str]:
    """A section per workload, the baseline marked, ratios, nothing fetched from a network."""
    sc = load_scenario(scenario, inventory=INVENTORY)
    found = sections(html)
    assert set(found) == set(sc.workloads), set(sc.workloads) ^ set(found)
    assert all("No results for this workload" not in s for s in found.values())
    assert f"<strong>{baseline}</strong> <span class=\"baseline\">baseline</span>" in html
    assert re.search(r'<span class="ratio">\(\d+\.\d\d\)</span>', html)
    assert not NETWORK_LINK.search(html), NETWORK_LINK.search(html)
    assert not NETWORK_LINK.search(md) and not MD_NETWORK_LINK.search(md), MD_NETWORK_LINK.search(md)
    for name, w in sc.workloads.items():
        assert f"## {name} ({w.tool})" in md
    assert re.search(r"\(\d+\.\d\d", md)  # ratios, in Markdown followed by their mark
    return found


def plan_rows(*args: str) -> list[list[str]]:
    """`fsbench plan ARGS` as rows of [index, case id, hosts, estimate]."""
    proc = run_cli("plan", *args, check=True)
    return [line.split() for line in proc.stdout.splitlines() if "__" in line]


# -- every example: validate and plan --------------------------------------------------------------

@pytest.mark.parametrize("scenario", EXAMPLES, ids=lambda p: p.stem)
def test_validates_alone_and_with_the_inventory(scenario):
    for args in ([], ["--inventory", str(INVENTORY)], ["--set", "scale=full"]):
        proc = run_cli("validate", str(scenario), *args)
        assert proc.returncode == 0, proc.stderr
        assert "ok" in proc.stdout
    # the scenario names the inventory itself: the same cases on the same hosts either way (seed 004
    # names it at scale=full, where it joins an existing cluster; its default runs a lab cluster here)
    sets = ["--set", "scale=full"] if scenario == CEPH else []
    assert plan_rows(str(scenario), *sets) == plan_rows(str(scenario), *sets, "--inventory", str(INVENTORY))


def test_inventory_has_example_names_only():
    text = INVENTORY.read_text()
    assert not re.search(r"\b\d{1,3}(?:\.\d{1,3}){3}\b", text)  # no IP address of any kind
    addresses = re.findall(r"address:\s*(\S+)", text)
    assert addresses and all(a.endswith(".bench.example") for a in addresses)


# -- 001 ossfs 2.0 vs 1.0 --------------------------------------------------------------------------

def test_ossfs_plan_is_the_seeds_tests():
    rows = plan_rows(str(OSSFS), "--set", "scale=full", "--inventory", str(INVENTORY))
    # 2 versions x (write, read, 4-thread read, small files x 5 runs)
    assert len(rows) == 2 * (3 + 5)
    assert {r[2] for r in rows} == {"client1"}
    assert [r[1] for r in rows[:4]] == ["ossfs-2__seq-write-1m__r1", "ossfs-2__seq-read-1m__r1",
                                        "ossfs-2__seq-read-1m-4-threads__r1",
                                        "ossfs-2__small-files-read-128-threads__r1"]
    assert len(plan_rows(str(OSSFS))) == 2 * 4  # quick: the small-file read once

    sc = load_scenario(OSSFS, ["scale=full"])
    assert sc.baseline == "ossfs-1" and list(sc.targets) == ["ossfs-2", "ossfs-1"]
    assert set(sc.monitor.processes) == {"ossfs", "ossfs2"}
    w = sc.workloads
    assert {k: w["seq-write-1m"].options[k] for k in ("ioengine", "rw", "bs", "size", "numjobs", "direct")} == \
        {"ioengine": "libaio", "rw": "write", "bs": "1M", "size": "100G", "numjobs": 1, "direct": 1}
    assert w["seq-read-1m"].options["rw"] == "read" and w["seq-read-1m"].options["size"] == "100G"
    four = w["seq-read-1m-4-threads"].options
    assert (four["numjobs"], four["nrfiles"], four["iodepth"], four["runtime"], four["time_based"], four["thread"]) \
        == (4, 1, 1, 30, True, True)
    small = w["small-files-read-128-threads"]
    assert (small.options["filesize"], small.options["bs"]) == ("128k", "128k")
    # exactly the seed's 100,000 files over 128 threads, in two job sections of one reporting group
    sections = list(small.jobs.values())
    assert sum(j["numjobs"] for j in sections) == 128
    assert sum(j["numjobs"] * j["nrfiles"] for j in sections) == 100_000
    assert [j.get("new_group") for j in sections] == [None, 0]
    quick = load_scenario(OSSFS).workloads["small-files-read-128-threads"].jobs.values()
    assert sum(j["numjobs"] for j in quick) == 128 and sum(j["numjobs"] * j["nrfiles"] for j in quick) == 10_000
    assert small.repetitions == 5
    assert [n for n, x in w.items() if x.drop_caches] == ["seq-read-1m", "seq-read-1m-4-threads",
                                                          "small-files-read-128-threads"]
    assert "-o direct_read -o readdir_optimize" in sc.targets["ossfs-1"].settings.mount
    assert sc.targets["ossfs-1"].kind == "fuse" and sc.targets["ossfs-1"].client_process == "ossfs"
    assert {n for n, x in w.items() if x.dataset == "big-file"} == {"seq-write-1m", "seq-read-1m",
                                                                    "seq-read-1m-4-threads"}
    # ossfs 2.0 reads its configuration (and keys) where it is: nothing copied, the part size on its command line
    two = sc.targets["ossfs-2"]
    assert two.settings.mount.endswith("-c /etc/ossfs2.conf --upload_buffer_size=33554432")
    assert not two.setup and "cp " not in two.settings.mount


def _ossfs_monitor_rows(case: Case) -> list[dict]:
    """Synthetic monitor summary rows (as fsbench.monitor.parse makes them) with the seed's figures."""
    process = "ossfs2" if case.target == "ossfs-2" else "ossfs"
    cpu, mem_mib = OSSFS_PROCESS[case.workload][process]
    host = case.hosts[0]
    return [measurement("monitor", "process", "cpu_usage", cpu, host=host, job=process, stat="mean"),
            measurement("monitor", "process", "cpu_usage", cpu * 1.3, host=host, job=process, stat="max"),
            measurement("monitor", "process", "memory_peak", mem_mib * 2**20, host=host, job=process, stat="max")]


def test_ossfs_report_from_recorded_outputs(tmp_path):
    run = build_run(tmp_path, OSSFS, ["scale=full"], extra_rows=_ossfs_monitor_rows)
    html, md = render(run)
    found = check_common(html, md, OSSFS, "ossfs-1")
    assert "(0.91)" in html  # ossfs-2's values are 1/1.1 of the baseline's here
    for name, section in found.items():
        for process in ("ossfs", "ossfs2"):
            for metric in ("cpu_usage", "memory_peak"):
                assert re.search(rf"<td>process {process}</td><td>{metric}</td>", section), (name, process, metric)
    seq_write = found["seq-write-1m"]
    assert "207.0%" in seq_write and "5.0%" in seq_write  # CPU in % of one core
    assert "2.12 GiB" in seq_write  # ossfs 2.0's 2167 MiB peak
    assert "±" in found["small-files-read-128-threads"]  # 5 runs: the spread is shown
    assert "process ossfs2" in md and "memory_peak" in md


# -- 002 HDFS vs S3 vs JuiceFS metadata -------------------------------------------------------------

def test_metadata_plan_at_the_seeds_levels_on_the_inventorys_client():
    proc = run_cli("validate", str(METADATA), "--set", "scale=full", "--inventory", str(INVENTORY), check=True)
    assert "ok (4 targets, 2 workloads)" in proc.stdout
    rows = plan_rows(str(METADATA), "--set", "scale=full", "--inventory", str(INVENTORY))
    levels = (1, 10, 20, 50, 80, 100)
    assert len(rows) == 3 * 6 + 6
    # NNBench's maps spread over the clients group (the seed's 3 EMR core nodes: maps=1 runs on the first
    # alone), metabench's FUSE mount on the single client
    assert {r[2] for r in rows[:18]} == {"client1,client2,client3"} and {r[2] for r in rows[18:]} == {"client1"}
    assert [r[1] for r in rows[:6]] == [f"hdfs__nnbench__maps={n}__r1" for n in levels]
    assert [r[1] for r in rows[-6:]] == [f"juicefs-fuse__metabench-tps__threads={n}__r1" for n in levels]
    sc = load_scenario(METADATA, ["scale=full"], inventory=INVENTORY)
    assert sc.baseline == "hdfs" and list(sc.targets) == ["hdfs", "s3a", "juicefs", "juicefs-fuse"]
    assert [sc.targets[t].kind for t in sc.targets] == ["hdfs", "s3a", "jfs", "juicefs"]
    assert sc.workloads["nnbench"].options == {"files_per_map": 100,
                                               "operations": ["create_write", "open_read", "rename", "delete"],
                                               "barrier_ms": 1500}  # NNBench's own (and the first run's)
    assert sc.workloads["metabench-tps"].options == {"mode": "concurrency", "files": 100, "bytes": 0}
    assert "NNBench" in sc.description and "rename" in sc.description
    assert sc.services["redis"].hosts == ("meta",) and not sc.services["hdfs"].managed
    # here (no inventory): every server started on this machine, the two levels of quick scale (20 and 100
    # clients) of the four targets, in 3 rounds
    here = plan_rows(str(METADATA))
    assert {r[2] for r in here} == {"local"} and len(here) == 4 * 2 * 3


def test_metadata_report_has_the_seeds_views(tmp_path, monkeypatch):
    from fsbench.report import figures

    lines = []
    line_chart = figures.line_chart
    monkeypatch.setattr(figures, "line_chart", lambda data, title, unit, x, series, scale_from=None: lines.append((title, x))
                        or line_chart(data, title, unit, x, series, scale_from))
    run = build_run(tmp_path, METADATA, ["scale=full"])
    html, md = render(run)
    # TPS against concurrency: per system (a line per operation, 3 systems) and per operation (a line
    # per system, 4 operations), and metabench's through the FUSE mount
    assert [x for _t, x in lines].count("param_maps") >= 3 + 4
    assert [x for _t, x in lines].count("param_threads") >= 1
    for title in ("TPS by concurrency, per system", "TPS by concurrency, per operation",
                  "Latency per operation at 20 concurrent clients", "Throughput at 100 concurrent clients",
                  "TPS by concurrency through the JuiceFS FUSE mount (metabench)"):
        assert title in html and title in md, title
    found = check_common(html, md, METADATA, "hdfs")
    section = found["nnbench"]
    for op in ("create_write", "open_read", "rename", "delete"):
        assert op in section
    assert "(1.10)" in section and "(1.20)" in section  # s3a and juicefs against hdfs


# -- 003 JuiceFS performance evaluation guide -------------------------------------------------------

def test_juicefs_evaluation_runs_here_or_on_the_guides_machines():
    proc = run_cli("validate", str(JUICEFS), check=True)
    assert "ok" in proc.stdout
    here = plan_rows(str(JUICEFS))
    assert {r[2] for r in here} == {"local"} and len(here) == 3 + 1 + 4 + 2 + 1
    for args in (["--set", "scale=full"], ["--set", "keys=aws", "--set", "bucket=https://b.s3.example"]):
        run_cli("validate", str(JUICEFS), "--inventory", str(INVENTORY), *args, check=True)


def test_juicefs_evaluation_plan():
    rows = plan_rows(str(JUICEFS), "--set", "scale=full", "--inventory", str(INVENTORY))
    # bench x 4 thread counts, objbench, 4 fio, 2 local vdbench, 1 three-client vdbench
    assert len(rows) == 4 + 1 + 4 + 2 + 1
    by_case = {r[1]: r[2] for r in rows}
    assert [c for c in by_case if "juicefs-bench" in c] == [f"juicefs__juicefs-bench__threads={n}__r1"
                                                            for n in (1, 2, 4, 8)]
    assert by_case["juicefs-3-clients__vdbench-small-files-3-clients__r1"] == "client1,client2,client3"
    assert {h for c, h in by_case.items() if c.startswith("juicefs__")} == {"client1"}

    sc = load_scenario(JUICEFS, ["scale=full"])
    assert sc.use_case.keys() >= {"application", "resources", "data_scale", "file_sizes", "access_pattern",
                                  "required_performance"}
    for name in ("seq-write-1m", "seq-read-1m", "rand-write-1m", "rand-read-1m"):
        o = sc.workloads[name].options
        assert (o["ioengine"], o["bs"], o["size"], o["numjobs"], o["direct"]) == ("libaio", "1m", "1g", 4, 1)
        assert sc.workloads[name].dataset == "jfs-test"  # the guide's four runs share --name=jfs-test
    assert sc.workloads["objbench"].options["big_object_size"] == "1g"
    assert {c.kind for c in sc.collectors.values()} == {"juicefs-stats", "juicefs-profile"}
    vdb = sc.workloads["vdbench-small-files-3-clients"].jobs
    assert vdb["fsd1"]["width"] * vdb["fsd1"]["files"] == 300_000 and vdb["fsd1"]["size"] == "128k"
    assert vdb["rd1"]["elapsed"] == 300 and vdb["fwd1"]["threads"] == 4
    sc = load_scenario(JUICEFS, ["scale=full"], inventory=INVENTORY)
    case = next(c for c in plan_cases(sc) if c.workload == "vdbench-small-files-3-clients")
    ctx = BuildContext({h: HostInfo(h, sc.hosts[h].reach, sc.hosts[h].slots, sc.hosts[h].spec) for h in case.hosts})
    parm = get_tool("vdbench").build(case, "/mnt/t/case", ctx).files["parmfile"]
    assert "hd=default,vdbench=/opt/vdbench,shell=ssh,user=root" in parm
    assert [f"hd=client{i},system=client{i}.bench.example" for i in (1, 2, 3)] == \
        [line for line in parm.splitlines() if line.startswith("hd=client")]
    assert "fsd=fsd1,depth=1,width=100,files=3000,size=128k,shared=yes," in parm
    assert not sc.resolved.get("report", {}).get("thresholds")  # the verdicts are juicefs bench's own


def test_juicefs_evaluation_report_has_the_guides_sections(tmp_path):
    run = build_run(tmp_path, JUICEFS, ["scale=full"])
    html, md = render(run)
    found = sections(html)
    assert set(found) == set(load_scenario(JUICEFS).workloads)
    at_four = html.split("<h2>juicefs bench -p 4", 1)[1].split("</section>", 1)[0]
    # the tool's own colours, in its own table, one target: no ratios there
    assert set(re.findall(r'class="verdict (good|fair|poor)"', at_four)) == {"good", "fair"}
    assert 'class="ratio"' not in at_four
    checks = html.split("<h2>juicefs objbench: functional checks", 1)[1].split("</section>", 1)[0]
    assert checks.count(">pass<") == 11 and checks.count(">failed<") == 2 and checks.count(">not supported<") == 3
    assert "juicefs objbench: functional checks: 11 of 16 checks pass; failed: get partial object, special key" in md
    bench = found["juicefs-bench"]
    assert "write_big_file · bandwidth by threads" in bench
    assert "read_small_file · latency_mean by threads" in bench
    assert html.index('id="use-case"') < html.index('id="conclusions"') < html.index('class="view')
    # every vdbench run definition keeps its rows: the format pass's creates beside rd1's read opens (the
    # guide's two figures), and each of a parameter file's run definitions
    three = found["vdbench-small-files-3-clients"]
    assert re.search(r"<td>create \(format_for_rd1\)</td><td>rate</td>", three)
    assert re.search(r"<td>open \(rd1\)</td><td>rate</td>", three)
    for name in ("vdbench-local-big", "vdbench-local-small"):
        assert len(set(re.findall(r"<td>all \((\w+)\)</td><td>rate</td>", found[name]))) == 38, name
    views = html.split('id="more"', 1)[0]
    created = views.split("files created and opened per second", 1)[1].split("</section>", 1)[0]
    assert re.findall(r"<td>([^<]+)</td><td class=\"num", created) == ["format for rd1 · Create",
                                                                    "format for rd1 · Open", "rd1 · Open"]
    assert not NETWORK_LINK.search(html) and not MD_NETWORK_LINK.search(md)


# -- 004 CephFS vs RBD -----------------------------------------------------------------------------

def test_cephfs_vs_rbd_plan():
    rows = plan_rows(str(CEPH), "--set", "scale=full", "--inventory", str(INVENTORY))
    assert len(rows) == 4 * (1 + 4 * 4)
    assert {r[2] for r in rows} == {"client1"}
    ids = [r[1] for r in rows]
    assert ids[:5] == ["rbd-ssd__mdtest__r1"] + [f"rbd-ssd__seq-write-128k__numjobs={n}__r1" for n in (1, 4, 16, 64)]
    sc = load_scenario(CEPH, ["scale=full"])
    assert list(sc.targets) == ["rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"] and sc.baseline == "rbd-ssd"
    md_case = next(c for c in plan_cases(sc) if c.tool == "mdtest")
    assert get_tool("mdtest").build(md_case, "/mnt/x").argv == ["mdtest", "-n", "5000", "-u", "-z", "2", "-i", "3",
                                                                "-d", "/mnt/x"]
    for name, rw, bs, timed in (("seq-write-128k", "write", "128k", False), ("seq-read-128k", "read", "128k", True),
                                ("rand-write-4k", "randwrite", "4k", True), ("rand-read-4k", "randread", "4k", True)):
        w = sc.workloads[name]
        assert w.sweep.product == {"numjobs": [1, 4, 16, 64]}
        o = w.options
        assert (o["ioengine"], o["rw"], o["bs"], o["direct"], o["size"], o["runtime"], o["fallocate"]) == \
            ("psync", rw, bs, 1, "1G", 60, "none")
        assert bool(o.get("time_based")) is timed
    # an existing cluster: the kinds map, format and mount the RBD images and mount the file systems,
    # with the conf and keyring the client has; no lab cluster is started
    rbd, cephfs = sc.targets["rbd-hdd"], sc.targets["cephfs-ssd"]
    assert (rbd.kind, rbd.settings.pool, rbd.settings.fstype, rbd.settings.conf) == \
        ("rbd", "rbd-hdd", "ext4", "/etc/ceph/ceph.conf")
    assert (cephfs.kind, cephfs.settings.fs, cephfs.settings.client) == ("cephfs", "cephfs-ssd", "auto")
    assert all(t.services == () for t in sc.targets.values())
    # at scale=lab the same variants on a cluster fsbench starts here, at the two ends of the seed's thread
    # counts (1 and 64, the low and high concurrency its findings contrast), in 3 rounds
    lab = load_scenario(CEPH, ["scale=lab"])
    assert all(t.services == ("ceph",) for t in lab.targets.values()) and lab.services["ceph"].kind == "ceph-lab"
    assert len(plan_cases(lab)) == 4 * (1 + 4 * 2) * 3


def test_cephfs_vs_rbd_report_per_thread_count(tmp_path):
    run = build_run(tmp_path, CEPH, ["scale=full"])
    html, md = render(run)
    found = check_common(html, md, CEPH, "rbd-ssd")
    for name, op in (("seq-write-128k", "write"), ("seq-read-128k", "read"), ("rand-write-4k", "write"),
                     ("rand-read-4k", "read")):
        for metric in ("bandwidth", "iops"):
            assert f"{op} · {metric} by numjobs" in found[name], (name, metric)
        table = found[name].split(f"{op} · bandwidth by numjobs", 1)[1].split("</table>", 1)[0]
        assert re.findall(r"<tr><td>(\d+)</td>", table) == ["1", "4", "16", "64"]  # one row per thread count
    mdtest = found["mdtest"]
    assert "(1.10)" in mdtest and "(1.30)" in mdtest
    views = html.split('id="more"', 1)[0]
    for target in ("rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"):  # Max / Min / Mean / StdDev per variant
        assert f"<h3>{target}</h3>" in views
    assert "<th>Operation</th><th>Max IOPS</th><th>Min IOPS</th><th>Mean IOPS</th><th>Std Dev</th>" in views
    assert "<th>Name</th><th>IOPS</th><th>%</th>" in views  # per operation, % of the best
