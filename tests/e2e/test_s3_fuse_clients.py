"""Seed 001 for real: FUSE clients for S3 (s3fs, rclone, JuiceFS, s3fs through the generic fuse kind) on a
real S3 server fsbench starts with per-run keys; the keys never reach the run directory, nothing stays
mounted or running."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd

from tests.conftest import require, require_s3_server, run_cli, write_scenario
from tests.paths import REPO

CLIENTS = ("s3fs", "rclone", "juicefs")
FUSE_TYPES = "fuse.s3fs,fuse.rclone,fuse.juicefs"


def _shims(folder: Path, keys: Path) -> dict[str, str]:
    """PATH entries named like the clients that note the keys each one receives, then run the real one."""
    folder.mkdir()
    for name in CLIENTS:
        real = require(name)
        shim = folder / name
        shim.write_text(
            "#!/bin/sh\n"
            f'for v in "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "$ACCESS_KEY" "$SECRET_KEY" '
            '"$RCLONE_CONFIG_FSB_ACCESS_KEY_ID" "$RCLONE_CONFIG_FSB_SECRET_ACCESS_KEY"; do\n'
            f'  [ -n "$v" ] && printf "%s\\n" "$v" >> {keys}\n'
            "done\n"
            f'exec {real} "$@"\n')
        shim.chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


def _left_mounted(paths: list[str]) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-t", FUSE_TYPES, "-o", "TARGET"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line in paths]


def test_fuse_clients_for_s3_end_to_end(tmp_path):
    for tool in ("fio", "fusermount3", "curl"):
        require(tool)
    require_s3_server()
    keys = tmp_path / "keys.txt"
    env = _shims(tmp_path / "shims", keys)
    proc = run_cli("run", str(REPO / "scenarios" / "s3-fuse-clients.yaml"), "--set", "scale=smoke",
                   "-o", str(tmp_path / "runs"), "--progress", "plain", env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])

    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert len(cases) == 24 and (cases.status == "ok").all(), cases[["case_id", "status", "reason"]].to_string()
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    # the run's own servers are the run's in the monitor's figures, never other users' processes (issue 33)
    assert not {w for w in results.get("warnings", []) if "none started by this run" in w}
    fio = results[(results.tool == "fio") & (results.metric == "bandwidth")]
    per = fio.groupby(["target", "workload"]).value.sum()
    assert len(per) == 24 and (per > 0).all()
    # issue 21: each client's own cache emptied before the reads that measure S3 (the proof beside them),
    # so every such read is served by the store; the re-read keeps it: s3fs-cache reads its disk copy
    for target in ("rclone", "juicefs", "s3fs-cache"):
        proof = json.loads((run / "raw" / f"{target}__seq-read-1m__r1" / "local" / "drop_client_cache.json").read_text())
        assert proof["ok"] and proof["folders"][0]["bytes_after"] < 64 * 1024, proof  # its folders, no data
    assert not (run / "raw" / "s3fs__seq-read-1m__r1" / "local" / "drop_client_cache.json").exists()  # none kept
    reads = fio[(fio.operation == "read") & (fio.workload != "seq-reread-1m")]
    assert (reads.validity == "ok").all(), reads[["target", "workload", "validity_detail"]].to_string()
    reread = fio[fio.workload == "seq-reread-1m"].set_index("target")
    assert reread.loc["s3fs-cache", "validity"] == "flagged" and reread.loc["s3fs", "validity"] == "ok"
    # rclone uploads 5 s after a file's close: the watch waits that long (and 2 s more) for the store, so its
    # flagged write carries the durable bandwidth the store saw, not only "the backend had 0 %"
    rclone_write = fio[(fio.target == "rclone") & (fio.operation == "write")
                       & (fio.workload == "seq-write-1m")].iloc[0]
    assert rclone_write.validity == "flagged" and "durable bandwidth at most" in rclone_write.validity_detail, \
        rclone_write.validity_detail
    files = results[(results.metric == "file_rate") & results.workload.str.startswith("small-files")]
    assert set(files.unit) == {"file/s"} and len(files.groupby(["target", "workload"])) == 8
    # exactly the files asked for (smoke: 2 threads x 5 + 2 x 5), reported as one group per case (one row)
    small = results[(results.tool == "fio") & (results.metric == "ops") & results.workload.str.startswith("small-")]
    assert set(small.job) == {"small-files"} and len(small) == 8 and set(small.value) == {20.0}, small
    # the client's FUSE process measured during every case: s3fs for both s3fs targets, rclone, juicefs
    procs = results[(results.operation == "process") & (results.metric == "memory_peak")]
    seen = {(t, j) for t, j in zip(procs.target, procs.job)}
    assert {("s3fs", "s3fs"), ("rclone", "rclone"), ("juicefs", "juicefs"), ("s3fs-cache", "s3fs")} <= seen
    assert not [(t, j) for t, j in seen if t != "juicefs" and j == "juicefs"]  # no ghost of an earlier client

    # the small files a write case left are the ones the read case read: nothing laid out again
    layout = (run / "raw" / "rclone__small-files-read__r1" / "local" / "prepare" / "job.fio").read_text()
    assert "filename_format=small-files.0.$jobnum.$filenum" in layout
    assert "filename_format=small-files.1.$jobnum.$filenum" in layout and "new_group=0" in layout

    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert "use_path_request_style" in hosts.loc[0, "client_s3fs"]
    assert "--vfs-cache-mode writes" in hosts.loc[0, "client_rclone"]
    assert hosts.loc[0, "client_s3fs-cache"].startswith("AWS_ACCESS_KEY_ID=\"$FSBENCH_SECRET_SERVICES_S3_ACCESS_KEY\"")
    assert hosts.loc[0, "client_version_rclone"].startswith("rclone v")
    assert "fuse.rclone" in hosts.loc[0, "mount_rclone"]

    # per test, one row per client: bandwidth, client CPU, client peak memory, ratios to s3fs
    html = (run / "report.html").read_text()
    for title in ("Sequential write of one big file, one thread", "Reading many 128 KiB files, many threads"):
        assert title in html
    assert "client CPU" in html and "client peak memory" in html and "file rate" in html
    # seed 001's findings, each judged in the summary; one run per client at smoke scale decides none of them
    findings = _findings_section((run / "summary.md").read_text())
    assert len(findings) == 4 and all("**not decided**" in f for f in findings), findings
    assert all("one run per target cannot tell a difference from noise" in f or "flagged" in f for f in findings)

    # the generated keys reached the clients, and nothing in the run directory
    given = {k for k in keys.read_text().split() if k}
    assert len(given) == 2 and all(len(k) in (20, 40) for k in given)
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaked = [k for k in given if k.encode() in data]
            assert not leaked, f"a generated key is in {path.relative_to(run)}"

    # nothing stays mounted or running; the scratch space is gone
    paths = ["/mnt/fsbench-s3fs", "/mnt/fsbench-rclone", "/mnt/fsbench-juicefs-s3", "/mnt/fsbench-s3fs-cache"]
    assert _left_mounted(paths) == []
    assert not [p for p in paths if Path(p).exists()]
    left = subprocess.run(["pgrep", "-af", run.name], capture_output=True, text=True).stdout
    assert not [line for line in left.splitlines() if "pgrep" not in line], left
    assert not list(Path("/var/tmp/fsbench").glob(f"{run.name}*"))


def test_the_s3_service_falls_back_to_moto(tmp_path):
    require("moto_server")
    require("curl")
    scenario = write_scenario(tmp_path, """
        name: s3-moto
        hosts: {local: {transport: local}}
        services:
          s3:
            kind: s3
            hosts: [local]
            s3: {server: moto, buckets: [one, two]}
        targets:
          here:
            path: ${scratch}
            services: [s3]
            # moto refuses anonymous reads: requests are signed with the generated keys (SigV4)
            setup:
              - curl -sf ${sign} -o /dev/null ${services.s3.endpoint}/two
              - printf 'hello' > ${target.path}/object
              - curl -sf ${sign} -T ${target.path}/object ${services.s3.endpoint}/${services.s3.bucket}/hello
              - curl -sf ${sign} ${services.s3.endpoint}/one/hello | grep -qx hello
        workloads:
          w: {tool: fio, options: {rw: write, bs: 4k, size: 64k}}
        """.replace("${scratch}", str(tmp_path / "t")).replace(
        "${sign}", "--aws-sigv4 aws:amz:${services.s3.region}:s3 --user ${services.s3.access_key}:${services.s3.secret_key}"))
    (tmp_path / "t").mkdir()
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "runs"), "--progress", "plain", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    assert (run / "services" / "s3").exists()
    server = list((run / "services" / "s3").rglob("start-s3.sh"))
    assert server and "moto_server" in server[0].read_text()
    left = subprocess.run(["pgrep", "-af", "moto_server"], capture_output=True, text=True).stdout
    assert run.name not in left


def test_a_mount_that_never_appears_is_reported_with_the_clients_log(tmp_path):
    require("s3fs")
    # s3fs against a port where no server listens: it may return 0 and never mount; fsbench says so
    scenario = write_scenario(tmp_path, f"""
        name: s3-nothing
        hosts: {{local: {{transport: local}}}}
        targets:
          s3fs:
            kind: s3fs
            path: {tmp_path / "mnt"}
            ready_timeout: 5s
            s3fs: {{endpoint: "http://127.0.0.1:9", bucket: nothing, options: [retries=1]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 4k, size: 64k}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "runs"), "--progress", "plain", timeout=300)
    assert proc.returncode != 0
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    reason = cases.loc[0, "reason"]
    assert cases.loc[0, "status"] == "failed" and re.search(r"s3fs|mount", reason), reason
    # the client's own words are in the reason, its log in the run directory, its mount point removed
    assert "the end of its log (targets/s3fs/s3fs-local.log)" in reason
    assert (run / "targets" / "s3fs" / "s3fs-local.log").stat().st_size > 0
    assert _left_mounted([str(tmp_path / "mnt")]) == [] and not (tmp_path / "mnt").exists()
    shutil.rmtree(tmp_path / "runs", ignore_errors=True)


def _findings_section(summary: str) -> list[str]:
    """The lines of summary.md's findings section (the seed's findings with their verdict here)."""
    section = summary.split("## The study's findings, here", 1)[1].split("## Flagged", 1)[0]
    return [line for line in section.splitlines() if line.startswith("- ")]
