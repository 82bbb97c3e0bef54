"""Seed campaigns across hosts on a simulated cluster (tests/mhlab.py): one sshd per host, each in its own
mount namespace with its own /tmp, /var/tmp and /mnt, started once for the session.

Each seed campaign runs once (module fixture) with its inventory example in configs/ (meta-engines,
hdfs-s3-juicefs, juicefs-evaluation), its addresses and keys replaced by the lab's; the tests then check
what each host did."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fsbench import hadoop
from fsbench.tools.nnbench.parse import blocks, runner_lines
from tests.conftest import require, run_cli
from tests.e2e.test_nnbench_hosts_real import nnbench_when
from tests.mhlab import LabWatcher, MultiHostLab, lab_inventory, run_on_lab, start_multihost
from tests.paths import REPO

LAYOUT = [("meta1", "meta"), ("client1", "clients"), ("client2", "clients"), ("client3", "clients")]
CLIENTS = ("client1", "client2", "client3")
EXAMPLE = REPO / "configs" / "inventory-meta-engines.example.yaml"
#: smoke scale made smaller still: every case keeps its shape (tools, hosts, placement), with less data
SMALLER = [f"--set={k}={v}" for k, v in {"fio_size": "4m", "big_file": "4m", "small_files": 5, "meta_iterations": 3,
                                        "mdtest_items": 2, "mdtest_files": 3}.items()]
#: process names whose presence on each host is recorded while the campaign runs (/proc/PID/comm)
WATCHED = {"juicefs", "fio", "metabench", "mdtest", "orted", "redis-server", "mariadbd", "postgres", "fsbench-s3"}
#: command-line words that tell apart what runs under one process name (java, juicefs): recorded as the label
MARKERS = {"fsbench.NNBenchRuns": "nnbench", "namenode.NameNode": "namenode", "datanode.DataNode": "datanode",
           "juicefs bench": "juicefs bench", "juicefs objbench": "juicefs objbench"}


@pytest.fixture(scope="session")
def mhlab(tmp_path_factory) -> Iterator[MultiHostLab]:
    """meta1 and client1-3, started once; at the end every namespace is emptied and every sshd stopped."""
    for tool in ("/usr/sbin/sshd", "unshare", "nsenter", "ssh"):
        require(tool)
    lab = start_multihost(tmp_path_factory.mktemp("mhlab"), LAYOUT)
    try:
        yield lab
    finally:
        lab.stop()
        assert not any(h.proc.poll() is None for h in lab.hosts), "a lab sshd outlived the session"


def ssh(lab: MultiHostLab, host: str, script: str) -> subprocess.CompletedProcess:
    """Run script on a lab host with the system's ssh client."""
    return subprocess.run(["ssh", "-F", "none", "-p", str(lab.port), "-i", str(lab.client_key),
                           "-o", f"UserKnownHostsFile={lab.known_hosts}", "-o", "BatchMode=yes",
                           f"{lab.user}@{lab.host(host).address}", script],
                          capture_output=True, text=True, timeout=60, check=False)


def watcher(lab: MultiHostLab) -> LabWatcher:
    """The tools', services' and JVMs' processes and the mounts of every lab host, sampled during a run."""
    return LabWatcher(lab, WATCHED, MARKERS)


def test_lab_hosts_have_their_own_name_tmp_and_mounts(mhlab):
    """The lab itself: a file or a mount one host makes is not seen by another host nor by the machine."""
    made = ssh(mhlab, "client1", "hostname; mkdir -p /mnt/fsbench-mhlab-iso && "
                                  "mount -t tmpfs fsbench-mhlab-iso /mnt/fsbench-mhlab-iso && "
                                  "echo x > /tmp/fsbench-mhlab-iso")
    assert made.returncode == 0 and made.stdout.split() == ["client1"], made.stderr
    c1, c2 = mhlab.host("client1"), mhlab.host("client2")
    assert c1.new_mounts() == ["/mnt/fsbench-mhlab-iso"] and c2.new_mounts() == []
    assert c1.path("/tmp/fsbench-mhlab-iso").exists() and not c2.path("/tmp/fsbench-mhlab-iso").exists()
    assert not Path("/tmp/fsbench-mhlab-iso").exists() and not Path("/mnt/fsbench-mhlab-iso").exists()
    assert ssh(mhlab, "client2", "hostname").stdout.strip() == "client2"
    gone = ssh(mhlab, "client1", "umount /mnt/fsbench-mhlab-iso && rmdir /mnt/fsbench-mhlab-iso && "
                                  "rm /tmp/fsbench-mhlab-iso")
    assert gone.returncode == 0, gone.stderr
    assert mhlab.wait_clean() == {}


def trimmed_meta_engines(path: Path) -> Path:
    """scenarios/meta-engines.yaml with its layout (services on meta, the targets on the clients) and less
    work: four engines of the six (Redis once), one mdtest workload of the two, six of metabench's 23 calls. Each tool, placement and host's part
    is still there; the seed's full list of calls measures nothing more about who runs where.

    Without etcd: its TLS client certificates are made in the service's folder on the meta host, and the
    clients' JuiceFS is given their paths there, which no client has ("holds no JuiceFS volume yet" on
    client1). Until the etcd kind ships its client files to the targets' hosts, etcd runs on one host only."""
    sc = yaml.safe_load((REPO / "scenarios" / "meta-engines.yaml").read_text())
    del sc["workloads"]["mdtest-small-files"]
    del sc["targets"]["etcd"], sc["services"]["etcd"]
    del sc["targets"]["redis-everysec"], sc["services"]["redis-everysec"]  # redis-always's layout again
    sc["monitor"]["processes"].remove("etcd")
    sc["workloads"]["meta-calls"]["options"].update(
        operations=["mkdir", "readdir_10", "create", "lookup", "getattr", "unlink"], warmup=1)
    for view in sc["report"]["views"]:
        if "workloads" in view:
            view["workloads"] = [w for w in view["workloads"] if w in sc["workloads"]]
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def meta_run(mhlab, tmp_path_factory):
    """meta-engines at smoke scale on meta1 + client1-3: (process, run dir, watcher)."""
    for tool in ("juicefs", "redis-server", "mariadbd", "fio", "mdtest", "mpirun", "metabench"):
        require(tool)
    folder = tmp_path_factory.mktemp("meta-engines")
    inventory = lab_inventory(mhlab, folder / "inventory.yaml", EXAMPLE)
    scenario = trimmed_meta_engines(folder / "meta-engines.yaml")
    return run_on_lab(mhlab, scenario, inventory, folder, watcher(mhlab), *SMALLER, timeout=1200)


def test_meta_engines_runs_every_case_across_the_hosts(meta_run):
    proc, run, _ = meta_run
    assert proc.returncode == 0, proc.stderr[-4000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all(), cases[cases.status != "ok"][["case_id", "reason"]].to_string()
    # the embedded engine runs on one client, and says so; every other target on all three
    assert set(cases[cases.target == "sqlite"].hosts) == {"client1"}
    assert set(cases[cases.target != "sqlite"].hosts) == {"client1 client2 client3"}
    assert "targets.sqlite: runs on client1 only, not on client2, client3" in proc.stderr
    # no warning about a process on a host where it does not live
    assert not cases.warnings.str.contains("never seen|no juicefs process on meta1").any(), \
        cases.warnings.to_string()


def test_meta_engines_each_host_did_its_part(meta_run, mhlab):
    _, run, watched = meta_run
    assert {"redis-server", "mariadbd", "postgres", "fsbench-s3"} <= watched.procs["meta1"]
    # (preflight's version probes run fio, mdtest and juicefs once on every host, meta1 included: the host
    # facts table's versions; the workloads' rows and mdtest's hostfile name the clients only)
    for client in CLIENTS:
        assert {"juicefs", "fio", "metabench", "mdtest"} <= watched.procs[client], (client, watched.procs)
        assert not watched.procs[client] & {"redis-server", "mariadbd", "postgres", "fsbench-s3"}
    # mounts made in each client's own namespace, none on the meta host; SQLite's on client1 only
    for client in CLIENTS:
        engines = {"redis-always", "mariadb", "postgres"}
        assert {f"/mnt/fsbench-{e}" for e in engines} <= watched.mounts[client], (client, watched.mounts)
    assert "/mnt/fsbench-sqlite" in watched.mounts["client1"]
    assert "/mnt/fsbench-sqlite" not in watched.mounts["client2"] | watched.mounts["client3"]
    assert not {m for m in watched.mounts["meta1"] if m.startswith("/mnt/")}
    # per-host rows: fio's per client and metabench's per host beside their aggregates
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio = rows[(rows.tool == "fio") & (rows.metric == "bandwidth") & (rows.target == "redis-always")]
    assert set(fio.host) == {*CLIENTS, "all"}
    meta = rows[(rows.tool == "metabench") & (rows.target == "mariadb")]
    assert set(CLIENTS) <= set(meta.host)
    assert "meta1" not in set(rows[rows.tool.isin(["fio", "metabench", "mdtest"])].host)
    mdtest = next((run / "raw").glob("redis-always__mdtest-meta__r1*/controller"))
    assert "--map-by node" in (mdtest / "command").read_text()
    assert [line.split()[0] for line in (mdtest / "hostfile").read_text().splitlines()] == \
        [mhlab.host(c).address for c in CLIENTS]
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert set(CLIENTS) <= set(hosts.host)


def test_meta_engines_report_says_per_host_what_each_client_did_and_gave(meta_run):
    proc, run, _ = meta_run
    # said by fsbench run (not only plan --show), and kept for the report with the cases they concern
    assert "workloads.juicefs-bench: juicefs-bench runs on client1 only, not on client2, client3" in proc.stderr
    notes = pd.read_csv(run / "run-warnings.csv", keep_default_na=False)
    sqlite = notes[notes.warning.str.startswith("targets.sqlite: runs on client1 only")]
    assert len(sqlite) == 1 and set(sqlite.cases.iloc[0].split()) == set(
        pd.read_csv(run / "cases.csv").query("target == 'sqlite'").case_id)
    placed = pd.read_csv(run / "placement.csv", keep_default_na=False)
    mdtest = placed[placed.case_id == "redis-always__mdtest-meta__r1"].set_index("host").runs
    assert mdtest.to_dict() == {"client1": "rank 0", "client2": "rank 1", "client3": "none"}
    page = (run / "report.html").read_text()
    # under the fio and metabench views, a table per host: one column per client beside `all`
    per_host = page.split('class="results per-host"')[1:]
    assert per_host and all("<th>client1</th><th>client2</th><th>client3</th><th>all</th>" in t for t in per_host)
    assert any("fio-big-write · bandwidth per host" in part for part in page.split("<details class=\"per-host\">"))
    assert "meta-calls · latency_mean per host" in page
    # which host ran what, and the run's own warnings in the Warnings table
    table = page.split('id="placement"')[1].split("</table>")[0]
    assert "<td>mdtest-meta</td>" in table and "rank 0" in table and "its own metabench process" in table
    warnings = page.split('id="warnings"')[1].split("</table>")[0]
    assert "targets.sqlite: runs on client1 only" in warnings and "juicefs-bench runs on client1 only" in warnings


def test_meta_engines_leaves_nothing_on_any_host(meta_run, mhlab):
    _, run, _ = meta_run
    assert mhlab.wait_clean() == {}
    for h in mhlab.hosts:
        left = [p.name for p in h.path("/mnt").iterdir()]
        assert left == [], (h.name, left)


def test_lab_leaves_nothing_after_a_stop(tmp_path):
    """A lab of its own, stopped with a mount and a background process on a host: both are gone after."""
    require("/usr/sbin/sshd")
    lab = start_multihost(tmp_path / "lab", [("solo1", "clients")], first=100)
    try:
        made = ssh(lab, "solo1", "mkdir -p /mnt/x && mount -t tmpfs fsbench-mhlab-solo /mnt/x && "
                                 "(sleep 300 >/dev/null 2>&1 &)")
        assert made.returncode == 0, made.stderr
        assert set(lab.leftovers()["solo1"][0:1]) == {"mount /mnt/x"}
        ns = lab.hosts[0].ns
    finally:
        lab.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(
            _ns_of(p) == ns for p in Path("/proc").iterdir() if p.name.isdigit()):
        time.sleep(0.1)
    assert not any(_ns_of(p) == ns for p in Path("/proc").iterdir() if p.name.isdigit())
    assert "fsbench-mhlab-solo" not in Path("/proc/self/mounts").read_text()


def _ns_of(proc: Path) -> str:
    try:
        return str((proc / "ns" / "mnt").readlink())
    except OSError:
        return ""


CRASH_SCENARIO = """\
name: mhlab-crash
monitor: {enabled: false}
targets:
  local:
    description: each client's own folder (its own /var/tmp)
    path: /var/tmp/fsbench-mhlab-crash
    hosts: [clients]
    setup: ["mkdir -p ${target.path}"]
    teardown: ["rm -rf ${target.path}"]
workloads:
  long: {tool: fio, options: {rw: write, bs: 64k, size: 4m, time_based: true, runtime: 6}}
  short: {tool: fio, options: {rw: write, bs: 64k, size: 1m}}
"""


def test_a_client_that_dies_mid_case_fails_that_case_naming_it_and_resume_completes(mhlab, tmp_path):
    """client2's sshd killed while the 3-client fio case runs (and back a moment later, as a host that
    reboots): that case fails naming client2, the next case runs on all three, `--resume` redoes the first."""
    require("fio")
    scenario = tmp_path / "crash.yaml"
    scenario.write_text(CRASH_SCENARIO)
    inventory = lab_inventory(mhlab, tmp_path / "inventory.yaml", EXAMPLE)
    out = tmp_path / "out"
    crashed = threading.Event()

    def crash_client2_mid_case() -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if list(out.glob("*/raw/local__long__r1/client2/server-command")):
                time.sleep(2.0)  # the fio jobs are running on every client
                mhlab.host("client2").crash()
                crashed.set()
                time.sleep(1.0)
                mhlab.restart("client2")
                return
            time.sleep(0.05)

    killer = threading.Thread(target=crash_client2_mid_case, daemon=True)
    killer.start()
    proc = run_cli("run", str(scenario), "--inventory", str(inventory), "-o", str(out), "--no-report",
                   "--progress", "plain", timeout=300)
    killer.join(timeout=60)
    assert crashed.is_set(), proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
    assert cases.loc["long", "status"] == "failed", cases.to_string()
    assert cases.loc["long", "reason"].startswith("client2 lost while the case ran ("), cases.loc["long", "reason"]
    # the run went on to the next case, on all three clients; client2 is back within seconds, but on a busy
    # machine the next case may reach it before its sshd listens again: then that case fails naming it too
    assert cases.loc["short", "hosts"] == "client1 client2 client3"
    assert cases.loc["short", "status"] == "ok" or (
        cases.loc["short", "status"] == "failed" and "client2" in cases.loc["short", "reason"]), cases.to_string()
    resumed = run_cli("run", str(scenario), "--inventory", str(inventory), "--resume", str(run), "--no-report",
                      "--progress", "plain", timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all(), cases[["case_id", "status", "reason"]].to_string()
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    assert set(rows[(rows.workload == "long") & (rows.metric == "bandwidth")].host) == {*CLIENTS, "all"}
    assert mhlab.wait_clean() == {}
    for client in CLIENTS:
        assert not mhlab.host(client).path("/var/tmp/fsbench-mhlab-crash").exists(), client


HDFS_EXAMPLE = REPO / "configs" / "inventory-hdfs-s3-juicefs.example.yaml"
EVALUATION_EXAMPLE = REPO / "configs" / "inventory-juicefs-evaluation.example.yaml"
#: NNBench's concurrency in the test: 4 maps, spread 2, 1, 1 over the three clients
NNBENCH_SHARE = {"client1": 2, "client2": 1, "client3": 1}


def trimmed_hdfs_s3_juicefs(path: Path) -> Path:
    """scenarios/hdfs-s3-juicefs.yaml with its layout (HDFS on the single client, Redis and the S3 server on
    meta1, NNBench's maps over the three clients) and less work: one level of 4 maps for each of the three
    systems instead of 1 and 20, and without metabench through the FUSE mount, which runs on client1 alone
    (test_hdfs_s3_juicefs runs it on one machine)."""
    sc = yaml.safe_load((REPO / "scenarios" / "hdfs-s3-juicefs.yaml").read_text())
    sc["variables"]["levels"]["smoke"] = [sum(NNBENCH_SHARE.values())]
    del sc["workloads"]["metabench-tps"], sc["targets"]["juicefs-fuse"]
    sc["report"]["views"] = [{**v, **({"value": sum(NNBENCH_SHARE.values())} if v["view"] == "at" else {})}
                             for v in sc["report"]["views"] if v["workload"] == "nnbench"]
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def hdfs_run(mhlab, tmp_path_factory):
    """hdfs-s3-juicefs at smoke scale on meta1 + client1-3: (process, run dir, watcher)."""
    for tool in ("java", "metabench", "juicefs", "redis-server", "fsbench-s3", "python3", "ip"):
        require(tool)
    assert Path(hadoop.home(), "fsbench-hadoop.jar").is_file(), hadoop.MISSING.format(home=hadoop.home())
    folder = tmp_path_factory.mktemp("hdfs-s3-juicefs")
    inventory = lab_inventory(mhlab, folder / "inventory.yaml", HDFS_EXAMPLE)
    scenario = trimmed_hdfs_s3_juicefs(folder / "hdfs-s3-juicefs.yaml")
    # the NameNode on client1 gives clients its DataNode's address as the DataNode's connection shows it
    with mhlab.own_source("client1"):
        return run_on_lab(mhlab, scenario, inventory, folder, watcher(mhlab))


def test_hdfs_s3_juicefs_spreads_nnbench_maps_over_the_clients_at_one_barrier(hdfs_run):
    proc, run, _ = hdfs_run
    assert proc.returncode == 0, proc.stderr[-4000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert sorted(cases.target) == ["hdfs", "juicefs", "s3a"], cases[["case_id", "status", "reason"]].to_string()
    assert (cases.status == "ok").all(), cases[cases.status != "ok"][["case_id", "reason"]].to_string()
    assert set(cases.hosts) == {"client1 client2 client3"}
    for case in cases.case_id:
        raw = run / "raw" / case
        for host, maps in NNBENCH_SHARE.items():
            # its share of the maps, its own base folder, and its own NNBench results
            command = (raw / host / "command").read_text()
            assert f"/{case}/{host} -maps {maps} " in command and " -barrier 127.0.28.2:" in command, command
            assert (raw / host / "exit_status").read_text() == "0\n"
            assert "RAW DATA: # of exceptions: 0" in (raw / host / "NNBench_results.log").read_text()
        # every host set the same start time for each run: its barrier sized for the largest share (2 maps),
        # not for its own (client2 and client3 have 1, which gave them a start 20 ms earlier)
        barriers = {h: [r["barrier_ms"] for r in runner_lines((raw / h / "stdout").read_text())] for h in NNBENCH_SHARE}
        assert len({tuple(b) for b in barriers.values()}) == 1 and len(barriers["client1"]) == 5, barriers
        # one barrier, on client1, for the three: one round per NNBench run (5)
        server = (raw / "client1" / "server.out").read_text()
        assert "3 parties joined" in server and "5 rounds, every party left" in server, server
        assert not (raw / "client2" / "server-command").exists()
        # each NNBench run started at the same moment on the three, and only after all three had ended the one
        # before (NNBench's own start and end times): no host renamed while another still read
        found = {h: blocks((raw / h / "NNBench_results.log").read_text()) for h in NNBENCH_SHARE}
        assert [len(b) for b in found.values()] == [5, 5, 5], found
        for n, runs in enumerate(zip(*found.values())):
            starts = [nnbench_when(b.text("Start time")) for b in runs]
            assert (max(starts) - min(starts)).total_seconds() < 0.25, (case, runs[0].operation, starts)
            if n:
                ended = max(nnbench_when(found[h][n - 1].text("Date & time")) for h in NNBENCH_SHARE)
                assert min(starts) > ended, (case, runs[0].operation, starts, ended)
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    nn = rows[(rows.tool == "nnbench") & (rows.job == "")]
    rate = nn[nn.metric == "rate"].pivot_table(index=["target", "operation"], columns="host", values="value")
    hosts_sum = sum(rate[h] for h in NNBENCH_SHARE)
    assert ((rate["all"] - hosts_sum).abs() <= 1e-9 * rate["all"]).all(), rate  # the hosts' rates added
    for target in ("hdfs", "s3a", "juicefs"):
        ops = nn[(nn.target == target) & (nn.metric == "ops")]
        assert set(ops.host) == {*NNBENCH_SHARE, "all"}, ops
        # every file operation of every host done (files_per_map 2 at smoke scale), and summed into `all`
        for host, maps in {**NNBENCH_SHARE, "all": sum(NNBENCH_SHARE.values())}.items():
            assert set(ops[ops.host == host].value) == {2.0 * maps}, (target, host, ops)
        assert (nn[(nn.target == target) & (nn.metric == "rate")].value > 0).all()


def test_hdfs_s3_juicefs_each_host_did_its_part(hdfs_run, mhlab):
    _, run, watched = hdfs_run
    for client in CLIENTS:
        assert "nnbench" in watched.procs[client], (client, watched.procs)
        assert not watched.procs[client] & {"redis-server", "fsbench-s3"}
    assert {"namenode", "datanode"} <= watched.procs["client1"]  # the scenario's single-client group
    assert not (watched.procs["client2"] | watched.procs["client3"]) & {"namenode", "datanode"}
    assert {"redis-server", "fsbench-s3"} <= watched.procs["meta1"] and "nnbench" not in watched.procs["meta1"]
    placed = pd.read_csv(run / "placement.csv", keep_default_na=False)
    assert set(placed.host) == set(CLIENTS) and set(placed.runs) == {"its own nnbench process"}
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False).set_index("host")
    assert all(hosts.loc[c, "nnbench_version"].startswith("Hadoop 3.3.6") for c in CLIENTS), hosts.T.to_string()
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert not cases.warnings.str.contains("never seen").any(), cases.warnings.to_string()


def test_hdfs_s3_juicefs_leaves_nothing_on_any_host(hdfs_run, mhlab):
    _, run, _ = hdfs_run
    assert mhlab.wait_clean() == {}
    for h in mhlab.hosts:
        assert not h.path(f"/var/tmp/fsbench/{run.name}").exists(), h.name
        assert [p.name for p in h.path("/mnt").iterdir()] == [], h.name
    routes = subprocess.run(["ip", "route", "show", "table", "local"], capture_output=True, text=True).stdout
    assert f"{mhlab.host('client1').address} dev lo" not in routes.replace("local ", "")


def trimmed_juicefs_evaluation(path: Path) -> Path:
    """scenarios/juicefs-evaluation.yaml with its layout (Redis and the S3 server on meta1, JuiceFS on client1
    and on the three clients) and its tools where a user of a cluster tries them across hosts: juicefs bench
    (2 threads) and fio's sequential write on the three clients' target, objbench on client1's, vdbench's
    read from the three (bring-your-own: skipped where it is missing), juicefs stats and profile on each
    client meanwhile. Without fio's reads, random writes and vdbench's one-client files: the reads drop the
    page cache, which another test's stuck `sync` can hold for minutes, and they place as the write does."""
    sc = yaml.safe_load((REPO / "scenarios" / "juicefs-evaluation.yaml").read_text())
    for name in ("seq-read-1m", "rand-write-1m", "rand-read-1m", "vdbench-local-big", "vdbench-local-small"):
        del sc["workloads"][name]
    sc["variables"]["bench_threads"]["smoke"] = [2]
    for name in ("juicefs-bench", "seq-write-1m"):
        sc["workloads"][name]["targets"] = ["juicefs-3-clients"]
    for collector in sc["collectors"].values():
        collector.update(targets=["juicefs-3-clients"], workloads=["juicefs-bench", "seq-write-1m"])
    views = []
    for view in sc["report"]["views"]:
        named = [w for w in view.get("workloads", [view.get("workload")]) if w in sc["workloads"]]
        if named:
            views.append({**view, **({"workloads": named} if "workloads" in view else {}),
                          **({"value": 2} if view.get("value") == 4 else {})})
    sc["report"]["views"] = views
    path.write_text(yaml.safe_dump(sc, sort_keys=False, allow_unicode=True))
    return path


@pytest.fixture(scope="module")
def evaluation_run(mhlab, tmp_path_factory):
    """juicefs-evaluation at smoke scale on meta1 + client1-3: (process, run dir, watcher)."""
    for tool in ("juicefs", "redis-server", "fsbench-s3", "fio"):
        require(tool)
    folder = tmp_path_factory.mktemp("juicefs-evaluation")
    inventory = lab_inventory(mhlab, folder / "inventory.yaml", EVALUATION_EXAMPLE)
    scenario = trimmed_juicefs_evaluation(folder / "juicefs-evaluation.yaml")
    return run_on_lab(mhlab, scenario, inventory, folder, watcher(mhlab))


def test_juicefs_evaluation_runs_its_tools_across_the_clients(evaluation_run):
    proc, run, _ = evaluation_run
    assert proc.returncode == 0, proc.stderr[-4000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
    vdbench = cases.loc["vdbench-small-files-3-clients"]
    assert vdbench.status == "ok" or (vdbench.status == "skipped" and "not installed" in vdbench.reason)
    others = cases.drop(index="vdbench-small-files-3-clients")
    assert (others.status == "ok").all(), others[others.status != "ok"][["reason"]].to_string()
    assert cases.loc["objbench", "hosts"] == "client1"
    assert set(cases.drop(index="objbench").hosts) == {"client1 client2 client3"}
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    # fio: each client's own rows beside their sum (every client wrote its 4 files of the dataset)
    fio = rows[(rows.tool == "fio") & (rows.metric == "bandwidth")]
    assert set(fio.host) == {*CLIENTS, "all"}, fio[["host", "value"]].to_string()
    assert (fio.value > 0).all()
    # juicefs bench ran on client1 alone: its figures are client1's, not the three clients' (`all`)
    bench = rows[rows.tool == "juicefs-bench"]
    assert not bench.empty and set(bench.host) == {"client1"}, set(bench.host)
    # juicefs stats watched the mount on each client while the tools ran
    stats = rows[(rows.tool == "juicefs-stats") & (rows.workload == "seq-write-1m")]
    assert set(stats.host) == set(CLIENTS), set(stats.host)


def test_juicefs_evaluation_says_which_tool_ran_on_one_host_and_each_host_did_its_part(evaluation_run, mhlab):
    proc, run, watched = evaluation_run
    one_host = "workloads.juicefs-bench: juicefs-bench runs on client1 only, not on client2, client3: " \
               "it is a one-host tool"
    assert one_host in proc.stderr
    notes = pd.read_csv(run / "run-warnings.csv", keep_default_na=False)
    assert notes.warning.str.startswith(one_host).sum() == 1, notes.to_string()
    # vdbench reaches the three clients itself (an hd= line each), objbench's target is client1's alone
    assert not notes.warning.str.contains("vdbench runs on|objbench runs on").any(), notes.to_string()
    placed = pd.read_csv(run / "placement.csv", keep_default_na=False)
    by = {w: dict(zip(g.host, g.runs, strict=True)) for w, g in placed.groupby("workload")}
    assert by["juicefs-bench"] == {"client1": "all of juicefs-bench", "client2": "nothing", "client3": "nothing"}
    assert set(by["seq-write-1m"].values()) == {"a fio server running the job file (4 jobs)"}
    assert set(by["vdbench-small-files-3-clients"]) == set(CLIENTS)
    assert "nothing" not in by["vdbench-small-files-3-clients"].values()
    assert "juicefs bench" in watched.procs["client1"]
    assert not (watched.procs["client2"] | watched.procs["client3"]) & {"juicefs bench", "juicefs objbench"}
    for client in CLIENTS:
        assert {"juicefs", "fio"} <= watched.procs[client], (client, watched.procs)
        assert "/mnt/fsbench-jfs-3" in watched.mounts[client], (client, watched.mounts)
    assert "/mnt/fsbench-jfs" in watched.mounts["client1"]
    assert "/mnt/fsbench-jfs" not in watched.mounts["client2"] | watched.mounts["client3"]
    assert {"redis-server", "fsbench-s3"} <= watched.procs["meta1"]
    assert not {m for m in watched.mounts["meta1"] if m.startswith("/mnt/")}


def test_juicefs_evaluation_leaves_nothing_on_any_host(evaluation_run, mhlab):
    _, run, _ = evaluation_run
    assert mhlab.wait_clean() == {}
    for h in mhlab.hosts:
        assert not h.path(f"/var/tmp/fsbench/{run.name}").exists(), h.name
        assert [p.name for p in h.path("/mnt").iterdir()] == [], h.name


FAILFAST_SCENARIO = """\
name: mhlab-failfast
monitor: {enabled: false}
targets:
  local:
    description: each client's own folder; on client3 metabench is made to fail (after preflight found it)
    path: /var/tmp/fsbench-mhlab-failfast
    hosts: [clients]
    setup:
      - mkdir -p ${target.path}
      - "[ ${host.name} != client3 ] || mount --bind /bin/false \\"$(command -v metabench)\\""
    teardown:
      - "[ ${host.name} != client3 ] || umount \\"$(command -v metabench)\\""
      - rm -rf ${target.path}
workloads:
  meta:
    tool: metabench
    options: {mode: concurrency, threads: 1, files: 2, bytes: 0}
    timeout: 2m
"""


def test_a_client_that_fails_before_the_barrier_fails_the_case_at_once_naming_it(mhlab, tmp_path):
    """metabench on client3 exits at once while client1 and client2 wait at the case's barrier for it: the
    case fails within seconds naming client3, not at its 2-minute timeout, and nothing is left behind."""
    require("metabench")
    scenario = tmp_path / "failfast.yaml"
    scenario.write_text(FAILFAST_SCENARIO)
    inventory = lab_inventory(mhlab, tmp_path / "inventory.yaml", EXAMPLE)
    proc = run_cli("run", str(scenario), "--inventory", str(inventory), "-o", str(tmp_path / "out"), "--no-report",
                   "--progress", "plain", timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    case = pd.read_csv(run / "cases.csv", keep_default_na=False).iloc[0]
    assert case.status == "failed" and "client3" in case.reason, case.to_dict()
    assert float(case.duration_s) < 60, case.to_dict()
    raw = run / "raw" / case.case_id
    assert (raw / "client3" / "exit_status").read_text() == "1\n"
    # the others were stopped while they waited: their barrier's server saw two parties of three
    assert "3 parties joined" not in (raw / "client1" / "server.out").read_text()
    assert mhlab.wait_clean() == {}
    for client in CLIENTS:
        assert not mhlab.host(client).path("/var/tmp/fsbench-mhlab-failfast").exists(), client


BARRIER_SCENARIO = """\
name: mhlab-barrier
monitor: {enabled: false}
services:
  s3: {kind: s3, hosts: [meta], s3: {buckets: [fsbench]}}
targets:
  s3a:
    kind: s3a
    path: /fsbench
    hosts: [clients]
    services: [s3]
    s3a: {endpoint: "${services.s3.endpoint}", bucket: "${services.s3.bucket}",
          access_key: "${services.s3.access_key}", secret_key: "${services.s3.secret_key}"}
workloads:
  nn: {tool: nnbench, options: {maps: 3, files_per_map: 1}}
"""


def test_nnbench_across_hosts_is_refused_before_anything_runs_without_metabench_on_its_barrier_host(mhlab, tmp_path):
    """NNBench's runner (Java and the jars) is on every client, but the barrier NNBench starts on the first
    client is metabench's, missing there: preflight says so naming client1, before any service starts."""
    for tool in ("java", "metabench", "fsbench-s3"):
        require(tool)
    scenario = tmp_path / "barrier.yaml"
    scenario.write_text(BARRIER_SCENARIO)
    inventory = lab_inventory(mhlab, tmp_path / "inventory.yaml", EXAMPLE)
    binary = shutil.which("metabench") or "metabench"
    stand_in = mhlab.root / "not-a-program"  # the lab's folder: the one of the machine's /tmp a host sees
    stand_in.write_text("metabench is not installed on this host\n")
    anchor = str(mhlab.host("client1").pid)
    subprocess.run(["nsenter", "-t", anchor, "-m", "mount", "--bind", str(stand_in), binary], check=True, timeout=30)
    try:
        proc = run_cli("run", str(scenario), "--inventory", str(inventory), "-o", str(tmp_path / "out"),
                       "--no-report", "--progress", "plain", timeout=300)
    finally:
        subprocess.run(["nsenter", "-t", anchor, "-m", "umount", binary], check=True, timeout=30)
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert "client1" in proc.stderr and "metabench installed" in proc.stderr, proc.stderr[-3000:]
    assert "metabench barrier --listen" in proc.stderr
    assert not list((tmp_path / "out").glob("*/services/s3"))  # refused before the S3 server started
    assert mhlab.wait_clean() == {}
