"""fsbench's own costs: validate and plan import no chart or table library, plug-ins are imported by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fsbench.plugins import PluginError, Registry
from tests.paths import REPO

HEAVY = ("pandas", "matplotlib", "numpy", "pyarrow", "paramiko", "jinja2")


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running code (a subprocess: this one has them all)."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_validate_and_plan_import_no_heavy_library(command):
    code = ("from click.testing import CliRunner\nfrom fsbench.cli import main\n"
            f"r = CliRunner().invoke(main, [{command!r}, 'scenarios/meta-engines.yaml'])\n"
            "assert r.exit_code == 0, r.output")
    loaded = _modules_after(code)
    assert "fsbench.scenario.load" in loaded  # the command did load the scenario
    assert not [m for m in HEAVY if m in loaded]


def test_a_registry_imports_only_the_plug_in_asked_for_by_name():
    loaded = _modules_after("from fsbench.plugins import Registry\n"
                            "r = Registry('tool', 'fsbench.tools', ('fsbench.tools.fio', 'fsbench.tools.mdtest'))\n"
                            "assert r.get('fio').name == 'fio' and 'fio' in r")
    assert "fsbench.tools.fio" in loaded and "fsbench.tools.mdtest" not in loaded


def test_a_third_party_plug_in_claiming_a_built_in_name_still_fails_when_that_name_is_asked_for(monkeypatch):
    import fsbench.plugins

    class Impostor:
        name, value = "fio", "fsbench_fake:PLUGIN"

        def load(self):
            return type("Fake", (), {"name": "fio"})()

    monkeypatch.setattr(fsbench.plugins, "_entry_points", lambda group: [Impostor()])
    registry: Registry = Registry("tool", "fsbench.tools", ("fsbench.tools.fio",))
    with pytest.raises(PluginError, match="two tool plug-ins are called 'fio'"):
        registry.get("fio")


def test_a_name_no_module_spells_falls_back_to_every_plug_in():
    registry: Registry = Registry("tool", "fsbench.tools", ("fsbench.tools.fio", "fsbench.tools.objbench"))
    assert registry.get("juicefs-objbench").name == "juicefs-objbench"
    with pytest.raises(KeyError, match="known: fio, juicefs-objbench"):
        registry.get("nosuch")


def test_the_report_imports_matplotlib_only_to_draw_a_chart():
    before = _modules_after("import fsbench.report, fsbench.report.views, fsbench.report.figures")
    assert "fsbench.report.figures" in before and "matplotlib" not in before
    after = _modules_after("import pandas as pd\nfrom fsbench.report.figures import line_chart\n"
                           "svg = line_chart(pd.DataFrame({'t': ['a', 'a'], 'x': [1, 2], 'mean': [1.0, 2.0], "
                           "'std': [0.0, 0.0]}), 'title', 'B/s', 'x', 't')\nassert svg.startswith('<svg')")
    assert "matplotlib" in after


def test_the_t_quantile_agrees_with_bisection_on_the_tail_at_fractional_degrees_of_freedom():
    from fsbench.analysis.stats import t_quantile, t_two_sided_p

    for df in (0.5, 1.0, 1.7, 2.0, 3.3, 7.9, 40.0, 1e5):
        for p in (0.6, 0.9, 0.975, 0.9995):
            q = t_quantile(p, df)
            assert t_two_sided_p(q, df) == pytest.approx(2 * (1 - p), rel=1e-9)
