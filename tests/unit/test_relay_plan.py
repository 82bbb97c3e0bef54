"""The `ssh-relay` plug-in's pure parts: which hosts relay for which, the ssh lines a relay runs, the host keys
sent to it, what a fetched folder may hold. Its behaviour over real SSH: tests/e2e/test_relay_transport.py."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from fsbench.core.inventory import HostSpec
from fsbench.transport import remote
from fsbench.transport.errors import HostKeyError
from fsbench.transport.relay import PLUGIN, RelayedTransport, RelayHost, _files_and_folders, groups_of
from fsbench.transport.relay_setup import known_hosts_lines
from fsbench.transport.ssh import SSHTransport


class Host:
    def __init__(self, name: str):
        self.name = name


def specs(n: int, **extra) -> dict[str, HostSpec]:
    return {f"c{i}": HostSpec(f"c{i}", address=f"10.0.0.{i}", port=2222, user="bench", transport="ssh-relay",
                              **extra.get(f"c{i}", {})) for i in range(1, n + 1)}


@pytest.mark.parametrize(("hosts", "relays", "largest"), [(1, 1, 1), (2, 1, 2), (5, 2, 3), (16, 4, 4), (17, 4, 5),
                                                          (32, 6, 6), (1000, 32, 32), (1024, 32, 32)])
def test_about_sqrt_n_relays_of_about_sqrt_n_hosts(hosts, relays, largest):
    groups = groups_of([f"h{i}" for i in range(hosts)])
    assert len(groups) == relays and max(map(len, groups)) == largest
    assert [h for g in groups for h in g] == [f"h{i}" for i in range(hosts)]  # each once, in order


def test_each_groups_first_host_relays_and_jump_or_password_hosts_stay_direct():
    inv = specs(6, c3={"jump": "c1"}, c5={"password_env": "PW"})
    made = PLUGIN.make_all([Host(n) for n in inv], inv)
    assert list(made) == list(inv)
    kinds = {n: type(t).__name__ for n, t in made.items()}
    # four relayable hosts: two groups of two, each led by its first
    assert kinds == {"c1": "RelayHost", "c2": "RelayedTransport", "c3": "SSHTransport", "c4": "RelayHost",
                     "c5": "SSHTransport", "c6": "RelayedTransport"}
    c1, c2, c4, c6 = made["c1"], made["c2"], made["c4"], made["c6"]
    assert isinstance(c1, RelayHost) and isinstance(c2, RelayedTransport) and isinstance(c6, RelayedTransport)
    assert isinstance(c4, RelayHost) and c2.link is c1.link and c6.link is c4.link and c1.link is not c4.link
    assert list(c1.link.hosts) == ["c2"] and list(c4.link.hosts) == ["c6"]
    c3 = made["c3"]
    assert type(c3) is SSHTransport and c3.jump_host is not None and c3.jump_host.host == "c1"


def test_a_relayed_hosts_ssh_lines_trust_only_the_keys_sent_and_forward_nothing():
    inv = specs(2)
    made = PLUGIN.make_all([Host(n) for n in inv], inv)
    c2 = made["c2"]
    assert isinstance(c2, RelayedTransport)
    folder = c2.link.folder
    master = c2.ssh_argv(master=True)
    for option in ("StrictHostKeyChecking=yes", f"UserKnownHostsFile={folder}/known_hosts",
                   "GlobalKnownHostsFile=/dev/null", "BatchMode=yes", "ControlMaster=yes", "ControlPersist=no",
                   "ForwardAgent=no", "ClearAllForwardings=yes", "ServerAliveInterval=5", "ServerAliveCountMax=3"):
        assert option in master, option
    assert master[:3] == ["ssh", "-F", "/dev/null"] and master[-1] == "10.0.0.2" and "-N" in master
    assert master[master.index("-S") + 1] == f"{folder}/c1" and master[master.index("-p") + 1] == "2222"
    line = remote.command_line(["fio", "--version"], cwd=None, env=None, sudo=False)
    command = c2.through(line)
    assert command[-2:] == ["10.0.0.2", line] and "ControlMaster=no" in command
    assert c2.ssh_argv(check=True)[-3:] == ["-O", "check", "10.0.0.2"]
    # the relay host runs its own commands as its program's children, not over ssh to itself
    relay = made["c1"]
    assert isinstance(relay, RelayHost) and relay.through(line) == ["sh", "-c", line]
    assert folder.startswith(f"{relay.remote_base}/relay-")


def test_a_command_line_reads_dev_null_unless_it_is_given_input():
    assert remote.command_line(["cat"], cwd=None, env=None, sudo=False).endswith(" </dev/null")
    assert not remote.command_line(["cat"], cwd=None, env=None, sudo=False, stdin=True).endswith("</dev/null")


def test_the_relay_gets_the_controllers_known_hosts_entry_for_each_host_and_no_other(tmp_path):
    pub = _key(tmp_path / "k1")
    known = tmp_path / "known_hosts"
    known.write_text(f"[10.0.0.2]:2222 {pub}\n[10.0.0.9]:2222 {_key(tmp_path / 'k2')}\n")
    spec = HostSpec("c2", address="10.0.0.2", port=2222, user="bench", known_hosts=str(known))
    assert known_hosts_lines(SSHTransport(spec, user_known_hosts=None)) == f"[10.0.0.2]:2222 {pub}\n"
    missing = HostSpec("c3", address="10.0.0.3", port=2222, user="bench", known_hosts=str(known))
    with pytest.raises(HostKeyError) as exc:
        known_hosts_lines(SSHTransport(missing, user_known_hosts=None))
    assert "no known_hosts entry for [10.0.0.3]:2222" in str(exc.value) and "ssh-keyscan -p 2222 10.0.0.3" in \
        str(exc.value)


def test_a_fetched_folder_keeps_files_and_folders_and_nothing_that_points_out(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, kind in (("./a", tarfile.REGTYPE), ("./d", tarfile.DIRTYPE), ("./d/b", tarfile.REGTYPE),
                           ("./link", tarfile.SYMTYPE), ("../up", tarfile.REGTYPE), ("./fifo", tarfile.FIFOTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
            tar.addfile(info, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
    buf.seek(0)
    dest = tmp_path / "out"
    dest.mkdir()
    with tarfile.open(fileobj=buf) as tar, pytest.raises(tarfile.OutsideDestinationError):
        tar.extractall(dest, filter=_files_and_folders)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == ["a", "d", "d/b"]


def _key(path: Path) -> str:
    """A new host key's public half, as known_hosts writes it (type and base64)."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=30)
    return " ".join(Path(f"{path}.pub").read_text().split()[:2])


def test_a_killed_programs_group_is_stopped_only_while_a_member_works_in_the_relays_folder(tmp_path):
    """ORPHANS_SCRIPT run on this machine against real processes: a group working in another folder is spared, the
    relay's is stopped (TERM; what ignores it gets KILL 5 s later, not waited for here)."""
    import os
    import signal

    from fsbench.transport.relay_setup import ORPHANS_SCRIPT

    folder, other = tmp_path / "relay-1", tmp_path / "elsewhere"
    folder.mkdir()
    other.mkdir()
    spared = subprocess.Popen(["sleep", "60"], cwd=other, start_new_session=True)
    group = subprocess.Popen(["sleep", "61"], cwd=folder, start_new_session=True)
    try:
        for victim, where in ((spared, folder), (group, folder)):
            subprocess.run(["sh", "-c", ORPHANS_SCRIPT, "fsbench-relay", str(os.getpgid(victim.pid)), str(where)],
                           check=True, timeout=30)
        assert spared.poll() is None  # its group works elsewhere: not the relay's
        assert group.wait(timeout=10) == -signal.SIGTERM
    finally:
        for p in (spared, group):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
