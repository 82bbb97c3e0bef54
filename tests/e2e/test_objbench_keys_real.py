"""Real juicefs objbench on another store than the target's: its keys come from the scenario's secrets, reach
the command through its environment only, and are in no argv, no file of the run directory, no plan."""

from __future__ import annotations

import hashlib
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli, write_scenario

KEY, SECRET = "AKobjbench-e2e-key-7731", "objbench-e2e-secret-9902"


def _everything_written(run: Path) -> str:
    """Every file of the run directory as text, binary ones (results.parquet) included."""
    return "\n".join(p.read_bytes().decode("utf-8", errors="replace") for p in run.rglob("*") if p.is_file())


def test_objbench_keys_travel_in_the_environment_only(tmp_path):
    juicefs = require("juicefs")
    seen = tmp_path / "seen"
    wrapper = tmp_path / "juicefs-wrapper"  # juicefs itself, noting a digest of the keys it was given
    wrapper.write_text(f'#!/bin/sh\nprintf %s "$ACCESS_KEY:$SECRET_KEY" | sha256sum >> {seen}\nexec {juicefs} "$@"\n')
    wrapper.chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: objbench-keys
        secrets:
          ak: {{env: FSB_OB_AK}}
          sk: {{env: FSB_OB_SK}}
        targets:
          t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          ob:
            tool: juicefs-objbench
            options: {{storage: file, bucket: objects/, access_key: "${{secrets.ak}}",
                       secret_key: "${{secrets.sk}}", binary: {wrapper}, threads: 1, big_object_size: 4m,
                       small_objects: 5}}
        """)
    env = {"FSB_OB_AK": KEY, "FSB_OB_SK": SECRET}
    plan = run_cli("plan", "--show", str(scenario), env=env, check=True)
    assert "environment: ACCESS_KEY, SECRET_KEY (values not shown)" in plan.stdout
    found_in_ps: list[str] = []
    stop = threading.Event()

    def watch_ps() -> None:
        while not stop.is_set():
            out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
            found_in_ps.extend(line for line in out.splitlines() if KEY in line or SECRET in line)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch_ps)
    watcher.start()
    try:
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", env=env)
    finally:
        stop.set()
        watcher.join()
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    assert pd.read_csv(run / "cases.csv", keep_default_na=False).status.iloc[0] == "ok"
    digest = hashlib.sha256(f"{KEY}:{SECRET}".encode()).hexdigest()
    assert digest in seen.read_text()  # the command had both keys in its environment
    assert "juicefs-wrapper objbench --storage file" in (run / "raw" / "t__ob__r1" / "local" / "command").read_text()
    written = _everything_written(run)
    for leak in (KEY, SECRET):
        assert leak not in written and leak not in proc.stdout + proc.stderr + plan.stdout + plan.stderr
    assert found_in_ps == []
    assert "${secrets.ak}" in (run / "scenario.yaml").read_text()
