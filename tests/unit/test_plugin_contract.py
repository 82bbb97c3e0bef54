"""The tool and collector contracts are checked: by registration (a hook of another signature, a misspelt
hook, each refused with the plug-in's name and entry point) and by mypy (a PLUGIN annotated with its Protocol)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fsbench.api.registry
from fsbench.api.collectors import COLLECTOR_HOOKS, CollectorKind, HasTail, ParsesLines, ParsesWindow
from fsbench.api.registry import PluginError, Registry
from fsbench.api.signatures import signature_problem
from fsbench.api.tools import TOOL_HOOKS, Declarations, Reads, ToolAdapter, declarations
from fsbench.collectors import COLLECTORS
from fsbench.tools import TOOLS
from tests.paths import REPO


class _Tool:
    """A complete third-party tool: every required member, right signatures."""

    name = "toy"
    bring_your_own = False
    accepts = ("directory",)
    metrics: dict[str, str] = {}
    operations = ("write",)
    primary_metrics = ("bandwidth",)
    packages: dict[str, list[str]] = {}

    def check_options(self, options, job_file_text, jobs, ctx):
        return []

    def estimate_seconds(self, options, job_file_text, jobs, job_file=None):
        return 1.0

    def build(self, case, test_dir, ctx=None):
        raise NotImplementedError

    def parse_outputs(self, raw_dir):
        raise NotImplementedError

    def parse_file(self, path):
        raise NotImplementedError

    def version_argv(self, options=None):
        return ["toy", "--version"]


def _refusal(plugin: object, monkeypatch) -> str:
    """The error a tools registry gives when plugin arrives through an entry point."""

    class EntryPoint:
        name, value = "toy", "fsbench_toy:PLUGIN"

        def load(self):
            return plugin

    monkeypatch.setattr(fsbench.api.registry, "_entry_points", lambda group: [EntryPoint()])
    registry: Registry = Registry("tool", "fsbench.tools", (), ToolAdapter, TOOL_HOOKS)
    with pytest.raises(PluginError) as err:
        registry.names()
    return str(err.value)


def test_a_complete_third_party_tool_registers_and_its_hooks_are_found_by_protocol(monkeypatch):
    class Reading(_Tool):
        def reads(self, options, job_file_text, jobs, job_file=None):
            return True

    registry: Registry = Registry("tool", "fsbench.tools", (), ToolAdapter, TOOL_HOOKS)
    tool = registry.register(Reading())
    assert isinstance(tool, ToolAdapter) and isinstance(tool, Reads)
    assert not isinstance(_Tool(), Reads)
    assert declarations(_Tool()) == Declarations(primary_metrics=("bandwidth",), operations=("write",))
    assert declarations(None) == Declarations() and Declarations().views == ("table",)


def test_a_hook_with_another_signature_is_refused_naming_the_plug_in_and_its_entry_point(monkeypatch):
    class WrongHook(_Tool):
        def layout_bytes(self, options):  # the Protocol's takes job_file_text, jobs, job_file too
            return 0.0

    message = _refusal(WrongHook(), monkeypatch)
    assert message.startswith("the tool plug-in 'toy' (entry point toy = fsbench_toy:PLUGIN in fsbench.tools) "
                              "does not keep to its contract: layout_bytes(options) does not take what "
                              "layout_bytes(self, options: 'dict[str, Any]', job_file_text: 'str | None', jobs: 'dict[str, Any]', "
                              "job_file: 'str | None' = None) is given: it has no parameter 'job_file_text'"), message


def test_a_required_method_of_another_signature_is_refused(monkeypatch):
    class NoPath(_Tool):
        def parse_file(self):
            return 0

    message = _refusal(NoPath(), monkeypatch)
    assert "'toy' (entry point toy = fsbench_toy:PLUGIN in fsbench.tools)" in message
    assert "parse_file() does not take what parse_file(self, path: 'Path') is given: it has no parameter 'path'" \
        in message


def test_a_misspelt_hook_is_refused_with_the_name_it_meant(monkeypatch):
    class Misspelt(_Tool):
        def layout_byte(self, options, job_file_text, jobs, job_file=None):
            return 0.0

    message = _refusal(Misspelt(), monkeypatch)
    assert "it has 'layout_byte', which is no hook: did you mean 'layout_bytes'?" in message, message


def test_a_hook_declared_as_a_value_must_not_be_a_method_and_the_other_way_round(monkeypatch):
    class ViewsMethod(_Tool):
        def views(self):
            return ("table",)

    assert "views is a method, its protocol declares a value" in _refusal(ViewsMethod(), monkeypatch)

    class ReadsValue(_Tool):
        reads = True

    assert "reads is bool True, its protocol declares a method reads(self, options" in _refusal(ReadsValue(),
                                                                                               monkeypatch)


def test_signature_rules():
    def spec(self, a, b, c=None): ...

    assert signature_problem(lambda a, b, c=None: 0, spec) == ""
    assert signature_problem(lambda a, b, c=None, d=1: 0, spec) == ""  # an extra with a default is fine
    assert signature_problem(lambda *args, **kwargs: 0, spec) == ""
    assert signature_problem(lambda a, x, c=None: 0, spec) == "its parameter 2 is 'x', not 'b'"
    assert signature_problem(lambda a, b, c: 0, spec) == "its 'c' needs a value, which callers may leave out"
    assert signature_problem(lambda a, b, c=None, d=...: 0, spec) == ""
    assert signature_problem(lambda a, b, c=None, *, d: 0, spec) == "it also needs 'd', which callers do not give"


def test_every_built_in_tool_and_collector_keeps_to_its_contract():
    assert {t.name for t in TOOLS} >= {"fio", "mdtest", "vdbench"}
    for tool in TOOLS:
        assert isinstance(tool, ToolAdapter), tool.name
    kinds = {k.name: k for k in COLLECTORS}
    assert all(isinstance(k, CollectorKind) for k in kinds.values())
    assert isinstance(kinds["juicefs-stats"], ParsesWindow) and isinstance(kinds["juicefs-stats"], HasTail)
    assert isinstance(kinds["command"], ParsesLines) and not isinstance(kinds["command"], HasTail)
    assert COLLECTOR_HOOKS


def test_a_collector_with_a_misspelt_hook_is_refused(monkeypatch):
    class Sampler:
        name, tool, target_kinds = "sampler", "", ()

        def check(self, collector): return []
        def command(self, collector, values): return ["true"]
        def after(self, collector, output): return None
        def parse(self, collector, output, after, host): raise ValueError("nothing")
        def tails_s(self, collector): return 1.0

    registry: Registry = Registry("collector kind", "fsbench.collectors", (), CollectorKind, COLLECTOR_HOOKS)
    with pytest.raises(PluginError, match="'sampler' .*it has 'tails_s', which is no hook: did you mean 'tail_s'"):
        registry.register(Sampler(), "entry point sampler = fsbench_sampler:PLUGIN in fsbench.collectors")


def test_mypy_refuses_a_plug_in_whose_parse_file_has_another_signature(tmp_path: Path):
    bad = tmp_path / "bad_tool.py"
    bad.write_text(textwrap.dedent('''
        from pathlib import Path

        from fsbench.api.tools import ToolAdapter


        class Bad:
            name = "bad"
            bring_your_own = False
            accepts = ("directory",)
            metrics: dict[str, str] = {}
            operations = ("write",)
            primary_metrics = ("bandwidth",)
            packages: dict[str, list[str]] = {}

            def check_options(self, options, job_file_text, jobs, ctx): return []
            def estimate_seconds(self, options, job_file_text, jobs, job_file=None): return 1.0
            def build(self, case, test_dir, ctx=None): raise NotImplementedError
            def parse_outputs(self, raw_dir: Path): raise NotImplementedError
            def parse_file(self) -> int: return 0
            def version_argv(self, options=None): return ["bad"]


        PLUGIN: ToolAdapter = Bad()
    '''))
    cache = tmp_path / "mypy-cache"
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--follow-imports=silent",
                        "--cache-dir", str(cache), "--config-file", str(REPO / "pyproject.toml"), str(bad)],
                       capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'bad_tool.py:24: error: Incompatible types in assignment (expression has type "Bad", variable has ' \
           'type "ToolAdapter")' in r.stdout, r.stdout
    assert "parse_file" in r.stdout


def test_every_built_in_plug_in_of_every_registry_keeps_to_its_contract_as_a_third_party_one_must():
    """Built-in plug-ins register unchecked (a command does not inspect fsbench's own signatures each time):
    this test is their check, with the registry's own, the same a third-party plug-in gets."""
    from fsbench.kinds import KINDS
    from fsbench.services import SERVICE_KINDS
    from fsbench.transport.registry import TRANSPORTS

    for registry in (TOOLS, COLLECTORS, KINDS, SERVICE_KINDS, TRANSPORTS):
        for plugin in registry:
            assert registry.contract_problems(plugin) == [], f"{registry.what} {plugin!r}"
