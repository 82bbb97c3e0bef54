"""A relay's program lost while a command had started it again already (fsbench.transport.relay_link).

A command that sees the program's channel closed starts the program again at once; the old channel's reader may
see its end only afterwards. Its loss must then be the old program's alone: its commands and masters failed, and
what it left running stopped by its own process group. Before, the loss took the process group of the program
started again (none known yet: the old one's orphans were never stopped, a master and its host's session left
running) and failed the new program's commands and masters too (found by the full suite under load)."""

from __future__ import annotations

import fsbench.transport.relay_link as relay_link
from fsbench.transport.relay_link import RelayLink


class _Relay:
    host = "client1"
    remote_base = "/tmp/fsbench-test"


class _Chan:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_lost_programs_loss_is_its_own_when_a_command_started_the_program_again(monkeypatch) -> None:
    stopped: list[tuple[int, str]] = []
    monkeypatch.setattr(relay_link, "stop_orphans", lambda relay, pgid, folder: stopped.append((pgid, folder)))
    link = RelayLink(_Relay())  # type: ignore[arg-type]
    old, new = _Chan(), _Chan()
    monkeypatch.setattr(link, "_ensure", lambda: None)
    monkeypatch.setattr(link, "_send", lambda *a, **k: None)
    link._chan = old
    old_cmd = link.start(["ssh", "-M", "client2"], None, None)
    link.masters["client2"] = old_cmd
    link._chan = new  # a command saw the old channel closed and started the program again
    new_master = link.start(["ssh", "-M", "client2"], None, None)
    link.masters["client2"] = new_master
    new_cmd = link.start(["ssh", "client3", "true"], None, None)
    link._lose(old, "the relay's program ended", 4242)  # the old channel's reader, only now
    assert old_cmd.done.is_set() and old_cmd.failed == "the relay's program ended"
    assert not new_master.done.is_set() and not new_cmd.done.is_set() and not new_cmd.failed
    assert link.masters == {"client2": new_master} and link._chan is new
    assert link._stopper is not None
    link._stopper.join(5)
    assert stopped == [(4242, link.folder)]  # the old program's group, not the new one's
    link._lose(new, "the relay's program ended", None)  # no group known: nothing to stop by it
    assert new_master.done.is_set() and new_cmd.done.is_set() and link.masters == {} and link._chan is None
