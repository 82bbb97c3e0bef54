"""Targets and services with a lifecycle: readiness, failures half-way, teardown always."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from tests.conftest import run_cli, write_scenario


def test_a_service_that_never_becomes_ready_fails_only_its_targets(tmp_path, fio):
    marker = tmp_path / "stopped"
    scenario = write_scenario(tmp_path, f"""\
        name: never-ready
        settings: {{scratch: {tmp_path}/scratch}}
        services:
          sleepy:
            port: auto
            start: ["echo started on ${{service.port}} > ${{service.dir}}/started"]
            ready: "false"
            ready_timeout: 2s
            stop: ["touch {marker}"]
        targets:
          needs-service: {{path: {tmp_path}, services: [sleepy]}}
          plain: {{path: {tmp_path}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 1
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("target")
    assert cases.loc["plain", "status"] == "ok"
    reason = cases.loc["needs-service", "reason"]
    assert cases.loc["needs-service", "status"] == "failed"
    assert "service sleepy on local never became ready within 2s" in reason and "`false`" in reason
    assert marker.exists()  # the started service was stopped again
    assert (run / "services" / "sleepy" / "local" / "start-0.out").exists()
    assert not (tmp_path / "scratch").exists() or not any((tmp_path / "scratch").iterdir())


def test_setup_failing_half_way_still_tears_down(tmp_path, fio):
    made = tmp_path / "made-by-setup"
    scenario = write_scenario(tmp_path, f"""\
        name: half-way
        targets:
          broken:
            path: {made}
            setup: ["mkdir -p ${{target.path}}", "touch ${{target.path}}/half", "exit 7"]
            teardown: ["rm -rf ${{target.path}}"]
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 1
    cases = pd.read_csv(Path(proc.stdout.splitlines()[0]) / "cases.csv", keep_default_na=False)
    assert "target setup failed" in cases.reason[0] and "exit status 7" in cases.reason[0]
    assert not made.exists()


def test_target_ready_check_and_variants(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: variants
        targets:
          base:
            path: {tmp_path}/base
            description: the original
            baseline: true
            setup: ["mkdir -p ${{target.path}}"]
            teardown: ["rmdir ${{target.path}}"]
            ready: test -d ${{target.path}}
          variant:
            extends: base
            path: {tmp_path}/variant
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", check=True)
    cases = pd.read_csv(Path(proc.stdout.splitlines()[0]) / "cases.csv")
    assert list(cases.target) == ["base", "variant"] and (cases.status == "ok").all()
    assert not (tmp_path / "base").exists() and not (tmp_path / "variant").exists()


def test_stand_in_mdtest_under_real_mpirun(tmp_path, fio):
    """mdtest is not installable here: a stand-in proves the argv, mpirun launch and parsing plumbing."""
    from tests.conftest import require
    from tests.paths import FIXTURES

    require("mpirun")
    fixture = FIXTURES / "mdtest" / "4.0.0" / "seed_b3_z1_I100_u_np4_ext4.stdout.txt"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "mdtest").write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {tmp_path}/argv.$OMPI_COMM_WORLD_RANK\n'
        '[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0\n'
        f"cat {fixture}\n")
    (bindir / "mdtest").chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: mdtest-plumbing
        targets:
          t: {{path: {tmp_path}}}
        workloads:
          meta:
            tool: mdtest
            options: {{b: 3, z: 1, I: 100, u: true, tasks: 2, mpirun_args: [--mca, btl, "self,tcp"]}}
        """)
    import os

    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report",
                   env={"PATH": f"{bindir}:{os.environ['PATH']}"}, check=True)
    run = Path(proc.stdout.splitlines()[0])
    command = (run / "raw" / "t__meta__r1" / "local" / "command").read_text()
    assert command.startswith("mpirun -np 2 --oversubscribe") and " mdtest -b 3 -z 1 -I 100 -u -d " in command
    argv0 = (tmp_path / "argv.0").read_text().split()
    assert argv0[:7] == ["-b", "3", "-z", "1", "-I", "100", "-u"] and argv0[7] == "-d"
    assert (tmp_path / "argv.1").exists()  # both MPI ranks ran
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    results = results[results.tool != "monitor"]
    assert set(results.tool) == {"mdtest"} and set(results.metric) <= {"rate", "time"}
    assert "directory_creation" in set(results.operation)
    assert subprocess.run(["pgrep", "-f", str(bindir)], capture_output=True).stdout == b""


def test_mdtest_phases_run_separately_with_cache_drops_between(tmp_path, fio):
    """create, stat, read and remove as four mdtest runs; the page cache dropped before each of the last three."""
    import json
    import os

    from tests.paths import FIXTURES

    fixture = FIXTURES / "mdtest" / "4.0.0" / "phase_C_create_only_np2_ext4.stdout.txt"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "mdtest").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\ncat {fixture}\n')
    (bindir / "mdtest").chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: phases
        targets: {{t: {{path: {tmp_path}}}}}
        workloads:
          files:
            tool: mdtest
            drop_caches: true
            options: {{F: true, n: 100, w: 4096, e: 4096, separate_phases: true}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report",
                   env={"PATH": f"{bindir}:{os.environ['PATH']}"}, check=True)
    run = Path(proc.stdout.splitlines()[0])
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[-1] for c in calls] == ["-C", "-T", "-E", "-r"]
    raw = run / "raw" / "t__files__r1" / "local"
    assert len((raw / "command").read_text().splitlines()) == 4
    proofs = sorted(raw.glob("drop_caches*.json"))
    assert [p.name for p in proofs] == ["drop_caches-1.json", "drop_caches-2.json", "drop_caches-3.json",
                                        "drop_caches.json"]
    assert all(json.loads(p.read_text())["ok"] for p in proofs)
    assert (raw / "stdout").read_text().count("SUMMARY rate") == 4
