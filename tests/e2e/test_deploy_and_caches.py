"""fsbench deploy over SSH (upload, then found) and page-cache drops with their proof."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


from fsbench.deploy import DETECT, install_argv
from fsbench.shell import sh
from fsbench.targets.cache import drop_caches
from fsbench.transport.local import LocalTransport
from tests.conftest import require, run_cli, write_scenario
from tests.e2e.test_multihost import inventory


def test_deploy_uploads_a_missing_tool_then_finds_it(lab, tmp_path):
    inventory(lab, tmp_path / "inventory.yaml")
    build = tmp_path / "build" / "mdtest"
    build.parent.mkdir()
    build.write_text("#!/bin/sh\necho mdtest-stand-in\n")
    dest = tmp_path / "remote-bin" / "mdtest"
    scenario = write_scenario(tmp_path, f"""\
        name: deploy
        inventory: inventory.yaml
        hosts: {{h2: {{}}, h3: {{}}}}
        deploy:
          upload: {{mdtest: {{from: build/mdtest, to: {dest}}}}}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2, h3]}}
        workloads:
          meta: {{tool: mdtest, options: {{n: 10, binary: {dest}}}}}
        """)
    proc = run_cli("deploy", str(scenario))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()[1:]
    assert len(lines) == 2 and lines[0].startswith("h2") and "missing" in lines[0] and "uploaded" in lines[0]
    # the loopback "hosts" share one disk: h3 already finds what h2 received
    assert lines[1].startswith("h3") and "missing" not in lines[1]
    assert os.access(dest, os.X_OK)
    again = run_cli("deploy", str(scenario), check=True)
    assert all(l.rstrip().endswith("none") for l in again.stdout.splitlines()[1:])


def test_deploy_reports_what_it_cannot_do(tmp_path):
    scenario = write_scenario(tmp_path, f"""\
        name: deploy-missing
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          w: {{tool: vdbench, options: {{binary: {tmp_path}/nowhere/vdbench}}, jobs: {{rd1: {{elapsed: 1}}}}}}
        """)
    proc = run_cli("deploy", str(scenario))
    assert proc.returncode == 4 and "set deploy.install: true or give deploy.upload" in proc.stdout


def test_package_manager_commands():
    assert install_argv("apt-get", "fio")[-3:] == ["-y", "--no-install-recommends", "fio"]
    assert install_argv("dnf", "fio") == ["dnf", "install", "-y", "fio"]
    r = LocalTransport().run(sh(DETECT), timeout=10)
    assert r.ok and r.extra["stdout"].strip() == "apt-get"  # this machine is Debian


def test_drop_caches_empties_the_page_cache(tmp_path):
    require("fincore")
    data = tmp_path / "cached.bin"
    data.write_bytes(os.urandom(64 * 2**20))
    subprocess.run(["cat", str(data)], stdout=subprocess.DEVNULL, check=True)
    resident = lambda: int(subprocess.run(["fincore", "-n", "-b", "-o", "RES", str(data)],  # noqa: E731
                                          capture_output=True, text=True, check=True).stdout.split()[0])
    assert resident() > 32 * 2**20
    out = drop_caches(LocalTransport(), tmp_path / "proof.json")
    assert out["ok"] and resident() == 0
    proof = json.loads((tmp_path / "proof.json").read_text())
    assert proof["cached_before_bytes"] - proof["cached_after_bytes"] >= 32 * 2**20


def test_a_workload_asking_for_cold_caches_gets_them_with_proof(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: cold
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          read: {{tool: fio, drop_caches: true, options: {{rw: read, size: 8m}}}}
        """)
    run = Path(run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report",
                       check=True).stdout.splitlines()[0])
    proof = json.loads((run / "raw" / "t__read__r1" / "local" / "drop_caches.json").read_text())
    assert proof["ok"] and proof["cached_after_bytes"] < proof["cached_before_bytes"]
