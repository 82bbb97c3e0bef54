"""settings.fresh for real: two JuiceFS volumes in rounds, each round on a volume formatted for it. After a
round, fsbench destroys the volume it formatted (checked by name) and the next round formats a new one; the
last round's volume is left as a run without fresh rounds leaves it."""

from __future__ import annotations

import csv
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require, run_cli, write_scenario

pytestmark = pytest.mark.e2e


def test_each_round_runs_on_a_volume_formatted_for_it(tmp_path):
    require("fio")
    juicefs = require("juicefs")
    scenario = write_scenario(tmp_path, f"""\
        name: fresh
        monitor: {{enabled: false}}
        settings: {{scratch: {tmp_path}/scratch, order: rounds, fresh: targets, repetitions: 2}}
        targets:
          a: {{kind: juicefs, path: {tmp_path}/mnt-a, juicefs: {{meta: "sqlite3://{tmp_path}/a.db", storage: file}}}}
          b: {{kind: juicefs, path: {tmp_path}/mnt-b, juicefs: {{meta: "sqlite3://{tmp_path}/b.db", storage: file}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m}}}}
          r: {{tool: fio, options: {{rw: read, bs: 64k, size: 2m}}}}
        """)
    plan = run_cli("plan", str(scenario), check=True).stdout
    assert "in fresh rounds: repetition 1 of every workload on every target, then 2" in plan
    shown = run_cli("plan", "--show", str(scenario), check=True).stdout
    assert "after each round but the last (fresh rounds)" in shown and "destroy --yes" in shown

    out = tmp_path / "out"
    done = run_cli("run", str(scenario), "--output", str(out), "--progress", "plain", check=True)
    run = next(p for p in out.iterdir() if p.is_dir())
    with (run / "cases.csv").open(newline="") as fh:
        cases = sorted(csv.DictReader(fh), key=lambda r: int(r["index"]))
    assert [r["status"] for r in cases] == ["ok"] * 8
    assert [r["repetition"] for r in cases] == ["1"] * 4 + ["2"] * 4  # round 1 of both workloads, then round 2
    for target in ("a", "b"):
        log = (run / "targets" / target / "juicefs-local.log").read_text()
        volumes = list(dict.fromkeys(re.findall(r"Disk cache \(\S+/cache/([0-9a-f-]{36})/\)", log)))
        assert len(volumes) == 2, log[-2000:]  # a new volume (UUID) mounted in each round
        said = [line for line in (done.stdout + done.stderr).splitlines() if f"destroy the volume {target}-vol" in line]
        assert len(said) == 1, done.stdout  # after round 1 only: the last round's volume stays, as without fresh
        status = subprocess.run([juicefs, "status", f"sqlite3://{tmp_path}/{target}.db"], capture_output=True,
                                text=True, timeout=60)
        assert f'"UUID": "{volumes[1]}"' in status.stdout and f'"Name": "{target}-vol"' in status.stdout
    # round 2's read laid its file out again: round 1's went with its volume
    reads = [r for r in cases if r["workload"] == "r"]
    assert all((run / "raw" / r["case_id"] / "local" / "prepare").is_dir() for r in reads)
    assert not list(Path(tmp_path, "scratch").iterdir())  # the scratch space went with the run


def test_fresh_services_start_a_new_server_for_each_round(tmp_path):
    """fresh: services: the services a round used are stopped after its last target using them, and the next
    round starts them anew, in a folder of their own; the last round's stop is the run's."""
    require("fio")
    starts = tmp_path / "starts.txt"
    scenario = write_scenario(tmp_path, f"""\
        name: fresh-services
        monitor: {{enabled: false}}
        settings: {{scratch: {tmp_path}/scratch, order: rounds, fresh: services, repetitions: 3}}
        services:
          srv:
            start: ["echo start ${{service.dir}} >> {starts}"]
            stop: ["echo stop ${{service.dir}} >> {starts}"]
            ready: "true"
        targets:
          a: {{path: {tmp_path}/a, services: [srv], setup: ["mkdir -p ${{target.path}}"]}}
          b: {{path: {tmp_path}/b, services: [srv], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m}}}}
        """)
    out = tmp_path / "out"
    run_cli("run", str(scenario), "--output", str(out), "--progress", "none", check=True)
    run = next(p for p in out.iterdir() if p.is_dir())
    with (run / "cases.csv").open(newline="") as fh:
        assert [r["status"] for r in csv.DictReader(fh)] == ["ok"] * 6
    events = [line.split() for line in starts.read_text().splitlines()]
    folders = [e[1] for e in events if e[0] == "start"]
    assert [e[0] for e in events] == ["start", "stop"] * 3  # one server at a time, each stopped before the next
    assert [Path(f).name for f in folders] == ["srv", "srv.2", "srv.3"]
    assert [e[1] for e in events if e[0] == "stop"] == folders
    assert {p.name for p in (run / "services").iterdir()} >= {"srv", "srv.2", "srv.3"}  # each start's logs apart


def test_fresh_services_with_a_real_redis_and_juicefs(tmp_path):
    """fresh: services with the headline's parts: each round's JuiceFS volume on a Redis server started for
    that round (a port and folder of its own), every server stopped by the end, no mount left."""
    for tool in ("fio", "juicefs", "redis-server"):
        require(tool)
    scenario = write_scenario(tmp_path, f"""\
        name: fresh-redis
        monitor: {{enabled: false}}
        settings: {{scratch: {tmp_path}/scratch, order: rounds, fresh: services, repetitions: 2}}
        services:
          redis: {{kind: redis, redis: {{appendfsync: always}}}}
        targets:
          r:
            kind: juicefs
            path: {tmp_path}/mnt
            services: [redis]
            juicefs: {{meta: "${{services.redis.url}}/1", storage: file}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m}}}}
        """)
    out = tmp_path / "out"
    done = run_cli("run", str(scenario), "--output", str(out), "--progress", "plain", check=True)
    run = next(p for p in out.iterdir() if p.is_dir())
    with (run / "cases.csv").open(newline="") as fh:
        assert [r["status"] for r in csv.DictReader(fh)] == ["ok"] * 2
    log = (run / "targets" / "r" / "juicefs-local.log").read_text()
    volumes = list(dict.fromkeys(re.findall(r"Disk cache \(\S+/cache/([0-9a-f-]{36})/\)", log)))
    assert len(volumes) == 2, log[-2000:]  # round 2's volume formatted on round 2's server
    for folder in ("redis", "redis.2"):  # each server's own logs, each started, served and stopped
        logs = run / "services" / folder / "local"
        assert (logs / "start-0.out").exists() and (logs / "stop-0.out").exists() and (logs / "redis.log").exists()
        assert (logs / "stopped.txt").exists()
    # round 1's volume was destroyed by name before its server went: nothing of it stays in the bucket
    assert done.stderr.count("destroy the volume r-vol") == 1
    left = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout.split()
    assert str(tmp_path / "mnt") not in left
