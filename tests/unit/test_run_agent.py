"""fsbench.transport.run_agent: the run's own ssh-agent for its relays, with real ssh-agent and ssh-add.

It starts only where the controller has no agent, holds the hosts' keys, ends with its last relay (its process,
its socket's folder and SSH_AUTH_SOCK gone), ends with a fsbench killed outright, and refuses a key it cannot
add without a prompt, saying what to do."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsbench.transport.errors import ConnectError
from fsbench.transport.run_agent import RunAgent, hold_for
from tests.conftest import require
from tests.paths import REPO


@pytest.fixture
def agents_dir(monkeypatch) -> Iterator[Path]:
    """The temporary folder the agents' folders go to: short, as a socket's path must be (not under tmp_path)."""
    short = Path(tempfile.mkdtemp(prefix="ra-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    yield short
    shutil.rmtree(short, ignore_errors=True)


@pytest.fixture
def keys(tmp_path, monkeypatch, agents_dir) -> dict[str, Path]:
    for tool in ("ssh-agent", "ssh-add", "ssh-keygen"):
        require(tool)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    made: dict[str, Path] = {}
    for name, passphrase in (("plain", ""), ("other", ""), ("locked", "secret")):
        made[name] = tmp_path / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(made[name])], check=True,
                       timeout=30)
    return made


def _held() -> list[str]:
    listed = subprocess.run(["ssh-add", "-l"], capture_output=True, text=True, timeout=30).stdout
    return sorted(line.split()[1] for line in listed.splitlines())


def _fingerprint(key: Path) -> str:
    return subprocess.run(["ssh-keygen", "-lf", str(key)], capture_output=True, text=True, check=True).stdout.split()[1]


def _processes_with(text: str) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and text.encode() in (p / "cmdline").read_bytes():
                out.append(int(p.name))
        except OSError:
            pass
    return out


def test_without_an_agent_one_is_started_holding_the_keys_and_the_last_release_ends_it(keys):
    agent = RunAgent()
    assert agent.hold([str(keys["plain"])]) is True
    sock = os.environ["SSH_AUTH_SOCK"]
    folder = Path(sock).parent
    assert folder.name.startswith("fsbench-agent-") and oct(folder.stat().st_mode & 0o777) == "0o700"
    assert agent.hold([str(keys["plain"]), str(keys["other"])]) is True  # a second relay: one agent, both keys
    assert _held() == sorted([_fingerprint(keys["plain"]), _fingerprint(keys["other"])])
    assert _processes_with(sock)
    agent.release()
    assert agent.running and _held()  # one relay still holds it
    agent.release()
    assert not agent.running and "SSH_AUTH_SOCK" not in os.environ and not folder.exists()
    assert list(folder.parent.iterdir()) == []
    deadline = time.monotonic() + 5
    while _processes_with(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(sock) == []


def test_with_the_users_own_agent_nothing_is_started(keys, monkeypatch):
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/agent.sock")
    agent = RunAgent()
    assert agent.hold([str(keys["plain"])]) is False
    assert not agent.running and os.environ["SSH_AUTH_SOCK"] == "/run/user/agent.sock"


def test_a_key_with_a_passphrase_is_refused_naming_it_without_a_prompt_and_nothing_is_left(keys, monkeypatch,
                                                                                           agents_dir):
    import fsbench.transport.run_agent as run_agent

    agent = RunAgent()
    monkeypatch.setattr(run_agent, "RUN_AGENT", agent)
    with pytest.raises(ConnectError) as exc:
        hold_for("client1", "inventory.yaml:3", [str(keys["locked"])])
    said = str(exc.value)
    assert "client1" in said and str(keys["locked"]) in said and "passphrase" in said and "ssh-add KEY" in said
    assert not agent.running and "SSH_AUTH_SOCK" not in os.environ
    assert list(agents_dir.iterdir()) == []


def test_a_fsbench_killed_outright_leaves_no_agent_holding_keys(keys, agents_dir):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, time\n"
        "from fsbench.transport.run_agent import RUN_AGENT\n"
        f"RUN_AGENT.hold([{str(keys['plain'])!r}])\n"
        "print(os.environ['SSH_AUTH_SOCK'], flush=True)\n"
        "time.sleep(60)\n")], cwd=REPO, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(agents_dir)})
    assert holder.stdout is not None
    sock = holder.stdout.readline().strip()
    assert sock and _processes_with(sock)
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    deadline = time.monotonic() + 10
    while _processes_with(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(sock) == []  # its pipe closed: the switch ended the agent, which removed its socket
    while Path(sock).parent.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(agents_dir.iterdir()) == []  # and the switch removed the folder


def test_an_agent_that_cannot_start_is_refused_at_once_with_its_own_words(keys, monkeypatch, tmp_path):
    import fsbench.transport.run_agent as run_agent

    deep = tmp_path / ("d" * 60) / ("e" * 60)  # past the 108 bytes a socket's path may have
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    monkeypatch.setattr(run_agent, "SOCKET_PATH_MAX", 10_000)  # the fall-back to /tmp left out
    agent = RunAgent()
    began = time.monotonic()
    with pytest.raises(run_agent.AgentRefused) as exc:
        agent.hold([str(keys["plain"])])
    assert time.monotonic() - began < 5  # not the 10 s wait for a socket
    assert "did not start" in exc.value.why and "too long" in exc.value.why, exc.value.why
    assert not agent.running and "SSH_AUTH_SOCK" not in os.environ and list(deep.iterdir()) == []


def test_an_agent_killed_from_outside_is_started_again_with_its_keys(keys):
    agent = RunAgent()
    assert agent.hold([str(keys["plain"])]) is True
    first = os.environ["SSH_AUTH_SOCK"]
    for pid in _processes_with(first):
        os.kill(pid, signal.SIGKILL)  # the agent and its switch, as an operator's kill would
    deadline = time.monotonic() + 5
    while _processes_with(first) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert agent.hold([str(keys["plain"])]) is True  # a second relay starts: a new agent, not a dead socket
    assert os.environ["SSH_AUTH_SOCK"] != first and _held() == [_fingerprint(keys["plain"])]
    agent.release()
    agent.release()
    assert not agent.running and "SSH_AUTH_SOCK" not in os.environ
