"""Services across targets: each started before the first target that needs it, stopped after the last."""

from __future__ import annotations

import threading
from pathlib import Path

from fsbench.errors import FsbenchError
from fsbench.events import Listener
from fsbench.scenario.model import Scenario
from fsbench.targets.services import ServiceSession
from fsbench.transport.base import Transport


class ServiceManager:
    """Starts services on demand and stops them when no later target needs them, or at the end."""

    def __init__(self, sc: Scenario, transports: dict[str, Transport], run_id: str, scratch: str, log_dir: Path,
                 emit: Listener, target_order: list[str], leftovers=None, secrets: dict[str, str] | None = None):
        self.sc, self.transports, self.emit = sc, transports, emit
        self.leftovers, self.secrets = leftovers, secrets
        self.run_id, self.scratch, self.log_dir = run_id, scratch, log_dir
        self.sessions: dict[str, list[ServiceSession]] = {}
        self.failed: dict[str, str] = {}
        self.last_user: dict[str, str] = {}
        for t in target_order:
            for s in sc.targets[t].services:
                self.last_user[s] = t

    def ensure(self, names: tuple[str, ...], cancel: threading.Event) -> tuple[dict[str, str], str | None]:
        """Placeholder values of the named services, started if needed; or the reason one is not ready."""
        values: dict[str, str] = {}
        for name in names:
            if name in self.failed:
                return values, self.failed[name]
            if name not in self.sessions:
                svc = self.sc.services[name]
                sessions: list[ServiceSession] = []
                self.sessions[name] = sessions
                for host in self.sc.resolve_hosts(svc.hosts):
                    session = ServiceSession(svc, host, self.transports[host], self.run_id, self.scratch,
                                             self.log_dir / name / host, self.emit, self.sc.hosts[host].reach,
                                             self.leftovers, self.secrets)
                    sessions.append(session)
                    try:
                        reason = session.start(cancel)
                    except FsbenchError as exc:
                        reason = f"service {name} could not start on {host}: {exc}"
                    if reason:
                        self.failed[name] = reason
                        self.stop(name)
                        return values, reason
            for session in self.sessions[name]:
                values.update(session.exported())
        return values, None

    def release(self, target: str) -> None:
        """Stop the services whose last target was this one."""
        for name, last in self.last_user.items():
            if last == target:
                self.stop(name)

    def stop(self, name: str) -> None:
        """Stop one service on every host it runs on."""
        for session in self.sessions.get(name, []):
            session.stop()

    def stop_all(self) -> None:
        """Stop everything still running (after failures and Ctrl-C too)."""
        for name in list(self.sessions):
            self.stop(name)
