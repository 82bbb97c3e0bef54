"""A dead-host detector for one SSH connection: a keepalive that wants a reply, sent every few seconds.

Why: a host that freezes (sshd stopped, a hung kernel, a cable pulled) closes nothing, so TCP stays up
and every channel open, SFTP read or running command waits for its own timeout (30 s, 60 s, the case's).
paramiko's own keepalive wants no reply and so proves nothing. Here a `keepalive@openssh.com` global
request goes out every `interval_s`; any answer (OpenSSH refuses the unknown request, which is an answer)
proves the host alive. When none comes within `timeout_s`, `on_dead` gets the reason once and the
connection is closed, which ends every wait on it at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

KEEPALIVE = "keepalive@openssh.com"
INTERVAL_S = 5.0
TIMEOUT_S = 15.0


class Heartbeat:
    """Probes one paramiko Transport from a daemon thread until stopped or the host is found dead."""

    def __init__(self, t, on_dead: Callable[[str], None], *, interval_s: float = INTERVAL_S,
                 timeout_s: float = TIMEOUT_S, name: str = ""):
        self.t, self.on_dead = t, on_dead
        self.interval_s, self.timeout_s = interval_s, timeout_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"fsbench-heartbeat-{name}", daemon=True)
        # one asker for the heartbeat's life: a thread per keepalive was 200 new threads a second at 1,000 hosts
        self._ask, self._replied = threading.Event(), threading.Event()
        self._asker = threading.Thread(target=self._ask_loop, name=f"fsbench-keepalive-{name}", daemon=True)

    def start(self) -> None:
        self._asker.start()
        self._thread.start()

    def stop(self) -> None:
        """No more probes (the connection is being closed on purpose)."""
        self._stop.set()
        self._ask.set()  # an idle asker wakes and leaves
        self._replied.set()  # a loop waiting on a reply goes on to see the stop

    def _loop(self) -> None:
        try:
            self._probe_until_stopped()
        finally:
            self._stop.set()
            self._ask.set()  # the asker leaves too (at once, or once a request it is in ends with the connection)

    def _probe_until_stopped(self) -> None:
        while not self._stop.wait(self.interval_s):
            if not self.t.is_active():
                return  # closed or dropped: the transport reconnects (or reports) on its next use
            if self.answered():
                continue
            if self._stop.is_set() or not self.t.is_active():
                return
            self.on_dead(f"stopped answering (no reply to an SSH keepalive within {self.timeout_s:g} s)")
            try:
                self.t.close()  # wakes every command, channel open and SFTP request waiting on the host
            except Exception:  # noqa: BLE001, S110 - closing a dead connection may fail in any way; it is closed
                pass
            return

    def answered(self) -> bool:
        """Whether the host replied to one keepalive within timeout_s."""
        self._replied.clear()
        if self._stop.is_set():  # stopped meanwhile: the asker has left, and no reply is wanted
            return True
        self._ask.set()
        return self._replied.wait(self.timeout_s)

    def _ask_loop(self) -> None:
        """Send a keepalive each time the loop asks, and say when its reply came (or the connection ended)."""
        while True:
            self._ask.wait()
            self._ask.clear()
            if self._stop.is_set():
                return
            try:
                # blocks until the reply, or until the connection is closed
                self.t.global_request(KEEPALIVE, wait=True)
            except Exception:  # noqa: BLE001, S110 - a send that fails means a closed connection: not our call
                pass
            self._replied.set()
