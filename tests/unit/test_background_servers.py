"""A case's background servers (fio --server) carry the case's marker on their command line, through `env`."""

from __future__ import annotations

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
