"""`fsbench run` with a --set value meant to break out of quotes the scenario put around ${var}: nothing runs."""

from __future__ import annotations

import pytest

from tests.conftest import require, run_cli, write_scenario

pytestmark = pytest.mark.e2e

SCENARIO = """\
    name: q
    variables: {{p: sub}}
    targets:
      t:
        path: {path}
        setup: ["mkdir -p \\"${{target.path}}/${{p}}\\"", "touch '${{target.path}}/${{p}}/made'"{more}]
    workloads:
      w: {{tool: fio, options: {{rw: write, size: 64k}}}}
    """


def test_a_value_in_the_commands_quotes_stays_a_folder_name(tmp_path):
    require("fio")
    marker = tmp_path / "PWNED"
    value = f"$(touch {marker})'\"x"
    scenario = write_scenario(tmp_path, SCENARIO.format(path=tmp_path / "t", more=""))
    (tmp_path / "t").mkdir()
    proc = run_cli("run", str(scenario), "--set", f"p={value}", "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert (tmp_path / "t" / value / "made").is_file()


def test_a_reference_in_backquotes_is_refused_before_anything_runs(tmp_path):
    marker = tmp_path / "PWNED"
    scenario = write_scenario(tmp_path, SCENARIO.format(path=tmp_path / "t", more=', "echo `ls ${p}`"'))
    (tmp_path / "t").mkdir()
    proc = run_cli("run", str(scenario), "--set", f"p=$(touch {marker})", "-o", str(tmp_path / "out"))
    assert proc.returncode == 3
    assert "scenario.yaml:6: targets.t.setup[2]: ${p} in backquotes" in proc.stderr
    assert not marker.exists() and not (tmp_path / "out").exists() and list((tmp_path / "t").iterdir()) == []
