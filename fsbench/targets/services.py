"""Services a scenario owns (start, readiness probe, stop) or merely expects (probe only)."""

from __future__ import annotations

import posixpath
import random
import socket
import string
import threading
import time
from pathlib import Path

from fsbench.errors import CommandResult, FsbenchError
from fsbench.events import Event, Listener
from fsbench.leftovers import NoLeftovers
from fsbench.scenario.model import Service
from fsbench.secrets import SECRET_WORDS, has_secrets, redact, redact_tree, remember, secret_env
from fsbench.services import SERVICE_KINDS
from fsbench.shell import render, sh
from fsbench.transport.base import Transport

PROBE_EVERY_S = 0.5
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
                 secrets: dict[str, str] | None = None):
        self.svc, self.host, self.tr, self.emit = svc, host, transport, emit
        self.secrets = dict(secrets or {})
        self.leftovers = leftovers or NoLeftovers()
        self._cleanup = ""
        self.address = address  # how clients reach it: 127.0.0.1 here, the meta node's address on a cluster
        self.run_id, self.scratch, self.log_dir = run_id, scratch, log_dir
        self.dir = posixpath.join(scratch, "services", svc.name)
        self.port: int | str = ""
        self.ports: dict[str, int] = {}
        self.started = False
        self.plan = SERVICE_KINDS.get(svc.kind).plan(svc)
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
        port = svc.port if svc.port is not None else self.plan.default_port
        self.port = free_port() if port == "auto" else (port or "")
        self.ports = {name: free_port() for name in dict.fromkeys((*self.plan.ports, *svc.ports))}
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if svc.managed:
            self.tr.makedirs(self.dir)
            for name, body in self.plan.files.items():
                self.tr.put_text(posixpath.join(self.dir, name), render(body, self.values(), quote=False))
                (self.log_dir / name).write_text(redact(render(body, self.values(), quote=False)))
            # recorded before starting: if fsbench dies, the next run stops it with these commands
            self._cleanup = self.leftovers.add(self.host, f"service {svc.name}",
                                               [sh(render(c, self.values())) for c in self.plan.stop])
            self.started = True
            for i, cmd in enumerate(self.plan.start):
                self.emit(Event("service", message=f"start {svc.name} on {self.host}: {cmd}"))
                r = self.tr.run(sh(render(cmd, self.values())), cwd=self.dir, timeout=svc.ready_timeout_s,
                                stdout_path=self.log_dir / f"start-{i}.out",
                                stderr_path=self.log_dir / f"start-{i}.err",
                                cancel=cancel, env=self.env)
                if not r.ok:
                    return f"service {svc.name} did not start on {self.host}: {r.describe()}"
        if has_secrets():
            redact_tree(self.log_dir)
        probe = sh(render(self.plan.ready or "true", self.values()))
        r = wait_ready(self.tr, probe, svc.ready_timeout_s, cancel, env=self.env)
        if not r.ok:
            return (f"service {svc.name} on {self.host} never became ready within {svc.ready_timeout_s:.0f}s: "
                    f"the probe `{self.plan.ready}` {r.describe()}")
        self.emit(Event("service", message=f"{svc.name} ready on {self.host}"
                                           f"{' port ' + str(self.port) if self.port else ''}"))
        return None

    def stop(self) -> None:
        """Run the stop commands (managed services only); failures are warnings, never exceptions."""
        if not self.started:
            return
        self.started = False
        for i, cmd in enumerate(self.plan.stop):
            self.emit(Event("service", message=f"stop {self.svc.name} on {self.host}: {cmd}"))
            try:
                r = self.tr.run(sh(render(cmd, self.values())), cwd=self.dir,
                                timeout=max(30.0, self.svc.ready_timeout_s), env=self.env,
                                stdout_path=self.log_dir / f"stop-{i}.out", stderr_path=self.log_dir / f"stop-{i}.err")
            except FsbenchError as exc:
                self.emit(Event("warning", message=f"stopping service {self.svc.name} on {self.host} failed: {exc}"))
                return
            if not r.ok:
                self.emit(Event("warning", message=f"stopping service {self.svc.name} failed {r.describe()}"))
        self._fetch_logs()
        self.leftovers.done(self._cleanup)

    def _fetch_logs(self) -> None:
        """The kind's logs into services/<name>/<host>/, masked; a log that cannot be had is a warning."""
        for remote, local in self.plan.logs.items():
            try:
                self.tr.fetch(render(remote, self.values(), quote=False), self.log_dir / local)
            except FsbenchError as exc:
                self.emit(Event("warning", message=f"could not fetch {remote} of service {self.svc.name}: {exc}"))
        if self.plan.logs and has_secrets():
            redact_tree(self.log_dir)
