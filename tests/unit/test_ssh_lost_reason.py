"""A command whose host could not run it says how, in words a case's reason can show (extra["lost"])."""

from __future__ import annotations

from fsbench.core.inventory import HostSpec
from fsbench.transport.errors import ConnectError
from fsbench.transport.ssh import SSHTransport


def test_a_refused_channel_is_said_as_the_refusal_not_as_a_lost_connection(monkeypatch):
    t = SSHTransport(HostSpec(name="client5", address="10.0.0.5", port=2222, user="bench"), ssh_config=None,
                     user_known_hosts=None)
    where = t.settings.where

    def refuse(_connection, _line):
        raise ConnectError("client5", where, "the server refused a session channel: (1, 'Administratively prohibited')")

    monkeypatch.setattr(t, "connection", lambda: object())
    monkeypatch.setattr(t, "open_exec", refuse)
    result = t.run(["fio", "--server"])
    assert result.exit_status is None and not result.ok
    assert result.extra["lost"] == f"{where}: the server refused a session channel: (1, 'Administratively prohibited')"
    assert "the server refused a session channel" in result.extra["error"]
