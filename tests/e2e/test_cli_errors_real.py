"""The real command line, in a subprocess: a library error met by any command ends with one line naming it
(or a scenario's numbered problems) and the error's own exit code, never a traceback."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli, write_scenario


@pytest.fixture
def places(tmp_path):
    """An invalid scenario, a valid one, and a folder that is no run directory."""
    invalid = write_scenario(tmp_path, "name: cli-errors\ntargets: {}\nworkloads: {}\n", "invalid.yaml")
    (tmp_path / "t").mkdir()
    valid = write_scenario(tmp_path, f"""\
        name: cli-errors
        targets:
          t: {{path: {tmp_path / "t"}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """, "valid.yaml")
    (tmp_path / "no-run").mkdir()
    return {"invalid": str(invalid), "valid": str(valid), "no-run": str(tmp_path / "no-run"), "tmp": tmp_path}


def test_a_run_resuming_a_folder_that_is_no_run_stops_with_the_librarys_words(places):
    proc = run_cli("run", places["valid"], "--resume", places["no-run"], "-o", str(places["tmp"] / "out"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (f"error: {places['no-run']}: not a run directory (no manifest.json); give the "
                                   "folder `fsbench run` printed")
    assert not (places["tmp"] / "out").exists() and not any((places["tmp"] / "t").iterdir())


@pytest.mark.parametrize(("argv", "code", "first_line"), [
    (["validate", "{invalid}"], 3, "invalid scenario (2 problems):"),
    (["plan", "{invalid}"], 3, "invalid scenario (2 problems):"),
    (["deploy", "{invalid}"], 3, "invalid scenario (2 problems):"),
    (["report", "{no-run}"], 2, "error: {no-run}: not a run directory (no manifest.json); give the folder "
                                "`fsbench run` printed"),
    (["compare", "{no-run}", "{no-run}"], 2, "error: {no-run}: not a run directory (no manifest.json); give the "
                                             "folder `fsbench run` printed"),
    (["ingest", "no-such-tool", "{valid}"], 2, "error: no parser for 'no-such-tool'; known: fio,"),
], ids=["validate", "plan", "deploy", "report", "compare", "ingest"])
def test_each_command_ends_on_a_library_error_with_its_code_and_no_traceback(places, argv, code, first_line):
    proc = run_cli(*[a.format(**places) for a in argv])
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.startswith(first_line.format(**places)), proc.stderr
    assert "Traceback" not in proc.stderr
