"""One error boundary for every command: an fsbench error from the library becomes its message (secrets
masked) and its exit code, whichever command met it."""

from __future__ import annotations

import ast
import signal

import pytest
from click.testing import CliRunner

from fsbench.cli import main
from fsbench.core import secret_known
from fsbench.core.errors import FsbenchError, ScenarioError
from fsbench.core.secrets import remember
from tests.paths import REPO


class Odd(FsbenchError):
    """An error with an exit code of its own, to see it reach the shell unchanged."""

    exit_code = 7


def _raise(*args, **kwargs):
    raise Odd("the library refused: key s3cret-value-42 at line 3")


#: command line -> the library function it calls first (module, name)
COMMANDS = [
    (["validate", "{scenario}"], "fsbench.scenario.load", "load_scenario"),
    (["plan", "{scenario}"], "fsbench.scenario", "load_scenario"),
    (["run", "{scenario}"], "fsbench.campaign", "run_scenario"),
    (["deploy", "{scenario}"], "fsbench.campaign", "deploy_tools"),
    (["report", "{folder}"], "fsbench.campaign", "open_run"),
    (["compare", "{folder}", "{folder}"], "fsbench.compare", "compare_runs"),
    (["ingest", "fio", "{scenario}"], "fsbench.ingest", "ingest_files"),
]


@pytest.fixture(autouse=True)
def clean_state():
    """The known secrets and the signal handlers (`run` sets its own) as they were before each test."""
    saved, handlers = set(secret_known._KNOWN), {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    secret_known._KNOWN.clear()
    secret_known._KNOWN.update(saved)
    for s, h in handlers.items():
        signal.signal(s, h)


@pytest.mark.parametrize(("argv", "module", "name"), COMMANDS, ids=[c[0][0] for c in COMMANDS])
def test_every_command_ends_on_a_library_error_with_its_message_and_exit_code(tmp_path, monkeypatch, argv, module,
                                                                            name):
    import importlib

    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\n")
    monkeypatch.setattr(importlib.import_module(module), name, _raise)
    remember("s3cret-value-42")
    result = CliRunner().invoke(main, [a.format(scenario=scenario, folder=tmp_path) for a in argv])
    assert result.exit_code == 7, result.output
    assert result.stderr == "error: the library refused: key **** at line 3\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_scenario_error_counts_its_problems(tmp_path, monkeypatch):
    import fsbench.scenario.load
    from fsbench.core.errors import Issue

    def invalid(*args, **kwargs):
        raise ScenarioError([Issue("s.yaml", 2, "targets", "no targets", "name one")])

    monkeypatch.setattr(fsbench.scenario.load, "load_scenario", invalid)
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "s.yaml")])
    assert result.exit_code == 3
    assert result.stderr.startswith("invalid scenario (1 problem):\ns.yaml:2: targets: no targets")


def test_the_boundary_is_written_once():
    """No command catches fsbench's errors itself: the group does, in cli_errors."""
    cli = ast.parse((REPO / "fsbench" / "cli.py").read_text())
    caught = [ast.unparse(h.type) for h in ast.walk(cli) if isinstance(h, ast.ExceptHandler) and h.type is not None]
    assert "FsbenchError" not in " ".join(caught), caught
    boundary = ast.parse((REPO / "fsbench" / "cli_errors.py").read_text())
    handlers = [h for h in ast.walk(boundary) if isinstance(h, ast.ExceptHandler)
                and h.type is not None and ast.unparse(h.type) == "FsbenchError"]
    assert len(handlers) == 1
    assert type(main).__name__ == "ErrorBoundary"
