"""Seed 002 for real: NNBench over a real HDFS (NameNode and DataNode JVMs from the Maven jars), over S3A
against fsbench's S3 server and over JuiceFS's Hadoop SDK on Redis. HDFS and the S3 server are started
once for the whole test session (by fsbench's own service kinds) and joined by the runs as existing
services; every run must leave nothing behind and no key in its run directory."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from fsbench import hadoop
from fsbench.scenario.model import Service
from fsbench.services import SERVICE_KINDS
from fsbench.targets.services import ServiceSession
from fsbench.transport.local import LocalTransport
from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO

OPERATIONS = {"create_write", "open_read", "rename", "delete"}


@dataclass
class HadoopLab:
    """The session's HDFS and S3 server: where they listen."""

    hdfs_url: str
    hdfs_http: str
    s3_port: str
    s3_endpoint: str
    logs: Path

    def hdfs_list(self, path: str) -> list[str]:
        """Names in an HDFS folder (WebHDFS); [] when it does not exist."""
        try:
            with urllib.request.urlopen(f"{self.hdfs_http}/webhdfs/v1{path}?op=LISTSTATUS", timeout=10) as r:
                return [s["pathSuffix"] for s in json.load(r)["FileStatuses"]["FileStatus"]]
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise

    def s3_keys(self, prefix: str) -> str:
        """The bucket's listing under prefix (fsbench-s3 checks no signature)."""
        with urllib.request.urlopen(f"{self.s3_endpoint}/fsbench?prefix={prefix}", timeout=10) as r:
            return r.read().decode()


def _start(kind: str, settings: object, folder: Path, name: str) -> ServiceSession:
    svc = Service(name=name, kind=kind, hosts=("local",), ready_timeout_s=240.0, settings=settings)
    session = ServiceSession(svc, "local", LocalTransport("local"), f"test-{secrets.token_hex(3)}",
                             str(folder / "scratch"), folder / "logs" / name, lambda e: None)
    reason = session.start()
    if reason:
        session.stop()
        pytest.fail(reason)
    return session


@pytest.fixture(scope="session")
def hadoop_lab() -> Iterator[HadoopLab]:
    """A single-node HDFS and an S3 server, started once for the session by fsbench's service kinds."""
    for tool in ("java", "curl", "fsbench-s3", "redis-server", "juicefs", "python3"):
        require(tool)
    assert Path(hadoop.home(), "fsbench-hadoop.jar").is_file(), hadoop.MISSING.format(home=hadoop.home())
    folder = Path(tempfile.mkdtemp(prefix="fsbench-hadoop-lab-", dir="/var/tmp"))
    hdfs = _start("hdfs", SERVICE_KINDS.get("hdfs").settings(None), folder, "hdfs")
    try:
        s3 = _start("s3", SERVICE_KINDS.get("s3").settings({"buckets": ["fsbench"], "server": "fsbench-s3",
                                                            "backend": "mem", "region": "us-east-1"}), folder, "s3")
    except BaseException:
        hdfs.stop()
        raise
    values = {**hdfs.exported(), **s3.exported()}
    try:
        yield HadoopLab(values["services.hdfs.url"], f"http://127.0.0.1:{values['services.hdfs.port_http']}",
                        values["services.s3.port"], values["services.s3.endpoint"], folder / "logs")
    finally:
        s3.stop()
        hdfs.stop()
        # the NameNode's and DataNode's logs were fetched at stop, before their folder goes
        assert (folder / "logs" / "hdfs" / "logs" / "namenode.log").stat().st_size > 0
        shutil.rmtree(folder, ignore_errors=True)


def _mounted(path: str) -> bool:
    return subprocess.run(["findmnt", "-rn", "-o", "TARGET", path], capture_output=True).returncode == 0


def _java_of(run: Path) -> list[str]:
    out = subprocess.run(["pgrep", "-af", run.name], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_seed_002_scenario_on_the_sessions_hdfs_and_s3(hadoop_lab, tmp_path):
    """scenarios/hdfs-s3-juicefs.yaml itself at smoke scale, joining the session's HDFS and S3 server."""
    proc = run_cli("run", str(REPO / "scenarios" / "hdfs-s3-juicefs.yaml"), "--set", "scale=smoke",
                   "--set", "hdfs_managed=false", "--set", f"hdfs_uri={hadoop_lab.hdfs_url}",
                   "--set", "s3_managed=false", "--set", f"s3_port={hadoop_lab.s3_port}",
                   "-o", str(tmp_path / "runs"), "--progress", "plain", timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert len(cases) == 8 and (cases.status == "ok").all(), cases[["case_id", "status", "reason"]].to_string()

    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    nn = results[(results.tool == "nnbench") & (results.job == "")]
    for metric in ("rate", "latency_mean", "ops", "exceptions"):
        got = nn[nn.metric == metric]
        assert set(got.operation) == OPERATIONS and len(got) == 4 * 6, (metric, got)
    assert (nn[nn.metric.isin(["rate", "latency_mean"])].value > 0).all()
    ops = nn[nn.metric == "ops"].merge(cases[["case_id", "param_maps"]], on="case_id")
    assert (ops.value == ops.param_maps.astype(int) * 2).all()  # every file operation succeeded: maps x files_per_map
    assert (nn[nn.metric == "exceptions"].value == 0).all()
    assert set(nn[nn.metric == "late_maps"].unit) == {"count"}
    parts = results[(results.tool == "nnbench") & (results.job != "")]
    assert {"create", "close", "open"} <= set(parts.operation)

    # the same operations through a JuiceFS FUSE mount, by fsbench's metabench at 1 and 20 threads
    meta = results[(results.tool == "metabench") & (results.metric == "rate")]
    assert set(meta.target) == {"juicefs-fuse"} and set(meta.operation) == OPERATIONS and len(meta) == 8
    assert (meta.value > 0).all()
    assert not _mounted("/mnt/fsbench-hdfs-s3-juicefs")

    # the seed's views
    html = (run / "report.html").read_text()
    for title in ("TPS by concurrency, per system", "TPS by concurrency, per operation",
                  "Latency per operation at 20 concurrent clients",
                  "TPS by concurrency through the JuiceFS FUSE mount (metabench)"):
        assert title in html
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert hosts.loc[0, "client_version_hdfs"].startswith("Hadoop 3.3.6")
    assert "fs.s3a.path.style.access=true" in hosts.loc[0, "client_s3a"]
    assert "fs.jfs.impl=io.juicefs.JuiceFileSystem" in hosts.loc[0, "client_juicefs"]

    # nothing left: the run's folders on HDFS and S3, its JVMs; the JuiceFS volume was the 1.0 SDK's
    assert not [n for n in hadoop_lab.hdfs_list("/fsbench") if run.name in n]
    assert f"fsbench/fsbench-{run.name}/" not in hadoop_lab.s3_keys("fsbench/")
    assert _java_of(run) == []
    assert not list(Path("/var/tmp/fsbench").glob(f"{run.name}*"))


def test_keys_and_passwords_reach_the_clients_only_through_the_environment(hadoop_lab, tmp_path):
    """S3A keys from `secrets:`, a Redis password for JuiceFS's SDK (META_PASSWORD): used, never written."""
    access, secret, password = (f"AK{secrets.token_hex(9).upper()}", secrets.token_urlsafe(30),
                                f"pw-{secrets.token_hex(8)}")
    scenario = write_scenario(tmp_path, f"""
        name: hadoop-secrets
        hosts: {{local: {{transport: local}}}}
        secrets:
          ak: {{env: FSB_TEST_AK}}
          sk: {{env: FSB_TEST_SK}}
          redis_pw: {{env: FSB_TEST_REDIS_PW}}
        services:
          redis:
            port: auto
            files:
              redis.conf: |
                bind 127.0.0.1
                port ${{service.port}}
                requirepass ${{secrets.redis_pw}}
                save ""
                appendonly no
                daemonize yes
                pidfile ${{service.dir}}/redis.pid
            start: ["redis-server ${{service.dir}}/redis.conf"]
            ready: REDISCLI_AUTH=${{secrets.redis_pw}} redis-cli -p ${{service.port}} ping | grep -q PONG
            stop: ["kill $(cat ${{service.dir}}/redis.pid)"]
        targets:
          s3a:
            kind: s3a
            path: /secrets
            s3a: {{endpoint: "{hadoop_lab.s3_endpoint}", bucket: fsbench,
                   access_key: "${{secrets.ak}}", secret_key: "${{secrets.sk}}"}}
          jfs:
            kind: jfs
            path: /secrets
            services: [redis]
            jfs:
              meta: redis://:${{secrets.redis_pw}}@127.0.0.1:${{services.redis.port}}/2
              downgrade_for_sdk: true
        workloads:
          nnbench:
            tool: nnbench
            options: {{maps: 2, files_per_map: 2, operations: [create_write, delete]}}
        """)
    # a `java` first on PATH notes the secrets each JVM receives in its environment, then runs the real one
    shims, seen = tmp_path / "shims", tmp_path / "seen.txt"
    shims.mkdir()
    (shims / "java").write_text("#!/bin/sh\n"
                                'for v in "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "$META_PASSWORD"; do\n'
                                f'  [ -n "$v" ] && printf "%s\\n" "$v" >> {seen}\n'
                                "done\n"
                                f'exec {require("java")} "$@"\n')
    (shims / "java").chmod(0o755)
    env = {"FSB_TEST_AK": access, "FSB_TEST_SK": secret, "FSB_TEST_REDIS_PW": password,
           "PATH": f"{shims}:{os.environ['PATH']}"}
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "runs"), "--progress", "plain", env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all(), cases[["case_id", "status", "reason"]].to_string()
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    rates = results[(results.metric == "rate") & (results.job == "")]
    assert set(zip(rates.target, rates.operation)) == {(t, o) for t in ("s3a", "jfs")
                                                       for o in ("create_write", "delete")}
    # the JVMs got the keys and the password in their environment (JuiceFS's SDK could not have opened
    # the volume on a Redis with requirepass without it), and nothing of them is in the run directory
    assert set(seen.read_text().split()) == {access, secret, password}
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaked = [k for k in (access, secret, password) if k.encode() in data]
            assert not leaked, f"a secret is in {path.relative_to(run)}"
    assert _java_of(run) == []
