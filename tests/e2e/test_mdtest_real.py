"""The real mdtest (IOR 4.0.0, built by install.sh) under real mpirun: locally and across SSH hosts."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd

from fsbench.tools.mdtest.options import OPTIONS, SWITCH
from tests.conftest import require, run_cli, write_scenario
from tests.e2e.test_multihost import inventory

# two emulated hosts share one kernel: Open MPI's shared-memory transport (vader) crashes between them
TCP_ONLY = '[--mca, btl, "self,tcp", --mca, btl_tcp_if_include, lo, --mca, oob_tcp_if_include, lo]'


def _results(run: Path) -> pd.DataFrame:
    results = pd.read_csv(run / "results.csv")
    return results[results.tool == "mdtest"]


def test_mdtest_locally_with_three_ranks_and_three_iterations(tmp_path):
    require("mdtest")
    require("mpirun")
    scenario = write_scenario(tmp_path, f"""\
        name: mdtest-local
        targets:
          t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"], teardown: ["rm -rf ${{target.path}}"]}}
        workloads:
          meta:
            tool: mdtest
            options: {{n: 30, u: true, z: 2, i: 3, tasks: 3}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", check=True)
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "t__meta__r1" / "local"
    assert (raw / "command").read_text().startswith("mpirun -np 3 --oversubscribe")
    stdout = (raw / "stdout").read_text()
    assert "mdtest-4.0.0 was launched with 3 total task(s)" in stdout and "SUMMARY rate: (of 3 iterations)" in stdout
    rows = _results(run)
    # seed 004's table: Max / Min / Mean / StdDev per operation, exactly as mdtest printed them
    assert set(rows["stat"]) == {"max", "min", "mean", "stddev"}
    assert set(rows.iterations) == {3} and set(rows.tasks) == {3}
    creation = rows[(rows.operation == "file_creation") & (rows.metric == "rate")].set_index("stat").value
    assert creation["max"] >= creation["mean"] >= creation["min"] > 0
    printed = re.search(r"^\s+File creation\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", stdout, re.M)
    assert [float(x) for x in printed.groups()] == [creation[s] for s in ("max", "min", "mean", "stddev")]
    assert {"directory_creation", "directory_rename", "file_read", "tree_removal"} <= set(rows.operation)
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert hosts.mdtest_version[0].startswith("mdtest-4.0.0 (Open MPI ")
    assert not (tmp_path / "t").exists()


def test_separate_phases_drop_the_cache_between_them_and_keep_each_phase_own_rows(tmp_path):
    require("mdtest")
    scenario = write_scenario(tmp_path, f"""\
        name: phases
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          files:
            tool: mdtest
            drop_caches: true
            options: {{F: true, n: 200, w: 4096, e: 4096, u: true, tasks: 2, separate_phases: true,
                       W: 30, x: stonewall.status}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", check=True)
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "t__files__r1" / "local"
    commands = (raw / "command").read_text().splitlines()
    assert [c.split()[-1] for c in commands] == ["-C", "-T", "-E", "-r"]
    # the stonewall status file is in the case folder: the create phase wrote it, the later phases read it
    status = re.search(r"-x (\S+)", commands[0]).group(1)
    assert re.fullmatch(rf"{tmp_path}/t/fsbench-[^/]+/t__files__r1/stonewall.status", status), status
    assert "Could not read stonewall status file" not in (raw / "stdout").read_text() + (raw / "stderr").read_text()
    assert not list(run.rglob("stonewall.status")) and not (tmp_path / "stonewall.status").exists()
    proofs = sorted(p.name for p in raw.glob("drop_caches*.json"))
    assert proofs == ["drop_caches-1.json", "drop_caches-2.json", "drop_caches-3.json", "drop_caches.json"]
    assert all(json.loads((raw / p).read_text())["ok"] for p in proofs)
    rows = _results(run)
    mean = rows[(rows["stat"] == "mean") & (rows.metric == "rate")].set_index("operation")
    # each phase measured its own operations; the 0.000 rows of the phases it did not run are gone
    assert dict(zip(mean.index, mean.phase)) == {"file_creation": "create", "tree_creation": "create",
                                                 "file_stat": "stat", "file_read": "read",
                                                 "file_removal": "remove", "tree_removal": "remove"}
    assert (mean.value > 0).all()


def test_seed_000_layout_scaled_down_across_two_ssh_hosts(lab, tmp_path):
    """2 client hosts x 2 MPI slots, mdtest -b 3 -z 1 -I 10 -u -i 3 over mpirun's ssh launch agent, its create,
    stat, read and remove phases as separate runs with the page cache dropped on both hosts before each."""
    require("mdtest")
    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: mdtest-two-hosts
        inventory: inventory.yaml
        hosts: {{h2: {{slots: 2}}, h3: {{slots: 2}}}}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2, h3], setup: ["mkdir -p ${{target.path}}"],
              teardown: ["rm -rf ${{target.path}}"]}}
        workloads:
          meta:
            tool: mdtest
            drop_caches: true
            options: {{b: 3, z: 1, I: 10, u: true, i: 3, tasks: 4, separate_phases: true,
                       mpirun_args: {TCP_ONLY[:-1]}, --display-map]}}
        """)
    logins = lab.accepted_logins()
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "t__meta__r1" / "controller"
    assert (raw / "hostfile").read_text() == "127.0.0.2 slots=2\n127.0.0.3 slots=2\n"
    commands = (raw / "command").read_text().splitlines()
    assert [c.split()[-1] for c in commands] == ["-C", "-T", "-E", "-r"]
    assert all("--hostfile hostfile" in c and f"-p {lab.port}" in c and "StrictHostKeyChecking=yes" in c
               for c in commands)
    # mpirun's map in every phase: two ranks on each host
    for i in range(4):
        out = (raw / f"stdout.{i}").read_text() + (raw / f"stderr.{i}").read_text()
        for address in ("127.0.0.2", "127.0.0.3"):
            assert re.search(rf"Data for node: {re.escape(address)}\s+Num slots: 2\s+Max slots: 0\s+Num procs: 2",
                             out), out[:2000]
        assert "mdtest-4.0.0 was launched with 4 total task(s) on 2 node(s)" in out
    assert lab.accepted_logins() - logins >= 8  # mpirun started its daemons over ssh on both hosts, per phase
    # the cache was dropped on both hosts before the first phase and between phases, each with its proof
    for host in ("h2", "h3"):
        proofs = sorted((run / "raw" / "t__meta__r1" / host).glob("drop_caches*.json"))
        assert [p.name for p in proofs] == ["drop_caches-1.json", "drop_caches-2.json", "drop_caches-3.json",
                                            "drop_caches.json"]
        for p in proofs:
            proof = json.loads(p.read_text())
            assert proof["ok"] and proof["host"] == host and proof["cached_after_bytes"] is not None
    rows = _results(run)
    assert set(rows.tasks) == {4} and set(rows.iterations) == {3}
    assert set(rows["stat"]) == {"max", "min", "mean", "stddev"}
    # each phase's Max / Min / Mean / StdDev exactly as that phase's mdtest printed them
    labels = {"create": ("Directory creation", "File creation", "Tree creation"),
              "stat": ("Directory stat", "File stat"), "read": ("File read",),
              "remove": ("Directory removal", "File removal", "Tree removal")}
    for i, (phase, names) in enumerate(labels.items()):
        stdout = (raw / f"stdout.{i}").read_text()
        assert "SUMMARY rate: (of 3 iterations)" in stdout
        for name in names:
            operation = name.lower().replace(" ", "_")
            got = rows[(rows.operation == operation) & (rows.metric == "rate") & (rows.phase == phase)]
            printed = re.search(rf"^\s+{name}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", stdout, re.M)
            assert printed, (phase, name)
            assert [float(x) for x in printed.groups()] == \
                [got.set_index("stat").value[s] for s in ("max", "min", "mean", "stddev")], (phase, name)
    mean = rows[(rows["stat"] == "mean") & (rows.metric == "rate")]
    assert (mean[mean.operation == "directory_creation"].value > 0).all()
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert set(hosts.mdtest_version) == {hosts.mdtest_version[0]} and hosts.mdtest_version[0].startswith("mdtest-4")


def test_the_option_table_is_mdtest_s_own_help():
    """fsbench's list of mdtest options (what validation accepts) is the one the installed mdtest prints."""
    require("mdtest")
    text = subprocess.run(["mdtest", "--help"], capture_output=True, text=True, timeout=60).stdout
    printed = set()
    for line in text.splitlines():
        m = re.match(r"^\s+(-\w|--[\w.-]+)(?:, --([\w.-]+))?(?:=\S*)?\s", line)
        if m:
            printed |= {m.group(1).lstrip("-")} | ({m.group(2)} if m.group(2) else set())
    assert printed == set(OPTIONS), (sorted(printed - set(OPTIONS)), sorted(set(OPTIONS) - printed))
    takes_value = {m.group(1).lstrip("-") for m in re.finditer(r"^\s+(-\w|--[\w.-]+)=", text, re.M)}
    assert takes_value == {k for k, kind in OPTIONS.items() if kind != SWITCH}


def test_a_host_without_mdtest_stops_the_run_before_anything_ran(tmp_path):
    require("mdtest")
    scenario = write_scenario(tmp_path, f"""\
        name: no-mdtest
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          meta: {{tool: mdtest, options: {{n: 10}}}}
        """)
    path = ":".join(p for p in os.environ["PATH"].split(":") if not (Path(p) / "mdtest").exists())
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), env={"PATH": path})
    assert proc.returncode == 4, proc.stderr
    assert "mdtest is not installed here" in proc.stderr and "fsbench deploy" in proc.stderr
    assert not (tmp_path / "out").exists()
    optional = write_scenario(tmp_path, scenario.read_text().replace("tool: mdtest,", "tool: mdtest, optional: true,"),
                              "optional.yaml")
    proc = run_cli("run", str(optional), "-o", str(tmp_path / "out"), "--no-report", env={"PATH": path})
    assert proc.returncode == 0, proc.stderr
    cases = pd.read_csv(Path(proc.stdout.splitlines()[0]) / "cases.csv", keep_default_na=False)
    assert list(cases.status) == ["skipped"] and "mdtest is not installed on local" in cases.reason[0]


def test_a_crashing_rank_fails_the_case_with_mpirun_s_reason(tmp_path):
    """A stand-in: the real mdtest does not crash on demand. Rank 1 dies by SIGSEGV; rank 0 prints a result."""
    require("mpirun")
    real = require("mdtest")
    stand_in = tmp_path / "bin" / "mdtest"
    stand_in.parent.mkdir()
    # the version probe (-n 1 without mpirun) is answered by the real mdtest; under mpirun rank 1 crashes
    stand_in.write_text("#!/bin/sh\n"
                        f'[ -z "$OMPI_COMM_WORLD_RANK" ] && exec {real} "$@"\n'
                        '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && kill -SEGV $$\n'
                        "sleep 1; echo 'SUMMARY rate: (of 1 iterations)'\n")
    stand_in.chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: crash
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          meta: {{tool: mdtest, options: {{n: 10, tasks: 2, binary: {stand_in}}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 1, proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert cases.status[0] == "failed" and "mdtest failed" in cases.reason[0] and "exit status" in cases.reason[0]
    raw = run / "raw" / "t__meta__r1" / "local"
    said = (raw / "stderr").read_text() + (raw / "stdout").read_text()
    # mpirun's own reason: the signal, or, when it reaped the rank's shell first (seen under load), its exit
    # status ("1 process returned a non-zero exit code")
    assert any(w in said for w in ("signal 11", "Segmentation fault", "returned\na non-zero exit code",
                                   "returned a non-zero exit code")), said[-2000:]


def test_a_hung_mdtest_is_killed_at_its_timeout(tmp_path):
    """A stand-in that never ends (the real one does): the case times out, no rank is left."""
    require("mpirun")
    real = require("mdtest")
    stand_in = tmp_path / "bin" / "mdtest"
    stand_in.parent.mkdir()
    stand_in.write_text(f'#!/bin/sh\n[ -z "$OMPI_COMM_WORLD_RANK" ] && exec {real} "$@"\nexec sleep 600\n')
    stand_in.chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: hang
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          meta: {{tool: mdtest, timeout: 3s, options: {{n: 10, tasks: 2, binary: {stand_in}}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=120)
    assert proc.returncode == 1, proc.stderr
    cases = pd.read_csv(Path(proc.stdout.splitlines()[0]) / "cases.csv", keep_default_na=False)
    assert cases.status[0] == "failed" and "timed out after 3s" in cases.reason[0]
    left = subprocess.run(["pgrep", "-f", str(stand_in)], capture_output=True, text=True).stdout
    assert left == "", left
