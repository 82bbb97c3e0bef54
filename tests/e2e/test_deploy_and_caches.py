"""fsbench deploy over SSH (upload, then found) and page-cache drops with their proof."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

from fsbench.core.shell import sh
from fsbench.host.packages import DETECT, install_argv, parse_platform
from fsbench.run.targets.cache import drop_caches
from fsbench.transport.local import LocalTransport
from tests.conftest import assert_drop_proof, require, run_cli, write_scenario
from tests.e2e.test_multihost import inventory
from tests.paths import SHARED


def test_deploy_uploads_a_missing_tool_then_finds_it(lab, tmp_path):
    """The scenario's own upload (any build the user made) wins over fsbench's own ways."""
    inventory(lab, tmp_path / "inventory.yaml")
    build = tmp_path / "build" / "mdtest"
    build.parent.mkdir()
    real = require("mdtest")
    build.write_text(f'#!/bin/sh\nexec {real} "$@"\n')
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
    assert all(line.rstrip().endswith("none") for line in again.stdout.splitlines()[1:])


def _mdtest_scenario(tmp_path: Path, dest: Path, extra: str = "") -> Path:
    return write_scenario(tmp_path, f"""\
        name: deploy-mdtest
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        {extra}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2]}}
        workloads:
          meta: {{tool: mdtest, options: {{n: 10, binary: {dest}}}}}
        """)


def test_deploy_uploads_this_machine_s_mdtest_where_the_platform_matches(lab, tmp_path):
    require("mdtest")
    inventory(lab, tmp_path / "inventory.yaml")
    dest = tmp_path / "host-bin" / "mdtest"
    proc = run_cli("deploy", str(_mdtest_scenario(tmp_path, dest)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = proc.stdout.splitlines()[1]
    assert row.startswith("h2") and "uploaded this machine's" in row and "same debian" in row, row
    assert "mdtest-4.0.0 (Open MPI" in row  # found afterwards, by a real run of the uploaded binary
    assert Path(dest).read_bytes() == Path(os.path.realpath(require("mdtest"))).read_bytes()


def test_deploy_builds_ior_on_the_host_from_the_tarball(lab, tmp_path):
    """Where the platforms differ (forced here with method build), IOR is uploaded and compiled there."""
    require("mpicc")
    inventory(lab, tmp_path / "inventory.yaml")
    dest = tmp_path / "built" / "bin" / "mdtest"
    tarball = SHARED / "vendor" / "ior-4.0.0.tar.gz"
    scenario = _mdtest_scenario(tmp_path, dest, f"deploy: {{mdtest: {{method: build, source: {tarball}}}}}")
    before = set(Path("/tmp").glob("fsbench-deploy.*"))
    proc = run_cli("deploy", str(scenario), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = proc.stdout.splitlines()[1]
    assert "built IOR there from" in row and str(tarball) in row and "mdtest-4.0.0 (Open MPI" in row, row
    assert (tmp_path / "built" / "bin" / "ior").exists()  # the whole release: mdtest, ior, md-workbench
    assert set(Path("/tmp").glob("fsbench-deploy.*")) == before  # the build folder is removed again


def test_deploy_installs_vdbench_from_the_user_s_zip(lab, tmp_path):
    """vdbench is bring-your-own: a zip shaped like Oracle's (a stand-in script inside) is unpacked there."""
    inventory(lab, tmp_path / "inventory.yaml")
    archive = tmp_path / "vdbench50407.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        script = zipfile.ZipInfo("vdbench")
        script.external_attr = 0o100755 << 16
        zf.writestr(script, '#!/bin/sh\necho "vdbench stand-in $*"\n')
        zf.writestr("vdbench.bat", "rem windows\n")
        zf.writestr("classes/vdbench/Vdbench.class", "not really a class\n")
    home = tmp_path / "opt" / "vdbench"
    scenario = write_scenario(tmp_path, f"""\
        name: deploy-vdbench
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2]}}
        workloads:
          w: {{tool: vdbench, options: {{binary: {home}/vdbench}}, jobs: {{rd1: {{elapsed: 1}}}}}}
        """)
    without = run_cli("deploy", str(scenario))
    assert without.returncode == 4 and "bring-your-own" in without.stdout and "--vdbench-zip" in without.stdout
    proc = run_cli("deploy", str(scenario), "--vdbench-zip", str(archive))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = proc.stdout.splitlines()[1]
    assert f"uploaded vdbench50407.zip (3 files) to {home}" in row, row
    assert os.access(home / "vdbench", os.X_OK) and (home / "classes" / "vdbench" / "Vdbench.class").exists()
    java = subprocess.run(["java", "-version"], capture_output=True)
    assert java.returncode == 0  # a Java runtime is there (it was, or deploy installed it)


def test_deploy_reports_what_it_cannot_do(tmp_path):
    scenario = write_scenario(tmp_path, f"""\
        name: deploy-missing
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          w: {{tool: vdbench, options: {{binary: {tmp_path}/nowhere/vdbench}}, jobs: {{rd1: {{elapsed: 1}}}}}}
        """)
    proc = run_cli("deploy", str(scenario))
    assert proc.returncode == 4 and "bring-your-own" in proc.stdout and "--vdbench-zip" in proc.stdout


def test_package_manager_commands():
    assert install_argv("apt-get", "fio")[-3:] == ["-y", "--no-install-recommends", "fio"]
    assert install_argv("dnf", "gcc", "make") == ["dnf", "install", "-y", "gcc", "make"]
    p = parse_platform("debian 12\nx86_64\nmpirun (Open MPI) 4.1.4\n")
    assert (p.os, p.arch, p.mpi) == ("debian 12", "x86_64", "mpirun (Open MPI) 4.1.4")
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
    assert_drop_proof(proof)
