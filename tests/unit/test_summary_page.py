"""The one-page summary's own rules: log axis where ratios span a decade, the ratio's text, what was not run,
and the template environment (no ./templates of the working directory; fsbench/ is always fsbench's; a sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from fsbench.core.errors import FsbenchError
from fsbench.report.html import environment, templates_dir
from fsbench.report.summary_page import _log_scale, not_run, ratio_text


def _item(*ratios: float) -> dict:
    return {"ratios": [{"target": f"t{i}", "ratio": r, "low": None, "high": None} for i, r in enumerate(ratios)]}


def test_log_axis_only_where_ratios_span_a_decade():
    assert not _log_scale([_item(0.8, 1.2, 3.0)])
    assert _log_scale([_item(0.2, 1.0), _item(2.5)])
    assert not _log_scale([])


def test_ratio_text_with_and_without_an_interval():
    assert ratio_text({"ratio": 2.314, "low": 2.1, "high": 2.55}) == "2.31× [2.1–2.55]"
    assert ratio_text({"ratio": 41.4, "low": None, "high": None}) == "41×"
    assert ratio_text({"ratio": 0.5, "low": float("nan"), "high": 0.6}) == "0.5×"


def test_not_run_names_the_scale_and_the_scenarios_substitutions():
    ctx = {"scale": {"value": "quick", "full": "full", "differs": [("size", "1g", "100g")]},
           "own_conclusions": ["Ceph was substituted by a one-host lab.", "Redis wins."]}
    assert not_run(ctx) == ["scale quick, not full: size 1g (at full: 100g)", "Ceph was substituted by a one-host lab."]
    assert not_run({"scale": {"value": "full", "full": "full", "differs": []}, "own_conclusions": []}) == []


def test_templates_come_from_the_given_folder_never_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "report.html.j2").write_text("from cwd")
    monkeypatch.chdir(tmp_path)
    own = environment().loader.get_source(environment(), "report.html.j2")[0]  # type: ignore[union-attr]
    assert "from cwd" not in own and "{% block summary %}" in own
    team = tmp_path / "team"
    team.mkdir()
    (team / "report.html.j2").write_text('{% extends "fsbench/report.html.j2" %}')
    env = environment(team)
    assert env.loader.get_source(env, "report.html.j2")[0].startswith("{% extends")  # type: ignore[union-attr]
    assert "{% block summary %}" in env.loader.get_source(env, "fsbench/report.html.j2")[0]  # type: ignore[union-attr]


def test_a_missing_templates_folder_is_refused_and_templates_render_in_the_immutable_sandbox(tmp_path):
    with pytest.raises(FsbenchError, match=r"--templates: .* is not a folder of templates"):
        templates_dir(str(tmp_path / "gone"))
    assert templates_dir(None) is None and templates_dir("") is None
    assert templates_dir(str(tmp_path)) == Path(tmp_path)
    assert isinstance(environment(), ImmutableSandboxedEnvironment)  # the report's and the compare page's
