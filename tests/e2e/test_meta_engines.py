"""The headline campaign for real: JuiceFS on six metadata engines with real servers and FUSE mounts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd

from fsbench.tools.metabench.parse import CALLS
from tests.conftest import require, run_cli
from tests.paths import REPO

SERVERS = ("redis-server", "mariadbd", "postgres", "etcd")


def _juicefs_mounts() -> str:
    """JuiceFS mounts at this scenario's mount points (others on a shared machine are not this run's)."""
    found = subprocess.run(["findmnt", "-rn", "-t", "fuse.juicefs", "-o", "TARGET"], capture_output=True,
                           text=True).stdout
    return "".join(line + "\n" for line in found.splitlines() if line in MOUNT_POINTS)


#: the scenario's mount points (tests of other modules may mount JuiceFS elsewhere under /mnt at the same time)
MOUNT_POINTS = {f"/mnt/fsbench-{t}" for t in ("redis-always", "redis-everysec", "sqlite", "mariadb", "postgres",
                                               "etcd")}


def test_meta_engines_end_to_end(tmp_path):
    for tool in ("fio", "mdtest", "mpirun", "metabench", "redis-server", "mariadbd", "etcd", "psql", "fusermount3"):
        require(tool)
    proc = run_cli("run", str(REPO / "scenarios" / "meta-engines.yaml"), "--set", "scale=smoke",
                   "-o", str(tmp_path), "--progress", "plain", timeout=900)
    run = Path(proc.stdout.splitlines()[0]) if proc.stdout else None
    assert proc.returncode == 0, proc.stderr[-3000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert len(cases) == 30
    assert set(cases.target) == {"redis-always", "redis-everysec", "sqlite", "mariadb", "postgres", "etcd"}
    assert (cases.status == "ok").all(), cases[["case_id", "reason"]].to_string()  # nothing skipped
    # the plan's total estimate is of the right size (issue 10, item 6): the cases took 1.5x the estimate on a
    # quiet machine (session 12: 131 s for 85 s planned) and 2.5x inside the full suite, whose other workers
    # load the same 2 cores; 3x keeps the check on the estimate, not on the suite's load
    planned, took = cases.estimate_s.sum(), cases.duration_s.sum()
    assert took / 3 <= planned <= took * 2, cases[["case_id", "estimate_s", "duration_s"]].to_string()

    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    # the monitor counts the run's own servers as the run's, never as other users' processes (issue 33)
    strangers = results[results.warnings.str.contains("none started by this run")]
    assert strangers.empty, strangers[["case_id", "job", "warnings"]].drop_duplicates("job").to_string()
    # seed 000's first table: every metadata call of its list (newchunk aside) measured through each mount
    calls = results[(results.tool == "metabench") & (results.metric == "latency_mean")]
    table = calls.pivot_table(index="operation", columns="target", values="value")
    assert set(table.index) == set(CALLS) and table.shape == (23, 6), table
    assert (table > 0).all().all() and (table < 5).all().all() and set(calls.unit) == {"s"}
    # expired entry caches send lookup to the engine; statx forces getattr there: neither is the kernel's
    # cached answer (about 1 µs). A FUSE request answered by a loopback Redis can take as little as 15 µs,
    # so the floor is 5 µs: well above a cached answer, well below any engine's round trip
    assert (table.loc["lookup"] > 5e-6).all() and (table.loc["getattr"] > 5e-6).all(), table.loc[["lookup", "getattr"]]
    # every call vouched for by the client's own count of its metadata-engine requests, on every engine: the
    # engine served lookup and getattr (at least one request a call, checked and held); read_1 and read_10 were
    # answered from the client's cache (it holds the file's slices since it wrote them: flagged, saying so)
    engine = results[(results.tool == "metabench") & (results.metric == "engine_requests_per_call")]
    per_call = engine.pivot_table(index="operation", columns="target", values="value")
    assert per_call.shape == (23, 6) and (per_call.loc[["lookup", "getattr", "mkdir", "unlink"]] >= 1).all().all()
    assert (per_call.loc[["read_1", "read_10"]] < 0.5).all().all(), per_call  # a background request may land
    verdict = calls.set_index(["operation", "target"])
    assert (verdict.loc[["lookup", "getattr", "mkdir"], "validity"] == "ok").all()
    flagged = verdict.loc[["read_1", "read_10"]]
    assert (flagged.validity == "flagged").all() and flagged.validity_detail.str.contains(
        "served by the client's cache: 0.").all(), flagged.validity_detail
    bench = results[results.tool == "juicefs-bench"]
    assert {"write_big_file", "read_small_file", "stat_file", "total"} <= set(bench.operation)
    # its own counts of the object requests agree with the store's (fsbench-s3's); its client-only rows say why
    counts = bench[bench.operation.isin(["put_object", "get_object", "delete_object"])]
    assert (counts.validity == "ok").all() and counts.validity_detail.str.contains("the store counted").all()
    # its metadata transactions against the engine's own count (Redis, MariaDB, PostgreSQL, etcd); SQLite is a
    # file the client writes itself: no server counts, and the row says so
    update = bench[bench.operation == "update_meta"].set_index("target")
    served = update.drop(index="sqlite")
    assert (served.validity == "ok").all() and served.validity_detail.str.contains(
        "the metadata engine itself counted").all(), served.validity_detail
    assert update.loc[["sqlite"], "validity_detail"].str.startswith("not checked: ").all()
    # the second witness of every engine with a server: its own count of what it served (INFO commandstats,
    # Questions, pg_stat_statements, etcd's gRPC calls) covers what the client says it asked, per case
    witness = calls[calls.target != "sqlite"].validity_detail
    assert witness.str.contains(r"the engine itself counted \d+ requests while the client asked \d+").all()
    engine_rows = results[(results.tool == "backend") & (results.operation == "engine_served")]
    assert set(engine_rows.target) == set(cases.target) - {"sqlite"}
    # juicefs bench against the store's own counters (fsbench-s3's): its big read and its writes get verdicts
    big = bench[bench.metric == "bandwidth"].set_index(["operation", "target"]).validity
    assert (big.loc["write_big_file"] == "ok").all() and big.loc["read_big_file"].isin(["ok", "flagged"]).all(), big
    assert set(bench[bench.operation == "total"].metric) >= {"cpu_usage", "memory_peak"}
    fio = results[(results.tool == "fio") & (results.metric == "bandwidth")]
    assert len(fio) == 6 and (fio.value > 0).all()
    # seed 000's two mdtest tables, measured for real under mpirun on every engine
    mdtest = results[(results.tool == "mdtest") & (results["stat"] == "mean") & (results.metric == "rate")]
    meta = mdtest[mdtest.workload == "mdtest-meta"].pivot_table(index="operation", columns="target", values="value")
    assert {"directory_creation", "directory_stat", "file_creation", "tree_removal"} <= set(meta.index)
    assert meta.shape[1] == 6 and (meta.loc["directory_creation"] > 0).all()
    # every creation and removal vouched for by the client's own count of the engine requests that make it
    # (JuiceFS's `.stats`, issue 33): held on every engine; the stats by their own phase's count (the client's
    # `.stats` read before each phase, mdtest --run-cmd-before-phase): judged, whichever way, on every engine
    changes = mdtest[mdtest.operation.isin(["file_creation", "directory_creation", "file_removal", "tree_removal"])]
    assert len(changes) >= 4 * 6 and (changes.validity == "ok").all(), changes[["target", "validity_detail"]]
    removals = changes[changes.operation == "file_removal"].validity_detail
    assert removals.str.contains(r"Unlink while mdtest ran, for \d+ items of file removal: 1\.00 per item").all()
    stats = mdtest[mdtest.operation == "file_stat"]
    assert stats.validity.isin(["ok", "flagged"]).all(), stats[["target", "validity_detail"]]
    assert stats.validity_detail.str.contains(r"requests during file stat, for \d+ items: [\d.]+ per item").all()
    per_phase = results[(results.tool == "mdtest") & (results.metric == "engine_requests_per_item")]
    assert set(per_phase[per_phase.operation == "file_stat"].target) == set(meta.columns)
    assert (per_phase[per_phase.operation == "file_creation"].value >= 1).all()  # a creation reaches the engine
    engine_rows = results[(results.tool == "backend") & (results.operation == "meta_Mknod")]
    assert set(engine_rows.target) >= set(cases.target) and (engine_rows.unit == "count").all()
    small = mdtest[mdtest.workload == "mdtest-small-files"]
    assert {"file_creation", "file_read"} <= set(small.operation) and "directory_creation" not in set(small.operation)
    assert (run / "raw" / "redis-always__mdtest-meta__r1" / "local" / "command").read_text().startswith(
        "mpirun -np 2 ")

    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert "fuse.juicefs" in hosts.loc[0, "mount_redis-always"]
    assert hosts.loc[0, "juicefs-bench_version"].startswith("juicefs version")

    html = (run / "report.html").read_text()
    assert "redis-always <span class=\"baseline\">baseline</span>" in html
    first = html.index("<h2>Metadata calls (µs per call)")  # the seed's first table comes first
    assert first < html.index("<h2>JuiceFS Bench") < html.index("<h2>mdtest <span")
    assert "Readdir 1k" in html[first:html.index("<h2>JuiceFS Bench")] and " ms<" not in html[first:html.index(
        "<h2>JuiceFS Bench")]  # every time of that table in µs, as the seed's
    assert re.search(r"\((\d+\.\d\d)\)", html)  # values with their ratio to Redis-always
    # the seed's mdtest table: both workloads as sections of one table, per their descriptions
    assert "<h2>mdtest <span" in html and "skipped" not in html
    assert "Empty files (mdtest -b 3" in html and "Small files of 100 KiB" in html

    # nothing left behind: no mount, no server of this run, no scratch space
    assert _juicefs_mounts() == ""
    left = subprocess.run(["pgrep", "-af", "|".join(SERVERS)], capture_output=True, text=True).stdout
    assert run.name not in left, left
    assert not list(Path("/var/tmp/fsbench").glob(f"{run.name}*"))
    assert (run / "targets" / "redis-always" / "juicefs-local.log").exists()


def test_an_inventory_gives_the_seed_layout():
    proc = run_cli("plan", str(REPO / "scenarios" / "meta-engines.yaml"), "--set", "scale=full", "--inventory",
                   str(REPO / "configs" / "inventory-meta-engines.example.yaml"), check=True)
    lines = [line for line in proc.stdout.splitlines() if "__" in line]
    # 6 engines x 5 workloads (metadata calls, juicefs bench, fio, mdtest twice) x 3 repetitions
    assert len(lines) == 6 * 5 * 3
    # SQLite is a file on one host: its cases run on the first client only (the others could not open it)
    assert all(("client1 " in line) if "sqlite__" in line else ("client1,client2,client3" in line) for line in lines)
    assert "meta1" not in proc.stdout  # services run there, cases on the clients
