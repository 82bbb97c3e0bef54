"""What a target's session knows and owns on its hosts; setup (lifecycle) and teardown (undo) build on it."""

from __future__ import annotations

import dataclasses
import posixpath
import secrets as random_names
import threading
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.events import Event, Listener
from fsbench.core.secrets import redact, secret_env
from fsbench.core.shell import render, sh
from fsbench.kinds import KINDS, KindPlan
from fsbench.run.leftovers import NoLeftovers
from fsbench.run.run_processes import TARGET_MARKER, client_stop_argv
from fsbench.run.targets.ownership import (
    guarded,
    read_identity,
)
from fsbench.scenario.model import Target
from fsbench.scenario.plan import Case


class TargetState:
    """What a target's session knows: its placeholders, its kind's plan per host, and what fsbench made on each
    host (the mount, the mount point, the scratch folder), which decides what teardown may undo."""

    def __init__(self, target: Target, transports: dict[str, Transport], run_id: str, emit: Listener, *,
                 scratch: str = "/var/tmp/fsbench/run", service_values: dict[str, str] | None = None,
                 service_dirs: dict[str, list[tuple[int, str]]] | None = None,
                 log_dir: Path | None = None, leftovers=None, secrets: dict[str, str] | None = None,
                 token: str | None = None):
        self.target, self.transports, self.run_id, self.emit = target, transports, run_id, emit
        self.secrets = dict(secrets or {})
        self.leftovers = leftovers or NoLeftovers()
        self._cleanups: dict[str, str] = {}
        self.run_scratch = scratch
        self.service_values = service_values or {}
        #: host -> (its clock tick when the start began, folder) of each of the target's services fsbench started
        #: there (fsbench.run.targets.manager.ServiceManager.dirs): the monitor knows their processes by it
        self.service_dirs = service_dirs or {}
        self.log_dir = log_dir
        self.kind = KINDS.get(target.kind)
        #: tools write only below this folder (a directory target); devices and URLs have none. Its name
        #: ends in random hex: nobody can plant an entry there before the run (run ids are guessable)
        name = f"fsbench-{run_id}-{token or random_names.token_hex(6)}"
        self.scratch = posixpath.join(target.path, name) if self.kind.address == "directory" else ""
        self._setup_started = False
        #: a fault of the system under test seen during a case (fsbench.run.target_watch): the target's later
        #: cases are not run, and its teardown forces the unmount and stops the client at once
        self.fault: str | None = None
        self._begun: set[str] = set()  # hosts where the kind's commands started: undone even if setup failed
        self._formatted = False  # the kind's `once` steps all ran: what they made is this session's
        self._mounted: set[str] = set()
        self._tried: set[str] = set()  # hosts where fsbench ran its mount command on a path that held no mount
        self._ours: dict[str, str] = {}  # host -> identity of the mount fsbench made there (findmnt)
        self._made_dir: set[str] = set()  # hosts where fsbench made the mount point (only those are rmdir'ed)
        self._made_scratch: set[str] = set()  # hosts where the scratch folder is fsbench's (made, or shared)
        #: prepare steps already run on this target where they leave no folder (an RBD image's written extent)
        self.prepared: set[str] = set()
        #: (dataset, layout key) -> (listing of the files a prepare step laid out, its case): reused while unchanged
        self.layouts: dict[tuple[str, str], tuple[str, str]] = {}
        #: datasets whose first layout in this session was made to hold what their later cases read too
        self.covered: set[str] = set()

    def values(self, host: str) -> dict[str, str]:
        """Placeholders available to the target's commands."""
        return {"target.path": self.target.path, "target.name": self.target.name, "run.id": self.run_id,
                "run.scratch": self.run_scratch, "host.name": host, **self.service_values,
                **{f"secrets.{k}": v for k, v in self.secrets.items()}}

    def plan(self, host: str) -> KindPlan:
        """The kind's commands for host."""
        return self.kind.plan(self.target, self.values(host), self.run_scratch)

    def store(self, host: str) -> object:
        """The object store behind the target as host reaches it (None when it has none)."""
        return self.plan(host).store

    def env(self, host: str) -> dict[str, str]:
        """The environment of the target's commands on host: every secret its placeholders may refer to."""
        return secret_env(self.values(host))

    def tool_settings(self, host: str) -> object:
        """The kind's settings with run-time placeholders filled, for tools that address the target
        through them (fio's rbd engine: pool, image, conf; a URL target's file system and client
        configuration)."""
        settings = self.target.settings
        if settings is None or not dataclasses.is_dataclass(settings) or isinstance(settings, type):
            return settings
        names = {f.name for f in dataclasses.fields(settings)}
        filled = {k: render(v, self.values(host), quote=False) for k, v in self.kind.texts(settings)
                  if k in names and isinstance(v, str)}
        return dataclasses.replace(settings, **filled)

    def via(self, host: str) -> str:
        """How host reaches the target, as its kind says after setup (one line), or ""."""
        argv = self.plan(host).via
        tr = self.transports.get(host)
        if not argv or tr is None:
            return ""
        try:
            r = tr.run(argv, timeout=30)
        except FsbenchError:
            return ""
        return " ".join(r.extra.get("stdout", "").split()) if r.ok else ""

    def client_tag(self, host: str) -> dict[str, str]:
        """The environment variable a mount command on host gets, so its client is found by it (never by name).
        The host is in it: hosts that share a PID namespace (a lab on one machine) see each other's clients."""
        return {TARGET_MARKER: self.client_name(host)}

    def client_name(self, host: str) -> str:
        """The value of TARGET_MARKER in the environment of this target's client on host."""
        return f"{self.target.name}@{host}"

    def mounted(self, hosts: list[str]) -> list[str]:
        """Those of hosts where the target is a mount: fsbench's own, or the user's (`existing_mount`)."""
        return [h for h in hosts if h in self._mounted or (self.target.existing_mount and h in self.transports)]

    def _run(self, tr: Transport, argv: list[str], what: str, cancel: threading.Event | None,
             env: dict[str, str] | None = None) -> CommandResult:
        self.emit(Event("target_setup", message=redact(f"{self.target.name}: {what}")))
        return tr.run(argv, timeout=self.target.setup_timeout_s, cancel=cancel,
                      env={**self.env(tr.host), **(env or {})} or None)

    def cleanup_commands(self, host: str) -> list[list[str]]:
        """What undoes this target's setup on host: unmount (only fsbench's own mount), teardown commands,
        its scratch folder; kept in leftovers.json for the run after a crash."""
        plan = self.plan(host)
        out = [["rm", "-rf", "--", self.scratch]] if self.scratch else []
        if not self.target.existing_mount:
            # the client of a forced (lazy) unmount goes on running: stopped too (TERM, then KILL)
            stop = [client_stop_argv(self.run_id, self.client_name(host))] if plan.mount else []
            out += self._unmounts(host, plan.force_unmount, plan) + stop + self._after(host, plan)
        return out + [sh(render(cmd, self.values(host))) for cmd in self.target.teardown]

    def _unmounts(self, host: str, argvs: list[list[str]], plan: KindPlan) -> list[list[str]]:
        """Unmount commands that act only while the path holds fsbench's mount (or none)."""
        if not plan.mount:
            return argvs
        return [guarded(argv, self.target.path, self._ours.get(host, "")) for argv in argvs]

    def _after(self, host: str, plan: KindPlan) -> list[list[str]]:
        """The kind's steps after unmounting, without removing a mount point fsbench did not make."""
        keep = host in self._made_dir or not plan.mount
        return [argv for argv in plan.after if keep or argv != ["rmdir", self.target.path]]

    def _record(self, host: str) -> None:
        """Keep the host's clean-up in leftovers.json up to date with what fsbench now knows it owns."""
        old = self._cleanups.get(host, "")
        self._cleanups[host] = self.leftovers.add(host, f"target {self.target.name}", self.cleanup_commands(host))
        self.leftovers.done(old)

    def _own_mount(self, host: str, tr: Transport) -> None:
        """Record the mount that appeared after fsbench's mount command as fsbench's (kept in leftovers)."""
        ours, _ = read_identity(tr, self.target.path)
        if ours:
            self._ours[host] = ours
            self._record(host)

    def test_dir(self, case: Case) -> str:
        """Where a case's tool works: its dataset's folder or a folder of its own in the scratch folder; the
        target's path itself for a device or a URL."""
        if self.kind.address != "directory":
            return self.target.path
        return self.data_dir(case.dataset) if case.dataset else self.case_dir(case.case_id)

    def case_dir(self, case_id: str) -> str:
        """A unique folder for one case's test files, inside the run's scratch folder."""
        return posixpath.join(self.scratch, case_id)

    def data_dir(self, dataset: str) -> str:
        """The folder a dataset's files live in, shared by the target's cases and removed at teardown."""
        return posixpath.join(self.scratch, "data", dataset)

    def remove_data(self, dataset: str, hosts: tuple[str, ...]) -> None:
        """Remove a dataset's folder once its last case ran (teardown would, later); never raise."""
        def remove(host: str) -> None:
            try:
                self.transports[host].remove_tree(self.data_dir(dataset))
            except FsbenchError as exc:
                self.emit(Event("warning", message=f"could not remove dataset {dataset} on {host}: {exc}"))

        each([h for h in hosts if h in self.transports], remove)  # every host at once
