"""Preflight's tool checks: one version everywhere; missing tools refuse the run unless skipping is allowed."""

from __future__ import annotations

from fsbench.run.preflight import Preflight, _tool_checks
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases

SCENARIO = """\
name: tools
hosts: {a: {transport: local}, b: {transport: local}}
targets: {t: {path: /srv/bench/t, hosts: [a, b]}}
workloads:
  meta: {tool: mdtest, options: {n: 10}}
  vdb: {tool: vdbench, jobs: {rd1: {elapsed: 1}}}
"""


def _check(facts: dict[str, dict], text: str = SCENARIO) -> Preflight:
    sc = load_scenario_text(text, "tools.yaml")
    pf = Preflight()
    _tool_checks(sc, plan_cases(sc), {h: {"host": h, **f} for h, f in facts.items()}, pf)
    return pf


def test_mixed_mdtest_versions_are_refused():
    pf = _check({"a": {"mdtest_version": "mdtest-4.0.0 (Open MPI 4.1.4)", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "mdtest-3.3.0 (Open MPI 4.1.4)", "vdbench_version": "/x"}})
    assert [f[:2] for f in pf.failures] == [("(all)", "mdtest version")]
    assert "mdtest-3.3.0" in pf.failures[0][2] and "mdtest-4.0.0" in pf.failures[0][2]


def test_same_mdtest_built_against_another_mpi_is_refused_too():
    pf = _check({"a": {"mdtest_version": "mdtest-4.0.0 (Open MPI 4.1.4)", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "mdtest-4.0.0 (Open MPI 5.0.3)", "vdbench_version": "/x"}})
    assert [f[1] for f in pf.failures] == ["mdtest version"]


def test_mdtest_missing_everywhere_refuses_the_run_but_vdbench_is_bring_your_own():
    pf = _check({"a": {"mdtest_version": "not found", "vdbench_version": "not found"},
                 "b": {"mdtest_version": "not found", "vdbench_version": "not found"}})
    assert sorted((h, c) for h, c, _ in pf.failures) == [("a", "mdtest installed"), ("b", "mdtest installed")]
    assert "fsbench deploy" in pf.failures[0][2]
    assert pf.warnings == ["vdbench is not installed on a, b: its cases will be skipped"]


def test_an_optional_workload_is_skipped_where_its_tool_is_missing():
    text = SCENARIO.replace("tool: mdtest,", "tool: mdtest, optional: true,")
    pf = _check({"a": {"mdtest_version": "not found", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "not found", "vdbench_version": "/x"}}, text)
    assert pf.failures == [] and pf.warnings == ["mdtest is not installed on a, b: its cases will be skipped"]


def test_missing_on_some_hosts_only_is_always_refused():
    text = SCENARIO.replace("tool: mdtest,", "tool: mdtest, optional: true,")
    pf = _check({"a": {"mdtest_version": "mdtest-4.0.0", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "not found", "vdbench_version": "not found"}}, text)
    assert [(h, c) for h, c, _ in pf.failures] == [("b", "mdtest installed"), ("b", "vdbench installed")]
