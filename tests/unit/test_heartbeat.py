"""The dead-host detector's keepalives: one asking thread for the heartbeat's life, a frozen host found and its
connection closed, every thread gone once it stops."""

from __future__ import annotations

import threading
import time

from fsbench.transport.heartbeat import KEEPALIVE, Heartbeat


class Link:
    """A paramiko Transport's part the heartbeat uses: replies at once, or (frozen) never, until closed."""

    def __init__(self, frozen: bool = False):
        self.frozen, self.active, self.requests = frozen, True, 0

    def is_active(self) -> bool:
        return self.active

    def global_request(self, kind: str, wait: bool = True) -> None:
        assert kind == KEEPALIVE and wait
        self.requests += 1
        while self.frozen and self.active:  # paramiko's wait ends when the connection closes
            time.sleep(0.01)

    def close(self) -> None:
        self.active = False


def _threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name in (f"fsbench-heartbeat-{name}", f"fsbench-keepalive-{name}")]


def test_a_live_host_is_asked_again_and_again_by_one_thread_and_its_threads_end_with_the_heartbeat():
    link, dead = Link(), []
    hb = Heartbeat(link, dead.append, interval_s=0.01, timeout_s=5, name="live")
    hb.start()
    deadline = time.monotonic() + 10
    while link.requests < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert link.requests >= 10 and dead == []
    assert sorted(t.name for t in _threads("live")) == ["fsbench-heartbeat-live", "fsbench-keepalive-live"]
    hb.stop()
    for t in _threads("live"):
        t.join(5)
    assert _threads("live") == [] and link.active  # stopped on purpose: the connection is the caller's


def test_a_frozen_host_is_declared_dead_once_and_its_connection_closed():
    link, dead = Link(frozen=True), []
    hb = Heartbeat(link, dead.append, interval_s=0.01, timeout_s=0.2, name="frozen")
    hb.start()
    deadline = time.monotonic() + 10
    while not dead and time.monotonic() < deadline:
        time.sleep(0.01)
    for t in _threads("frozen"):
        t.join(5)
    assert dead == ["stopped answering (no reply to an SSH keepalive within 0.2 s)"]
    assert not link.active and link.requests == 1 and _threads("frozen") == []


def test_a_stop_while_a_reply_is_awaited_ends_the_wait_at_once():
    """The connection is being closed on purpose while a keepalive waits on a slow host: the heartbeat's threads
    end at once, without waiting the reply's 30 s or declaring the host dead."""
    link, dead = Link(frozen=True), []
    hb = Heartbeat(link, dead.append, interval_s=0.01, timeout_s=30, name="stopping")
    hb.start()
    deadline = time.monotonic() + 10
    while link.requests < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.monotonic()
    hb.stop()
    loop = [t for t in _threads("stopping") if t.name == "fsbench-heartbeat-stopping"]
    for t in loop:
        t.join(10)
    assert time.monotonic() - start < 5 and not any(t.is_alive() for t in loop) and dead == []
    link.close()  # the caller closes the connection it stopped the heartbeat for: the asker's request ends
    for t in _threads("stopping"):
        t.join(10)
    assert _threads("stopping") == []
