"""The service manager on fake hosts: started once for the first target, stopped after the last, failures kept."""

from __future__ import annotations

import threading

from fsbench.core.events import Event
from fsbench.run.leftovers import Leftovers
from fsbench.run.targets.manager import ServiceManager
from tests.unit.runkit import DATA, lab, said

SHARED = f"""\
    settings: {{scratch: /scratch}}
    services:
      db: {{start: ["echo start db"], ready: "true", stop: ["echo stop db"]}}
    targets:
      a: {{path: {DATA}, services: [db]}}
      b: {{path: {DATA}, services: [db]}}
    workloads:
      w: {{tool: fio, options: {{rw: write, size: 1m}}, drop_caches: false}}
    """


def _manager(run, events: list[Event]) -> ServiceManager:
    return ServiceManager(run.sc, dict(run.hosts), run.rd.run_id, "/scratch/run", run.rd.path / "services",
                          events.append, ["a", "b"], Leftovers(run.rd.path / "leftovers.json"), {})


def _echoes(run) -> list[str]:
    return [said(c) for c in run.hosts["local"].commands() if said(c).startswith("echo ")]


def test_a_shared_service_starts_once_and_stops_after_its_last_target(tmp_path):
    run = lab(tmp_path, SHARED)
    events: list[Event] = []
    manager = _manager(run, events)
    values, reason = manager.ensure(("db",), threading.Event())
    assert reason is None and values["services.db.dir"] == "/scratch/run/services/db"
    assert manager.ensure(("db",), threading.Event())[1] is None  # b: already running
    manager.release("a")
    assert _echoes(run) == ["echo start db"]  # b still needs it
    manager.release("b")
    assert _echoes(run) == ["echo start db", "echo stop db"]
    manager.stop_all()  # nothing left: not stopped twice
    assert _echoes(run) == ["echo start db", "echo stop db"]
    assert not Leftovers(run.rd.path / "leftovers.json").actions


def test_a_service_that_fails_to_start_is_stopped_and_its_reason_kept_for_every_target(tmp_path):
    run = lab(tmp_path, SHARED)
    run.hosts["local"].on(lambda argv: said(argv) == "echo start db", exit_status=3, stderr="no such table")
    manager = _manager(run, [])
    _, reason = manager.ensure(("db",), threading.Event())
    assert reason and "service db did not start on local" in reason and "no such table" in reason
    assert _echoes(run) == ["echo start db", "echo stop db"]  # what it started is undone at once
    _, again = manager.ensure(("db",), threading.Event())
    assert again == reason and _echoes(run) == ["echo start db", "echo stop db"]  # not started a second time


def test_a_service_is_recorded_as_a_leftover_before_it_starts(tmp_path):
    run = lab(tmp_path, SHARED)
    seen: list[list[str]] = []
    run.hosts["local"].on(lambda argv: said(argv) == "echo start db",
                          then=lambda call: seen.append([a.what for a in Leftovers(run.rd.path / "leftovers.json")
                                                        .actions]))
    manager = _manager(run, [])
    manager.ensure(("db",), threading.Event())
    assert seen == [["service db"]]
    manager.stop_all()
    assert not Leftovers(run.rd.path / "leftovers.json").actions
