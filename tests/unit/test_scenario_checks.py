"""check_scenario runs its named checks from a list: every check's issues, in the list's order."""

import textwrap

import pytest

import fsbench.scenario.checks as checks
from fsbench.core.errors import ScenarioError
from fsbench.scenario.load import load_scenario_text

#: one or more problems for each check of the list
MANY = """\
name: many
hosts:
  local: {transport: local}
services:
  meta:
    kind: command
    hosts: [nowhere]
    start: ["echo ${service.bogus}"]
    ready: "true"
targets:
  a:
    path: /srv/bench/a
    baseline: true
    hosts: [ghost]
    services: [missing]
    setup: ["echo ${target.nothing}"]
  b:
    path: /etc
    baseline: true
  c:
    path: /srv/bench/c
    baseline: true
report:
  views:
    - {view: table, workload: nosuch}
collectors:
  stats:
    kind: command
    command: "echo ${case.what}"
    targets: [zzz]
    hosts: [nohost]
workloads:
  w1:
    tool: fio
    targets: [a, q]
    options: {rw: write, bs: 1m, description: "${secrets.x}"}
    sweep:
      product: {bs: [4k, 4q], iodepth: []}
      zip: {numjobs: [1, 2], size: [1m], iodepth: [1]}
"""


def _cross_issues(monkeypatch, text: str) -> list:
    """The issues check_scenario returned, in its own order (the loader sorts them by line afterwards)."""
    seen: list = []
    real = checks.check_scenario

    def spy(sc, lm):
        seen.extend(real(sc, lm))
        return seen

    monkeypatch.setattr(checks, "check_scenario", spy)
    with pytest.raises(ScenarioError):
        load_scenario_text(textwrap.dedent(text), "s.yaml")
    return seen


def test_the_checks_report_every_section_in_the_order_of_their_list(monkeypatch):
    issues = _cross_issues(monkeypatch, MANY)
    assert [(i.path, i.message.split(":")[0][:40]) for i in issues] == [
        ("targets.b.baseline", "a second baseline ('a' is one)"),
        ("targets.c.baseline", "a second baseline ('a' is one)"),
        ("targets.a.hosts", "unknown host or group 'ghost'"),
        ("targets.a.services", "unknown service 'missing'"),
        ("targets.a.setup", "unknown placeholder ${target.nothing}"),
        ("targets.b.path", "'/etc' is inside the system folder /etc;"),
        ("services.meta.hosts", "unknown host or group 'nowhere'"),
        ("services.meta.start", "unknown placeholder ${service.bogus}"),
        ("collectors.stats.targets", "unknown target 'zzz'"),
        ("collectors.stats.hosts", "unknown host or group 'nohost'"),
        ("collectors.stats.command", "unknown placeholder ${case.what}"),
        ("report.views[0]", "unknown workload 'nosuch'"),
        ("workloads.w1.targets", "unknown target 'q'"),
        ("workloads.w1.sweep.zip", "zipped lists differ in length"),
        ("workloads.w1.sweep.product.bs", "'bs' is both an option and swept"),
        ("workloads.w1.sweep.product.iodepth", "an empty list sweeps nothing"),
        ("workloads.w1.sweep.zip.iodepth", "'iodepth' is in both product and zip"),
        ("workloads.w1.options.description", "${secrets.x} is not filled in a tool's o"),
    ]
    assert "hosts: local" in issues[2].hint and "services: meta" in issues[3].hint


def test_an_empty_scenario_is_told_to_name_targets_and_workloads_first(monkeypatch):
    issues = _cross_issues(monkeypatch, "name: empty\ntargets: {}\nworkloads: {}\n")
    assert [(i.path, i.message) for i in issues][:2] == [
        ("targets", "no targets: name at least one system under test"),
        ("workloads", "no workloads: name at least one tool run")]


def test_each_check_is_small_and_named_in_the_list():
    names = [c.__name__ for c in checks.CHECKS]
    assert names == ["_sections_present", "_one_baseline", "_target_issues", "_service_issues",
                     "_local_client_issues", "_collector_issues", "_report_view_issues", "_report_templates_issues",
                     "_workload_issues", "_case_count_issues"]
