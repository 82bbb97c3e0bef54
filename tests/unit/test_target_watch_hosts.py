"""The watch on a mounted target asks all of the case's hosts at once, and counts their misses in their order."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from fsbench.run.target_watch import LOOKUPS_PER_S, NO_SUCH, TargetWatch, watch_interval, watch_of
from fsbench.transport.fake import fake_hosts

NAMES = [f"c{i}" for i in range(1, 13)]


def _watch(hosts) -> TargetWatch:
    target = SimpleNamespace(name="jfs", path="/mnt/jfs", services=["redis"])
    session = SimpleNamespace(target=target, transports=dict(hosts), plan=lambda host: SimpleNamespace(store=None))
    return TargetWatch(session, dict(hosts), threading.Event(), interval_s=0.01, answer_s=1.0)


def _answer(hosts, silent: set[str], barrier: threading.Barrier | None = None) -> None:
    def together(call):
        if barrier is not None:
            barrier.wait()
        return None

    for name, host in hosts.items():
        if name in silent:
            host.on(["/bin/sh"], exit_status=124, then=together)  # no answer within answer_s
        else:
            host.on(["/bin/sh"], exit_status=1, stderr=f"stat: cannot statx '/mnt/jfs/.x': {NO_SUCH}\n",
                    then=together)


def test_every_host_of_the_case_is_asked_at_once():
    """12 clients: their lookups are in flight together (the barrier passes only then), one a host a round."""
    hosts = fake_hosts(*NAMES)
    _answer(hosts, set(), threading.Barrier(len(NAMES), timeout=10))
    watch = _watch(hosts)
    assert watch._probe() is None
    assert all(len(hosts[n].commands(["/bin/sh"])) == 1 for n in NAMES)


def test_the_first_host_in_order_with_three_misses_in_a_row_is_the_fault():
    hosts = fake_hosts(*NAMES)
    _answer(hosts, {"c4", "c9"})
    watch = _watch(hosts)
    assert watch._probe() is None and watch._probe() is None  # two misses each: not yet a fault
    fault = watch._probe()
    assert fault is not None and fault.startswith("target jfs on c4: the mount /mnt/jfs gave no answer within 1s")
    assert "(3 times in a row)" in fault and "redis" in fault
    assert watch._missed[("c9", "mount")] == 3 and watch._missed[("c1", "mount")] == 0


def test_an_answer_between_misses_starts_the_count_again():
    hosts = fake_hosts(*NAMES)
    _answer(hosts, {"c2"})
    watch = _watch(hosts)
    assert watch._probe() is None and watch._probe() is None
    _answer(hosts, set())  # c2 answers once (newer rules first)
    assert watch._probe() is None and watch._missed[("c2", "mount")] == 0


def _watch_of(count: int, interval_s: float = 2.0) -> TargetWatch | None:
    names = [f"c{i}" for i in range(count)]
    target = SimpleNamespace(name="jfs", path="/mnt/jfs", services=["redis"])
    session = SimpleNamespace(target=target, transports={}, mounted=lambda hosts: list(hosts))
    settings = SimpleNamespace(fault_interval_s=interval_s, fault_answer_s=10.0)
    return watch_of(session, names, {n: object() for n in names}, threading.Event(), settings)


def test_up_to_a_hundred_hosts_the_watch_asks_every_fault_interval():
    for count in (1, 16, 100):
        watch = _watch_of(count)
        assert watch is not None and watch.interval_s == 2.0


def test_more_hosts_are_each_asked_less_often_so_all_together_stay_within_the_budget():
    """Every 2 s on 1,000 hosts was 500 lookups a second at the metadata server being measured."""
    for count in (101, 400, 1000):
        watch = _watch_of(count)
        assert watch is not None
        assert count / watch.interval_s == pytest.approx(LOOKUPS_PER_S)
    assert _watch_of(1000).interval_s == 20.0


def test_a_scenarios_longer_interval_is_kept():
    assert _watch_of(1000, interval_s=60.0).interval_s == 60.0
    assert watch_interval(60.0, 1000) == 60.0
