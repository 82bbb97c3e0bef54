"""Targets and services with a lifecycle: readiness, failures half-way, teardown always."""

from __future__ import annotations

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
