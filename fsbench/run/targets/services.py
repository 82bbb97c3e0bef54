"""Services a scenario owns (start, readiness probe, stop) or merely expects (probe only)."""

from __future__ import annotations

import posixpath
import random
import shlex
import socket
import string
import threading
import time
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.events import Event, Listener
from fsbench.core.secrets import SECRET_WORDS, has_secrets, redact, redact_tree, remember, secret_env
from fsbench.core.shell import render, sh
from fsbench.core.units import is_whole_number
from fsbench.run.leftovers import NoLeftovers
from fsbench.scenario.model import Service
from fsbench.services import SERVICE_KINDS
from fsbench.services.processes import Identity, PortState, parse_now, parse_ports

PROBE_EVERY_S = 0.5
AUTO_PORT_TRIES = 5
STOP_WAIT_S = 5  # how long a stopped service's processes may take to end before fsbench TERMs them
KILL_GRACE_S = 10  # between TERM and KILL
#: the SSH transport's watchdog of a finished command (in the service's folder too) ends within a second
SETTLE_S = 2
_KEY_CHARACTERS = string.ascii_uppercase + string.digits


def made_up(length: int, alphabet: str = _KEY_CHARACTERS + string.ascii_lowercase) -> str:
    """A random key of length characters (letters and digits: safe in URLs, files and every client's config)."""
    pick = random.SystemRandom()
    return "".join(pick.choice(alphabet) for _ in range(length))


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def wait_ready(tr: Transport, probe: list[str], timeout: float, cancel: threading.Event | None,
               env: dict[str, str] | None = None) -> CommandResult:
    """Run probe until it succeeds or timeout passes; the last result either way."""
    deadline = time.monotonic() + timeout
    while True:
        r = tr.run(probe, timeout=min(30.0, max(1.0, timeout)), cancel=cancel, env=env)
        if r.ok or time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
            return r
        time.sleep(PROBE_EVERY_S)


class ServiceSession:
    """One service on its host: files rendered, started, probed until ready, stopped at the end."""

    def __init__(self, svc: Service, host: str, transport: Transport, run_id: str, scratch: str,
                 log_dir: Path, emit: Listener, address: str = "127.0.0.1", leftovers=None,
                 secrets: dict[str, str] | None = None, generation: int = 1):
        self.svc, self.host, self.tr, self.emit = svc, host, transport, emit
        self.secrets = dict(secrets or {})
        self.leftovers = leftovers or NoLeftovers()
        self._cleanup = ""
        self.address = address  # how clients reach it: 127.0.0.1 here, the meta node's address on a cluster
        self.run_id, self.scratch, self.log_dir = run_id, scratch, log_dir
        # a service started again in the run (fresh rounds) gets a folder of its own: a new, empty server
        self.dir = posixpath.join(scratch, "services", svc.name + (f".{generation}" if generation > 1 else ""))
        self.port: int | str = ""
        self.ports: dict[str, int] = {}
        self.started = False
        #: who holds a port of the service instead of its own server (found after the ready probe), or ""
        self.foreign = ""
        self.identity = Identity(run_id, svc.name, self.dir)
        self.plan = SERVICE_KINDS.get(svc.kind).plan(svc)
        #: an `existing:` server of a kind is never started, stopped or signalled, like `managed: false`
        self.managed = svc.managed and self.plan.managed
        #: per-run values of the kind (an S3 server's keys): secrets are masked from now on
        self.generated = {k: made_up(n) for k, n in self.plan.generated.items()}
        for k, v in self.generated.items():
            if k in SECRET_WORDS:
                remember(v)

    def values(self) -> dict[str, str]:
        """Placeholders of the service's own commands and files."""
        return {"service.name": self.svc.name, "service.port": str(self.port), "service.host": self.address,
                "service.dir": self.dir, "run.id": self.run_id, "run.scratch": self.scratch, "host.name": self.host,
                **{f"service.port_{k}": str(v) for k, v in self.ports.items()},
                **{f"service.{k}": v for k, v in self.generated.items()},
                **{f"secrets.{k}": v for k, v in self.secrets.items()}}

    @property
    def env(self) -> dict[str, str] | None:
        """The environment of the service's commands: every secret its placeholders may refer to."""
        return secret_env(self.values()) or None

    def exported(self) -> dict[str, str]:
        """Placeholders targets use: ${services.NAME.port|host|dir}."""
        name = self.svc.name
        return {f"services.{name}.port": str(self.port), f"services.{name}.host": self.address,
                f"services.{name}.dir": self.dir,
                **{f"services.{name}.port_{k}": str(v) for k, v in self.ports.items()},
                **{f"services.{name}.{k}": render(v, self.values(), quote=False) for k, v in self.plan.exports.items()}}

    def start(self, cancel: threading.Event | None = None) -> str | None:
        """Start (when managed) and wait until ready; None when ready, else why not."""
        svc = self.svc
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if self.managed:
            reason = self._claim_ports()
            if reason:
                return reason
            self.tr.makedirs(self.dir)
            for name, body in self.plan.files.items():
                self.tr.put_text(posixpath.join(self.dir, name), render(body, self.values(), quote=False))
                (self.log_dir / name).write_text(redact(render(body, self.values(), quote=False)))
            # recorded before starting: if fsbench dies, the next run runs the stop commands (unless someone
            # else holds a port of the service by then), then stops every process this start left running
            self._cleanup = self.leftovers.add(self.host, f"service {svc.name}",
                                               [*(self._stop_argv(c) for c in self.plan.stop), self.identity.kill()])
            self.started = True
            for i, cmd in enumerate(self.plan.start):
                self.emit(Event("service", message=f"start {svc.name} on {self.host}: {cmd}"))
                argv = sh(render(cmd, self.values()))
                r = self.tr.run(self.identity.tag(argv), cwd=self.dir,
                                timeout=svc.ready_timeout_s, stdout_path=self.log_dir / f"start-{i}.out",
                                stderr_path=self.log_dir / f"start-{i}.err", cancel=cancel, env=self.env)
                if not r.ok:
                    return f"service {svc.name} did not start on {self.host}: {r.describe(shlex.join(argv))}"
        else:
            port = svc.port if svc.port is not None else self.plan.default_port
            self.port = free_port() if port == "auto" else (port or "")
            self.ports = {name: free_port() for name in dict.fromkeys((*self.plan.ports, *svc.ports))}
        if has_secrets():
            redact_tree(self.log_dir)
        probe = sh(render(self.plan.ready or "true", self.values()))
        r = wait_ready(self.tr, probe, svc.ready_timeout_s, cancel, env=self.env)
        if not r.ok:
            return (f"service {svc.name} on {self.host} never became ready within {svc.ready_timeout_s:.0f}s: "
                    f"the probe `{self.plan.ready}` {r.describe()}")
        if self.managed:
            reason = self._prove_ours()
            if reason:
                return reason
        self.emit(Event("service", message=f"{svc.name} ready on {self.host}"
                                           f"{' port ' + str(self.port) if self.port else ''}"))
        return None

    def _numbers(self) -> list[int]:
        """The TCP ports the service was given: its port and its named ones."""
        return [int(p) for p in (self.port, *self.ports.values()) if is_whole_number(str(p))]

    def _port_states(self) -> tuple[dict[int, PortState], int | None] | str:
        """Who listens on the service's ports on its host, and the host's clock; or why that is unknown."""
        r = self.tr.run(self.identity.argv("ports", *map(str, self._numbers())), cwd="/", timeout=60)
        out = r.extra.get("stdout", r.stdout_tail)
        now = parse_now(out)
        if not r.ok or now is None:
            return (f"service {self.svc.name} on {self.host}: cannot tell who listens on its ports "
                    f"(/proc, sh, awk and grep -z are needed there): {r.describe('the port check')}")
        return parse_ports(out), now

    def _claim_ports(self) -> str | None:
        """Choose the ports and check on the host that nobody listens on them; None when free, else why not."""
        svc = self.svc
        port = svc.port if svc.port is not None else self.plan.default_port
        names = list(dict.fromkeys((*self.plan.ports, *svc.ports)))
        taken: list[PortState] = []
        for _ in range(AUTO_PORT_TRIES):  # a port chosen here may be taken on another host: choose again
            self.port = free_port() if port == "auto" else (port or "")
            self.ports = {name: free_port() for name in names}
            found = self._port_states()
            if isinstance(found, str):
                return found
            states, now = found
            self.identity = Identity(self.run_id, self.svc.name, self.dir, now or 0)
            taken = [st for st in states.values() if st.state != "free"]
            if not taken:
                return None
            fixed = [st for st in taken if port != "auto" and str(st.port) == str(self.port)]
            if fixed:
                st = fixed[0]
                return (f"service {svc.name} on {self.host}: port {st.port} is already in use, by "
                        f"{', '.join(st.others) or 'another process'}: fsbench starts a server of its own there, "
                        "and would talk to (and stop) that one instead; free the port, or give the service "
                        "`port: auto` (a free port chosen at run time)")
        listed = ", ".join(f"{st.port} ({', '.join(st.others) or 'in use'})" for st in taken)
        return (f"service {svc.name} on {self.host}: the free ports fsbench chose are in use there ({listed}) "
                f"after {AUTO_PORT_TRIES} tries: free some ports on {self.host}")

    def _prove_ours(self) -> str | None:
        """After the ready probe: every listener on the service's ports is a process fsbench started for it."""
        found = self._port_states()
        if isinstance(found, str):
            return found
        states, _ = found
        for st in states.values():
            if st.state in ("theirs", "hidden"):
                self.foreign = f"port {st.port} is held by {', '.join(st.others)}"
                return (f"service {self.svc.name} on {self.host}: {self.foreign}, not by a process fsbench "
                        "started for this service (its own server did not get the port: taken after fsbench found "
                        "it free?), so its ready probe may have been answered by that one: fsbench neither uses "
                        "nor stops it; free the port, or give the service `port: auto`")
        r = self.tr.run(self.identity.argv("procs"), cwd="/", timeout=60)
        (self.log_dir / "processes.txt").write_text(r.extra.get("stdout", r.stdout_tail))
        return None

    def _stop_argv(self, cmd: str) -> list[str]:
        """A stop command that runs only while no port of the service is held by someone else (never at a
        server fsbench did not start: one that took the port after fsbench's server died or never bound it)."""
        argv = sh(render(cmd, self.values()))
        return self.identity.guarded(self._numbers(), argv) if self._numbers() else argv

    def stop(self) -> None:
        """Run the stop commands (guarded), then stop what they left running; warnings, never raises."""
        if not self.started:
            return
        self.started = False
        stopped = False
        if not self.foreign:
            stopped = True
            for i, cmd in enumerate(self.plan.stop):
                self.emit(Event("service", message=f"stop {self.svc.name} on {self.host}: {cmd}"))
                try:
                    r = self.tr.run(self._stop_argv(cmd), cwd=self.dir, timeout=max(30.0, self.svc.ready_timeout_s),
                                    env=self.env, stdout_path=self.log_dir / f"stop-{i}.out",
                                    stderr_path=self.log_dir / f"stop-{i}.err")
                except FsbenchError as exc:
                    self.emit(Event("warning",
                                    message=f"stopping service {self.svc.name} on {self.host} failed: {exc}"))
                    return
                if not r.ok:
                    stopped = False
                    shown = shlex.join(sh(render(cmd, self.values())))
                    self.emit(Event("warning", message=f"stopping service {self.svc.name} failed {r.describe(shown)}"))
        elif self.plan.stop:
            self.emit(Event("warning", message=f"not running the stop commands of service {self.svc.name} on "
                                               f"{self.host}: {self.foreign}, a server fsbench did not start"))
        if self._stop_leftovers(STOP_WAIT_S if stopped else SETTLE_S):
            self._fetch_logs()
            self.leftovers.done(self._cleanup)

    def _stop_leftovers(self, wait_s: int) -> bool:
        """TERM, then KILL, the service's processes still running after wait_s; False when some could not be."""
        try:
            r = self.tr.run(self.identity.kill(wait_s, KILL_GRACE_S), cwd="/", timeout=wait_s + 2 * KILL_GRACE_S + 30)
        except FsbenchError as exc:
            self.emit(Event("warning", message=f"cannot check that service {self.svc.name} stopped on "
                                               f"{self.host}: {exc}"))
            return False
        out = r.extra.get("stdout", r.stdout_tail)
        (self.log_dir / "stopped.txt").write_text(out)
        lines = [line.split(" ", 2) for line in out.splitlines() if line.count(" ") >= 1]
        termed = [f"pid {p[1]} (`{p[2] if len(p) > 2 else '?'}`)" for p in lines if p[0] == "term"]
        if termed:
            why = "after its stop commands" if wait_s == STOP_WAIT_S else "with its stop commands failed or not run"
            how = "TERM, then KILL" if any(p[0] == "kill" for p in lines) else "TERM"
            self.emit(Event("warning", message=f"service {self.svc.name} on {self.host}: {len(termed)} of its "
                                               f"processes still ran {why}: fsbench stopped them ({how}): "
                                               f"{'; '.join(termed)}"))
        if not r.ok:
            self.emit(Event("warning", message=f"service {self.svc.name} on {self.host}: some of its processes "
                                               f"could not be stopped: {r.describe('TERM, then KILL')}"))
            return False
        return True

    def _fetch_logs(self) -> None:
        """The kind's logs into services/<name>/<host>/, masked; a log that cannot be had is a warning."""
        for remote, local in self.plan.logs.items():
            try:
                self.tr.fetch(render(remote, self.values(), quote=False), self.log_dir / local)
            except FsbenchError as exc:
                self.emit(Event("warning", message=f"could not fetch {remote} of service {self.svc.name}: {exc}"))
        if self.plan.logs and has_secrets():
            redact_tree(self.log_dir)
