"""Services across targets: each started before the first target that needs it, stopped after the last."""

from __future__ import annotations

import posixpath
import tempfile
import threading
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import FsbenchError
from fsbench.core.events import Listener
from fsbench.core.shell import render
from fsbench.run.targets.services import ServiceSession
from fsbench.scenario.model import Scenario


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
        self.generation: dict[str, int] = {}  # service -> how many times it was started (settings.fresh)
        #: service -> the hosts of the targets that use it (where its client files must be)
        self.client_hosts: dict[str, list[str]] = {}
        for t in target_order:
            for s in sc.targets[t].services:
                self.last_user[s] = t
                hosts = self.client_hosts.setdefault(s, [])
                hosts += [h for h in sc.resolve_hosts(sc.targets[t].hosts) if h not in hosts]

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
                g = self.generation[name] = self.generation.get(name, 0) + 1
                logs = self.log_dir / (name if g == 1 else f"{name}.{g}")  # each start's logs kept apart
                for host in self.sc.resolve_hosts(svc.hosts):
                    session = ServiceSession(svc, host, self.transports[host], self.run_id, self.scratch,
                                             logs / host, self.emit, self.sc.hosts[host].reach,
                                             self.leftovers, self.secrets, g)
                    sessions.append(session)
                    try:
                        reason = session.start(cancel)
                    except FsbenchError as exc:
                        reason = f"service {name} could not start on {host}: {exc}"
                    if reason:
                        self.failed[name] = reason
                        self.stop(name)
                        return values, reason
                reason = self._ship_client_files(name, sessions[0])
                if reason:
                    self.failed[name] = reason
                    self.stop(name)
                    return values, reason
            for session in self.sessions[name]:
                values.update(session.exported())
        return values, None

    def dirs(self, names: tuple[str, ...]) -> dict[str, list[tuple[int, str]]]:
        """host -> (its clock tick when the start began, folder) of each named service fsbench started there."""
        out: dict[str, list[tuple[int, str]]] = {}
        for name in names:
            for s in self.sessions.get(name, []):
                if s.managed and s.started:
                    out.setdefault(s.host, []).append((s.identity.since, s.identity.dir))
        return out

    def _ship_client_files(self, name: str, session: ServiceSession) -> str | None:
        """Copy the files the service's clients read from its (first) host to the other hosts of its targets,
        at the same path inside the service's folder; None when done, else why not."""
        plan = session.plan
        files = [render(f, session.values(), quote=False) for f in plan.client_files]
        folders = [render(f, session.values(), quote=False) for f in plan.client_folders]
        outside = [p for p in files + folders if not _inside(p, session.dir)]
        if outside:  # fsbench writes on a host only into folders of its own
            return (f"service {name}: its client files {', '.join(outside)} are outside its folder {session.dir}: "
                    "the service kind must keep them there")
        hosts = [h for h in self.client_hosts.get(name, []) if h != session.host]
        if not files or not hosts:
            return None
        with tempfile.TemporaryDirectory(prefix="fsbench-client-files-") as tmp:
            local = []
            for i, path in enumerate(files):
                copy = Path(tmp) / f"{i}-{posixpath.basename(path)}"
                try:
                    found = session.tr.fetch(path, copy)
                except FsbenchError as exc:
                    found, why = False, str(exc)
                else:
                    why = "it does not exist"
                if not found:
                    return (f"service {name}: cannot read its client file {path} on {session.host} ({why}), "
                            f"which its clients on {', '.join(hosts)} need: see the service's start logs")
                local.append((copy, path))

            def copy_to(host: str) -> str | None:
                tr = self.transports[host]
                try:
                    for folder in dict.fromkeys([*folders, *(posixpath.dirname(p) for _, p in local)]):
                        tr.makedirs(folder)
                    for copy, path in local:
                        tr.put_file(copy, path, mode=0o600)  # a keyring among them must not be readable by all
                except FsbenchError as exc:
                    return (f"service {name}: cannot copy its client files to {host}: {exc}; the targets using "
                            "it run there")
                return None

            # every client host at once (one after the other, each host's folders and files waited in turn); the
            # first failure in the hosts' order
            return next((why for why in each(hosts, copy_to) if why), None)

    def release(self, target: str) -> None:
        """Stop the services whose last target was this one."""
        for name, last in self.last_user.items():
            if last == target:
                self.stop(name)

    def renew(self, name: str) -> None:
        """Stop a service now, to be started anew (a new folder, ports and server) by the next target that needs
        it: settings.fresh: services, between two rounds."""
        self.stop(name)
        self.sessions.pop(name, None)

    def stop(self, name: str) -> None:
        """Stop one service on every host it runs on."""
        for session in self.sessions.get(name, []):
            session.stop()

    def stop_all(self) -> None:
        """Stop everything still running (after failures and Ctrl-C too)."""
        for name in list(self.sessions):
            self.stop(name)


def _inside(path: str, folder: str) -> bool:
    """Whether path lies inside folder (both absolute, normalised: no `..` out of it)."""
    path, folder = posixpath.normpath(path), posixpath.normpath(folder)
    return path.startswith(folder.rstrip("/") + "/")
