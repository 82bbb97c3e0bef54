"""A case's background servers (fio --server) carry the case's marker on their command line, through `env`."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from fsbench.run.background import Background
from fsbench.run.run_processes import CASE_MARKER
from fsbench.transport.fake import fake_hosts


def test_a_server_gets_the_case_marker_through_env_not_an_environment_file(tmp_path):
    hosts = fake_hosts("client1", "client2")
    commands = {h: ["fio", f"--server=ip:10.0.0.{i},8765"] for i, h in enumerate(hosts, 1)}
    for h in hosts:
        (tmp_path / h).mkdir()
    servers = Background(commands, dict(hosts), lambda h: tmp_path / h, 60, marker={CASE_MARKER: "t__w__r1"})
    servers.start()
    servers.stop()
    for i, (name, host) in enumerate(hosts.items(), 1):
        run = [c for c in host.log if c.op == "run"]
        # no environment for the transport to write into a file first (an SFTP write per host and case)
        assert [(c.argv, c.env) for c in run] == [(["env", f"{CASE_MARKER}=t__w__r1", "fio",
                                                    f"--server=ip:10.0.0.{i},8765"], {})]
        assert host.ops("put_text") == []
        # what the raw folder says the server ran is the tool's own command
        assert (tmp_path / name / "server-command").read_text() == f"fio --server=ip:10.0.0.{i},8765\n"
    assert all(r.ok for r in servers.results.values())


# -- waiting for the servers to listen ---------------------------------------------------------------------------


def _free_ports(n: int) -> list[int]:
    found = []
    for _ in range(n):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            found.append(s.getsockname()[1])
    return found


def test_every_server_is_waited_for_at_once(monkeypatch, tmp_path):
    """Ten servers whose first connection takes 0.3 s each (a slow network): waited for at once, about 0.3 s,
    not 3 s one after the other."""
    import fsbench.run.background as background

    def slow_connect(where, timeout):
        time.sleep(0.3)
        return contextlib.nullcontext()

    monkeypatch.setattr(background.socket, "create_connection", slow_connect)
    servers = Background({}, {}, lambda h: tmp_path, 60)
    start = time.monotonic()
    assert servers.wait_ports([("10.0.0.1", 8765 + i) for i in range(10)]) is None
    assert time.monotonic() - start < 2.0  # 3 s one after the other


def test_a_port_not_listening_yet_is_looked_at_again_soon_then_less_often(monkeypatch, tmp_path):
    """A server listens within milliseconds of its start: the first looks come 5 ms apart, doubling to 0.1 s."""
    import fsbench.run.background as background

    pauses: list[float] = []
    port = _free_ports(1)[0]
    listener = socket.socket()

    def pause(s: float) -> None:
        pauses.append(s)
        if len(pauses) == 7:  # the server listens now
            listener.bind(("127.0.0.1", port))
            listener.listen()

    monkeypatch.setattr(background.time, "sleep", pause)
    servers = Background({}, {}, lambda h: tmp_path, 60)
    with listener:
        assert servers.wait_ports([("127.0.0.1", port)]) is None
    assert pauses == [0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1]


def test_a_server_that_ended_ends_the_wait_for_every_port_with_its_account(tmp_path):
    """client2's server exits at once: the wait ends (not after 20 s) naming what it said, for each port."""
    hosts = fake_hosts("client1", "client2")
    hosts["client2"].on(["fio"], exit_status=1, stderr="fio: unable to bind: Address already in use\n")
    release = threading.Event()
    hosts["client1"].on(["fio"], then=lambda call: release.wait(30) and None)
    for h in hosts:
        (tmp_path / h).mkdir()
    ports = _free_ports(2)
    servers = Background({h: ["fio", f"--server=ip:127.0.0.1,{p}"] for h, p in zip(hosts, ports)}, dict(hosts),
                         lambda h: tmp_path / h, 60)
    servers.start()
    try:
        start = time.monotonic()
        why = servers.wait_ports([("127.0.0.1", p) for p in ports])
        assert time.monotonic() - start < 5.0
    finally:
        release.set()
        servers.stop()
    assert why is not None and why.startswith(f"no server listening on 127.0.0.1:{ports[0]} ")
    assert "on client2:" in why and "Address already in use" in why
