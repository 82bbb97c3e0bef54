"""The controller takes at most CONTROLLER_SAMPLES_PER_S samples a second from a case's hosts together: a case
on many hosts samples each of them less often, and says so when it samples less often than the scenario asks."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from fsbench.monitor.pace import CONTROLLER_SAMPLES_PER_S, pace, slower_note
from fsbench.monitor.script import FIRST_INTERVAL_S, MAGIC, SCRIPT
from fsbench.run.side_jobs import Monitors, monitors_of
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases
from fsbench.transport.fake import fake_hosts

#: where the sampler's own arguments hold the interval and the first interval (ms)
EVERY, FIRST = 0, 5


def _args(argv: list[str]) -> list[str]:
    """The sampler's own arguments, after its script (and its $0 where the script comes first)."""
    i = argv.index(SCRIPT)
    return argv[i + 2:] if argv[i + 1] == MAGIC else argv[i + 1:]


@pytest.mark.parametrize("hosts", [1, 4, 16, 32, 40])
def test_up_to_forty_hosts_sample_as_the_scenario_asks_with_the_dense_start(hosts):
    p = pace(1.0, hosts)
    assert (p.interval_s, p.first_interval_s) == (1.0, FIRST_INTERVAL_S)


@pytest.mark.parametrize("hosts", [41, 64, 128, 399, 400, 401, 1000, 5000])
def test_more_hosts_together_stay_within_the_controllers_budget(hosts):
    p = pace(1.0, hosts)
    assert hosts / p.first_interval_s <= CONTROLLER_SAMPLES_PER_S + 1e-9
    assert hosts / p.interval_s <= max(CONTROLLER_SAMPLES_PER_S, hosts / 1.0) + 1e-9
    assert p.first_interval_s <= p.interval_s
    assert (p.interval_s > 1.0) == (hosts > CONTROLLER_SAMPLES_PER_S)  # the interval itself only past 400 hosts at 1 s


def test_a_sparser_interval_than_the_budget_needs_is_kept():
    p = pace(30.0, 1000)
    assert p.interval_s == 30.0
    assert p.first_interval_s == pytest.approx(1000 / CONTROLLER_SAMPLES_PER_S)


def _case(count: int, tmp_path: Path):
    hosts = "\n".join(f"  h{i}: {{transport: local}}" for i in range(count))
    sc = load_scenario_text(f"""\
name: pace
hosts:
{hosts}
targets:
  t: {{path: {tmp_path / 'data'}, hosts: [{', '.join(f'h{i}' for i in range(count))}]}}
workloads:
  w: {{tool: fio, options: {{rw: read, size: 1m}}}}
""", "pace.yaml", base_dir=tmp_path)
    case = plan_cases(sc)[0]
    names = [f"h{i}" for i in range(count)]
    session = SimpleNamespace(service_dirs={}, transports={}, plan=None)
    sessions = monitors_of(sc, case, session, names, dict(fake_hosts(*names)), lambda h: tmp_path / "raw" / h)
    return sc, sessions


def test_a_case_on_sixteen_hosts_samples_each_as_the_scenario_asks(tmp_path):
    sc, sessions = _case(16, tmp_path)
    assert len(sessions) == 16
    assert {(_args(m.argv)[EVERY], _args(m.argv)[FIRST]) for m in sessions} == {("1000", "100")}
    assert Monitors(sessions, sc.monitor.interval_s, threading.Event()).collect() == []


def test_a_case_on_a_thousand_hosts_samples_each_less_often_and_says_so(tmp_path):
    sc, sessions = _case(1000, tmp_path)
    assert {(_args(m.argv)[EVERY], _args(m.argv)[FIRST]) for m in sessions} == {("2500", "2500")}
    notes = [w for part in Monitors(sessions, sc.monitor.interval_s, threading.Event()).collect()
             for w in part.warnings]
    assert notes == [slower_note(2.5, 1.0, 1000)]
    assert "every 2.5 s on each of the case's 1000 hosts, not every 1 s" in notes[0]
