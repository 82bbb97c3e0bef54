"""Hosts and processes over a real sshd (tests/sshlab.py): juicefs bench's verdicts under `script` on an SSH
host, tool output capped, a frozen host (sshd stopped with SIGSTOP), a tool's background child stopped with
its case while the run's services live on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO


def inventory(lab, path: Path) -> Path:
    """The lab's first address as host h2."""
    path.write_text(f"defaults:\n  port: {lab.port}\n  user: {lab.user}\n  key_file: {lab.client_key}\n"
                    f"  known_hosts: {lab.known_hosts}\n  slots: 1\n"
                    f"hosts:\n  h2:\n    address: {lab.addresses[0]}\n")
    return path


def redis(host: str) -> str:
    """A managed Redis service on host, as scenario lines indented for write_scenario's dedent."""
    text = f"""\
redis:
  hosts: [{host}]
  port: auto
  files:
    redis.conf: |
      bind ${{service.host}}
      port ${{service.port}}
      daemonize yes
      pidfile ${{service.dir}}/redis.pid
      dir ${{service.dir}}
      save ""
      appendonly no
  start: ["redis-server ${{service.dir}}/redis.conf"]
  ready: redis-cli -h ${{service.host}} -p ${{service.port}} ping | grep -q PONG
  stop: ["redis-cli -h ${{service.host}} -p ${{service.port}} shutdown nosave"]
"""
    return textwrap.indent(text, " " * 10)


def test_juicefs_bench_with_verdicts_on_an_ssh_host_ends_in_seconds(lab, tmp_path):
    """`script` (juicefs bench's pseudo-terminal) waited for the remote watchdog, its child after the exec."""
    for tool in ("juicefs", "redis-server", "redis-cli", "script", "fusermount3"):
        require(tool)
    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: jfs-verdicts-ssh
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        monitor: {{enabled: false}}
        settings: {{case_timeout: 120s}}
        services:
{redis("h2")}
        targets:
          jfs:
            kind: juicefs
            path: {tmp_path}/jfs
            hosts: [h2]
            services: [redis]
            juicefs: {{meta: "redis://${{services.redis.host}}:${{services.redis.port}}/1", storage: file}}
        workloads:
          bench:
            tool: juicefs-bench
            options: {{threads: 1, block_size: 1m, big_file_size: 8m, small_file_size: 64k, small_file_count: 20}}
        """)
    start = time.monotonic()
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=300)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert float(cases.tool_wall_s.iloc[0]) < 60, cases.to_string()  # was the whole case timeout
    assert elapsed < 100
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    judged = rows[(rows.tool == "juicefs-bench") & (rows.operation == "write_big_file")]
    assert len(judged) and set(judged.verdict) <= {"good", "fair", "poor"} and (judged.verdict != "").all()
