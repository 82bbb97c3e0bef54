"""The real metabench (built by install.sh into /usr/local/bin) through `fsbench run`: on a tmpfs mount,
across two SSH hosts, its own refusals, and `fsbench deploy` building or uploading it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pandas as pd

from fsbench.tools.metabench.parse import CALLS, CONCURRENCY
from tests.conftest import require, run_cli, write_scenario
from tests.e2e.test_multihost import inventory

TMPFS_MAGIC = "0x1021994"


def _run(scenario: Path, out: Path, *extra: str) -> Path:
    proc = run_cli("run", str(scenario), "-o", str(out), "--progress", "plain", *extra)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return Path(proc.stdout.splitlines()[0])


def test_both_modes_on_a_tmpfs_mount(tmp_path):
    require("metabench")
    mount = tmp_path / "tmpfs"
    scenario = write_scenario(tmp_path, f"""\
        name: metabench-tmpfs
        targets:
          tmpfs:
            path: {mount}
            setup: ["mkdir -p ${{target.path}}", "mount -t tmpfs -o size=256m fsbench-mb ${{target.path}}"]
            teardown: ["umount ${{target.path}}", "rmdir ${{target.path}}"]
        workloads:
          calls:
            tool: metabench
            options: {{iterations: 50, warmup: 5}}
          nnbench-like:
            tool: metabench
            options: {{mode: concurrency, files: 50, bytes: 1k}}
            sweep: {{product: {{threads: [1, 4]}}}}
        report:
          views:
            - {{view: table, workload: calls, title: Metadata calls, metrics: [latency_mean]}}
            - {{view: chart, workload: nnbench-like, param: threads, per: operation, metrics: [rate]}}
        """)
    run = _run(scenario, tmp_path / "out")
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert list(cases.status) == ["ok"] * 3, cases[["case_id", "reason"]].to_string()
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    rows = results[results.tool == "metabench"]

    calls = rows[rows.workload == "calls"].pivot_table(index="operation", columns="metric", values="value")
    assert set(calls.index) == set(CALLS)  # every operation of seed 000 measured through the mount
    assert (calls.ops == 50).all() and (calls.latency_mean > 0).all()
    assert (calls.latency_min <= calls.latency_p50).all() and (calls.latency_p50 <= calls.latency_p99).all()
    assert (calls.latency_p99 <= calls.latency_max).all() and (calls.latency_mean < 0.1).all()
    assert set(rows[rows.metric.str.startswith("latency")].unit) == {"s"}

    conc = rows[(rows.workload == "nnbench-like") & (rows.metric == "rate")]
    assert set(conc.operation) == set(CONCURRENCY) and (conc.value > 0).all() and set(conc.unit) == {"op/s"}
    assert sorted(conc.threads.astype(float).astype(int).unique()) == [1, 4]
    ops = rows[(rows.workload == "nnbench-like") & (rows.metric == "ops")]
    assert set(zip(ops.threads.astype(float).astype(int), ops.value)) == {(1, 50.0), (4, 200.0)}  # threads x files each

    # metabench ran in the case's own folder on the mount, the JSON says so, and nothing was left there
    raw = run / "raw" / "tmpfs__calls__r1" / "local"
    command = (raw / "command").read_text().split()
    folder = command[command.index("--dir") + 1]
    assert re.fullmatch(rf"{re.escape(str(mount))}/fsbench-{run.name}-[0-9a-f]{{12}}/tmpfs__calls__r1", folder)
    doc = json.loads((raw / "metabench.json").read_text())
    assert doc["dir"] == folder and doc["fs_magic"] == TMPFS_MAGIC and doc["complete"] is True
    assert not mount.exists()  # unmounted and removed by the teardown, so nothing stayed behind

    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert hosts.loc[0, "metabench_version"] == "metabench 1.1.0"
    html = (run / "report.html").read_text()
    assert "<h2>Metadata calls" in html and "Readdir 1k" in html and "µs" in html
    assert "rate by threads" in html  # seed 002's curve shape, through a mount


def test_the_binary_stays_in_its_folder_and_says_what_is_wrong(tmp_path):
    binary = require("metabench")
    folder = tmp_path / "case"
    folder.mkdir()
    (tmp_path / "neighbour").write_text("untouched")
    proc = subprocess.run([binary, "calls", "--dir", str(folder), "--output", "out.json", "--iterations", "5",
                           "--warmup", "1", "--ops", "mkdir,rename,symlink,link,readdir_10"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert list(folder.iterdir()) == []  # its working folder inside --dir is gone again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case", "neighbour", "out.json"]
    doc = json.loads((tmp_path / "out.json").read_text())
    assert [o["name"] for o in doc["operations"]] == ["mkdir", "rename", "symlink", "link", "readdir_10"]

    def refused(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess:
        return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, timeout=60)

    bad = refused("calls", "--dir", str(folder), "--output", "x.json", "--ops", "mkdir,newchunk")
    assert bad.returncode == 2 and "newchunk is JuiceFS-internal" in bad.stderr
    bad = refused("concurrency", "--dir", str(folder), "--output", "x.json", "--ops", "delete,create_write")
    assert bad.returncode == 2 and "create_write cannot come after delete" in bad.stderr
    bad = refused("calls", "--dir", str(tmp_path / "missing"), "--output", "x.json")
    assert bad.returncode == 2 and "is not a folder" in bad.stderr
    assert refused("calls", "--dir", str(folder), "--output", "x.json", "--threads", "0").returncode == 2
    assert not (tmp_path / "x.json").exists() and list(folder.iterdir()) == []  # refused before touching anything
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    if os.geteuid() != 0:  # root writes anywhere: a read-only mount stands in below
        bad = refused("calls", "--dir", str(locked), "--output", "x.json")
        assert bad.returncode == 3 and "cannot make its working folder" in bad.stderr
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() == 0:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "fsbench-mb-ro", str(ro)], check=True)
        try:
            bad = refused("calls", "--dir", str(ro), "--output", "x.json")
            assert bad.returncode == 3 and "Read-only file system" in bad.stderr
        finally:
            subprocess.run(["umount", str(ro)], check=True)
    assert refused("--version").stdout == "metabench 1.1.0\n"


def test_across_two_ssh_hosts_each_in_its_own_folder(lab, tmp_path):
    require("metabench")
    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: metabench-two-hosts
        inventory: inventory.yaml
        hosts: {{h2: {{}}, h3: {{}}}}
        targets:
          shared:
            path: {tmp_path}/shared
            hosts: [h2, h3]
            setup: ["mkdir -p ${{target.path}}"]
            teardown: ["rm -rf ${{target.path}}"]
        workloads:
          conc:
            tool: metabench
            options: {{mode: concurrency, threads: 2, files: 40}}
        """)
    run = _run(scenario, tmp_path / "out", "--no-report")
    case = run / "raw" / "shared__conc__r1"
    docs = {h: json.loads((case / h / "metabench.json").read_text()) for h in ("h2", "h3")}
    for h, doc in docs.items():  # one run per host, each in its own subfolder of the case's folder
        assert re.fullmatch(rf"{re.escape(str(tmp_path))}/shared/fsbench-{run.name}-[0-9a-f]{{12}}/shared__conc__r1/{h}",
                            doc["dir"])
        assert (case / h / "exit_status").read_text() == "0\n" and doc["barrier"].startswith("127.0.0.2:")
    # the barrier on the first host started every operation on both hosts at once
    server = (case / "h2" / "server.out").read_text()
    assert "2 parties joined" in server and "4 rounds, every party left" in server
    for a, b in zip(docs["h2"]["operations"], docs["h3"]["operations"]):
        assert abs(a["started"] - b["started"]) < 0.05, (a["name"], a["started"], b["started"])
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    rates = results[(results.tool == "metabench") & (results.metric == "rate")]
    by = rates.pivot_table(index="operation", columns="host", values="value")
    assert set(by.columns) == {"h2", "h3", "all"} and set(by.index) == set(CONCURRENCY)
    assert ((by["all"] - by["h2"] - by["h3"]).abs() < 1e-6 * by["all"]).all()  # the aggregate adds the hosts
    ops = results[(results.tool == "metabench") & (results.metric == "ops") & (results.host == "all")]
    assert set(ops.value) == {160.0}  # 2 hosts x 2 threads x 40 files per operation
    assert not (tmp_path / "shared").exists()


def test_deploy_builds_metabench_on_a_host_or_uploads_this_machine_s(lab, tmp_path):
    require("metabench")
    require("gcc")
    inventory(lab, tmp_path / "inventory.yaml")

    def scenario(dest: Path, method: str) -> Path:
        return write_scenario(tmp_path, f"""\
            name: deploy-metabench
            inventory: inventory.yaml
            hosts: {{h2: {{}}}}
            deploy: {{metabench: {{method: {method}}}}}
            targets:
              t: {{path: {tmp_path}/t, hosts: [h2]}}
            workloads:
              calls: {{tool: metabench, options: {{binary: {dest}}}}}
            """, name=f"{method}.yaml")

    built = tmp_path / "built" / "bin" / "metabench"
    proc = run_cli("deploy", str(scenario(built, "build")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = proc.stdout.splitlines()[1]
    before, after = row.split()[2], " ".join(row.split()[3:5])  # host, tool, before, after, what was done
    assert before == "missing" and after == "metabench 1.1.0" and "built metabench 1.1.0 there from its source" in row
    assert subprocess.run([str(built), "--version"], capture_output=True, text=True).stdout == "metabench 1.1.0\n"

    uploaded = tmp_path / "uploaded" / "metabench"
    proc = run_cli("deploy", str(scenario(uploaded, "auto")))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "uploaded this machine's" in proc.stdout, proc.stdout
    assert uploaded.read_bytes() == Path(os.path.realpath(require("metabench"))).read_bytes()


def test_a_host_without_it_is_told_how_to_get_it(tmp_path):
    scenario = write_scenario(tmp_path, f"""\
        name: no-metabench
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads: {{calls: {{tool: metabench, options: {{binary: {tmp_path}/nowhere/metabench}}}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain")
    assert proc.returncode == 1, proc.stderr
    assert "metabench is not installed on local" in proc.stderr and "`fsbench deploy` puts it there" in proc.stderr
