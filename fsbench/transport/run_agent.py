"""An ssh-agent of fsbench's own for the relays of a run, when the controller has none.

Why: a relay logs in to its hosts with the controller's ssh-agent, forwarded on the relay's channel only (no key
is copied anywhere). A controller with the hosts' key files but no agent (a CI runner, a cron job, a plain
login) could not use relays at all: the run stopped at preflight, asking for one. Now fsbench starts an agent
for the process, holding the hosts' key files, and ends it when its last relay closes.

What it touches: a private folder it makes (mkdtemp, 0700) for the agent's socket, and the agent, started
under a dead man's switch (a shell that ends the agent once fsbench's pipe to it closes: a fsbench killed
outright leaves no agent holding keys). SSH_AUTH_SOCK is set for the process while the agent lives (paramiko's
agent forwarding reads it; the run's own ssh children, mpirun's, then use it too) and unset after. A key with
a passphrase cannot be added without a prompt: refused, naming it, saying what to do.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence

from fsbench.transport.errors import ConnectError

#: the agent, ended when fsbench's pipe to this shell closes (fd 3: a background list's stdin is /dev/null); the
#: shell ends with the agent, so an agent that cannot start is seen at once, its words on stderr (which the waiting
#: reader does not hold); then its folder, empty once the agent removed its socket
AGENT_SCRIPT = ('exec 3<&0; ssh-agent -D -a "$1/agent.sock" >/dev/null & a=$!; '
                '(read -r _ <&3; kill "$a") 2>/dev/null & wait "$a"; s=$?; rmdir -- "$1" 2>/dev/null; exit $s')
#: a Unix socket's path must fit in 108 bytes: a longer temporary folder gives way to /tmp
SOCKET_PATH_MAX = 100
START_S = 10.0
ADD_S = 30.0


class AgentRefused(Exception):
    """The run's agent could not be started or given a key: why, and what to do."""

    def __init__(self, why: str, hint: str):
        super().__init__(why)
        self.why, self.hint = why, hint


class RunAgent:
    """The process's own ssh-agent, shared by its relays: `hold(keys)` before a relay starts, `release()` when it
    closes. With the user's own agent (SSH_AUTH_SOCK set by somebody else) it does nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._folder = ""
        self._socket = ""
        self._holders = 0
        self._keys: set[str] = set()

    @property
    def running(self) -> bool:
        return self._proc is not None

    def hold(self, keys: Sequence[str]) -> bool:
        """Make sure an agent serves this process, holding keys (the default identities when there are none);
        True when it is the run's own (then release() once the relay closes). Raises AgentRefused."""
        with self._lock:
            if self._proc is not None and not self._answers():
                self._stop()  # the run's agent died (killed from outside): a new one, its keys added again
            if self._proc is None and os.environ.get("SSH_AUTH_SOCK"):
                return False  # the user's own agent: the keys are theirs to add
            if self._proc is None:
                self._start()
            self._holders += 1
            try:
                for key in list(keys) or [""]:
                    if key not in self._keys:
                        self._add(key)
                        self._keys.add(key)
            except AgentRefused:
                self._holders -= 1
                if self._holders == 0:
                    self._stop()
                raise
            return True

    def _answers(self) -> bool:
        """Whether the run's agent takes a connection on its socket (a killed one leaves the file behind, and its
        switch may not have ended yet)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2.0)
            try:
                conn.connect(self._socket)
            except OSError:
                return False
        return True

    def release(self) -> None:
        """A relay that held the agent closed; the last one ends it."""
        with self._lock:
            self._holders = max(0, self._holders - 1)
            if self._holders == 0 and self._proc is not None:
                self._stop()

    def _start(self) -> None:
        if shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None:
            raise AgentRefused("the relay needs an ssh-agent to forward the hosts' key, and none runs here "
                               "(SSH_AUTH_SOCK is not set; OpenSSH's ssh-agent and ssh-add are not installed "
                               "to start one)", "install OpenSSH's client tools, or give the hosts `transport: ssh`")
        base = tempfile.gettempdir()
        if len(os.path.join(base, "fsbench-agent-xxxxxxxx", "agent.sock")) > SOCKET_PATH_MAX:
            base = "/tmp"
        self._folder = tempfile.mkdtemp(prefix="fsbench-agent-", dir=base)  # 0700
        self._socket = os.path.join(self._folder, "agent.sock")
        self._proc = subprocess.Popen(["sh", "-c", AGENT_SCRIPT, "fsbench-agent", self._folder],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      start_new_session=True)
        deadline = time.monotonic() + START_S
        while not os.path.exists(self._socket):
            ended = self._proc.poll() is not None
            if ended or time.monotonic() > deadline:
                said = self._proc.stderr.read().decode(errors="replace").strip() if ended and self._proc.stderr else ""
                self._stop()
                raise AgentRefused(f"the run's own ssh-agent did not start: {said or 'no socket within 10 s'}",
                                   "start one yourself (`eval $(ssh-agent)`, then `ssh-add KEY`) before fsbench")
            time.sleep(0.02)
        os.environ["SSH_AUTH_SOCK"] = self._socket

    def _add(self, key: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_ASKPASS", "DISPLAY")}
        env.update(SSH_AUTH_SOCK=self._socket, SSH_ASKPASS_REQUIRE="never")
        # no terminal and no input: a key with a passphrase fails here instead of prompting in the middle of a run
        r = subprocess.run(["ssh-add", "-q", *([key] if key else [])], env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, start_new_session=True, timeout=ADD_S, check=False)
        if r.returncode != 0:
            said = " ".join(r.stderr.split())
            name = key or "the default identities (~/.ssh/id_*)"
            why = ("it has a passphrase" if "passphrase" in said.lower()
                   else "no key found there" if not key else said or f"ssh-add exited {r.returncode}")
            raise AgentRefused(f"the run's own ssh-agent cannot hold {name}: {why}",
                               "load the key into an ssh-agent of your own (`eval $(ssh-agent)`, then "
                               "`ssh-add KEY`) before fsbench, or set the hosts' key_file to a key without one")

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if os.environ.get("SSH_AUTH_SOCK") == self._socket:
            del os.environ["SSH_AUTH_SOCK"]
        if proc is not None:
            try:
                if proc.stdin:
                    proc.stdin.close()  # the switch: its shell ends the agent
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # its own session's group: the shell and the agent it started
                proc.wait(timeout=10)
            if proc.stderr:
                proc.stderr.close()
        shutil.rmtree(self._folder, ignore_errors=True)
        self._keys.clear()


#: the process's agent, for every relay of the run
RUN_AGENT = RunAgent()


def hold_for(relay: str, where: str, keys: Sequence[str]) -> bool:
    """RUN_AGENT.hold(keys) for a relay's hosts; its refusal as the relay's ConnectError."""
    try:
        return RUN_AGENT.hold(sorted(set(keys)))
    except AgentRefused as exc:
        raise ConnectError(relay, where, exc.why, exc.hint) from None
