"""The shared labs of the end-to-end tests (tests/e2e/labs.py): their modules run together, each lab starts
once on first use and stops right after its last user, and a session cut short still stops them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from tests.e2e import labs


@dataclass
class Item:
    """What the hooks read of a collected test."""

    nodeid: str
    fixturenames: tuple[str, ...] = ()


@pytest.fixture
def events(monkeypatch) -> list[str]:
    """Two fake labs in place of Ceph and Hadoop, noting when they start and stop."""
    seen: list[str] = []

    def fake(name: str):
        @contextmanager
        def lab() -> Iterator[str]:
            seen.append(f"start {name}")
            yield f"{name}-value"
            seen.append(f"stop {name}")
        return lab

    monkeypatch.setattr(labs, "LABS", {"ceph_lab": fake("ceph_lab"), "hadoop_lab": fake("hadoop_lab")})
    return seen


def _ids(items: list[Item]) -> list[str]:
    return [i.nodeid for i in items]


def test_the_modules_of_a_lab_run_together_where_its_first_module_was(events):
    items = [Item("a.py::t1"), Item("b.py::t1", ("ceph_lab",)), Item("c.py::t1"), Item("d.py::t1", ("hadoop_lab",)),
             Item("e.py::t1"), Item("f.py::t1", ("ceph_lab", "tmp_path")), Item("f.py::t2"),
             Item("g.py::t1", ("hadoop_lab",))]
    shared = labs.SharedLabs()
    shared.pytest_collection_modifyitems(items)
    assert _ids(items) == ["a.py::t1", "b.py::t1", "f.py::t1", "f.py::t2", "c.py::t1", "d.py::t1", "g.py::t1",
                           "e.py::t1"]
    assert shared.last_user == {"ceph_lab": "f.py::t1", "hadoop_lab": "g.py::t1"}


def _teardown(shared: labs.SharedLabs, item: Item) -> None:
    """Drive the teardown wrapper as pluggy does, around a teardown that passes."""
    wrapper = shared.pytest_runtest_teardown(item, None)
    next(wrapper)
    with pytest.raises(StopIteration):
        wrapper.send(None)


def test_a_lab_starts_once_and_stops_after_its_last_user(events):
    items = [Item("b.py::t1", ("ceph_lab",)), Item("b.py::t2", ("ceph_lab",)), Item("c.py::t1")]
    shared = labs.SharedLabs()
    shared.pytest_collection_modifyitems(items)
    assert shared.get("ceph_lab") == "ceph_lab-value"
    _teardown(shared, items[0])
    assert shared.get("ceph_lab") == "ceph_lab-value"  # the running one
    assert events == ["start ceph_lab"]
    _teardown(shared, items[1])
    assert events == ["start ceph_lab", "stop ceph_lab"] and shared.running == {}
    _teardown(shared, items[2])
    assert events == ["start ceph_lab", "stop ceph_lab"]


def test_a_session_cut_short_stops_every_running_lab_and_reports_the_first_failure(monkeypatch):
    stopped: list[str] = []

    @contextmanager
    def failing() -> Iterator[str]:
        yield "x"
        stopped.append("failing")
        raise AssertionError("the lab's daemons outlived its stop")

    @contextmanager
    def fine() -> Iterator[str]:
        yield "y"
        stopped.append("fine")

    monkeypatch.setattr(labs, "LABS", {"ceph_lab": failing, "hadoop_lab": fine})
    shared = labs.SharedLabs()
    shared.get("ceph_lab"), shared.get("hadoop_lab")
    with pytest.raises(AssertionError, match="outlived its stop"):
        shared.pytest_sessionfinish()
    assert sorted(stopped) == ["failing", "fine"] and shared.running == {}


def test_a_lab_whose_start_failed_is_not_started_again_by_its_later_users(monkeypatch):
    tries: list[int] = []

    @contextmanager
    def broken() -> Iterator[str]:
        tries.append(1)
        raise AssertionError("service hdfs on local never became ready")
        yield "never"

    monkeypatch.setattr(labs, "LABS", {"hadoop_lab": broken})
    shared = labs.SharedLabs()
    with pytest.raises(AssertionError, match="never became ready"):
        shared.get("hadoop_lab")
    with pytest.raises(pytest.fail.Exception, match="failed to start earlier in this session: .*never became ready"):
        shared.get("hadoop_lab")
    assert tries == [1] and shared.running == {}
