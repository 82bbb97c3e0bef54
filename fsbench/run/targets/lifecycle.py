"""A target's session: setup (user commands, then its kind's), a readiness check, teardown always."""

from __future__ import annotations

import dataclasses
import posixpath
import secrets as random_names
import shlex
import threading
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.events import Event, Listener
from fsbench.core.path_safety import resolved_unsafe_reason
from fsbench.core.secrets import redact, redact_file, secret_env
from fsbench.core.shell import render, sh
from fsbench.kinds import KINDS, KindPlan
from fsbench.run.leftovers import NoLeftovers
from fsbench.run.targets.mount_facts import note_mounts
from fsbench.run.targets.ownership import (
    NOT_OURS,
    guarded,
    made_dir_script,
    read_identity,
    scratch_script,
)
from fsbench.run.targets.services import wait_ready
from fsbench.scenario.model import Target
from fsbench.scenario.plan import Case


class TargetSession:
    """Setup once before the target's first case; teardown always, even after failures and Ctrl-C."""

    def __init__(self, target: Target, transports: dict[str, Transport], run_id: str, emit: Listener, *,
                 scratch: str = "/var/tmp/fsbench/run", service_values: dict[str, str] | None = None,
                 log_dir: Path | None = None, leftovers=None, secrets: dict[str, str] | None = None,
                 token: str | None = None):
        self.target, self.transports, self.run_id, self.emit = target, transports, run_id, emit
        self.secrets = dict(secrets or {})
        self.leftovers = leftovers or NoLeftovers()
        self._cleanups: dict[str, str] = {}
        self.run_scratch = scratch
        self.service_values = service_values or {}
        self.log_dir = log_dir
        self.kind = KINDS.get(target.kind)
        #: tools write only below this folder (a directory target); devices and URLs have none. Its name
        #: ends in random hex: nobody can plant an entry there before the run (run ids are guessable)
        name = f"fsbench-{run_id}-{token or random_names.token_hex(6)}"
        self.scratch = posixpath.join(target.path, name) if self.kind.address == "directory" else ""
        self._setup_started = False
        self._begun: set[str] = set()  # hosts where the kind's commands started: undone even if setup failed
        self._mounted: set[str] = set()
        self._tried: set[str] = set()  # hosts where fsbench ran its mount command on a path that held no mount
        self._ours: dict[str, str] = {}  # host -> identity of the mount fsbench made there (findmnt)
        self._made_dir: set[str] = set()  # hosts where fsbench made the mount point (only those are rmdir'ed)
        self._made_scratch: set[str] = set()  # hosts where the scratch folder is fsbench's (made, or shared)
        #: prepare steps already run on this target where they leave no folder (an RBD image's written extent)
        self.prepared: set[str] = set()
        #: (dataset, layout key) -> (listing of the files a prepare step laid out, its case): reused while unchanged
        self.layouts: dict[tuple[str, str], tuple[str, str]] = {}

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

    def _run(self, tr: Transport, argv: list[str], what: str, cancel: threading.Event | None,
             env: dict[str, str] | None = None) -> CommandResult:
        self.emit(Event("target_setup", message=redact(f"{self.target.name}: {what}")))
        return tr.run(argv, timeout=self.target.setup_timeout_s, cancel=cancel,
                      env={**self.env(tr.host), **(env or {})} or None)

    def setup(self, cancel: threading.Event, hosts: list[dict] | None = None) -> str | None:
        """Run setup on every host of the target; None when ready, else the reason it is not.

        hosts: the run's host facts (hosts.csv's rows), given how each host reached the target once it is ready."""
        self._setup_started = True
        try:
            return self._setup(cancel) or note_mounts(self, hosts or [])
        except FsbenchError as exc:  # a host that cannot be reached is a target that is not ready
            return f"target {self.target.name} could not be set up: {exc}"

    def reapply(self, cancel: threading.Event) -> str | None:
        """Run the target's setup commands again (rounds order: another target's ran against a service
        they share since); None when done, else why the target's case cannot run."""
        for host, tr in self.transports.items():
            for cmd in self.target.setup:
                r = self._run(tr, sh(render(cmd, self.values(host))), f"{host}: {cmd}", cancel)
                if not r.ok:
                    return f"target setup failed again {r.describe()}"
        return None

    def cleanup_commands(self, host: str) -> list[list[str]]:
        """What undoes this target's setup on host: unmount (only fsbench's own mount), teardown commands,
        its scratch folder; kept in leftovers.json for the run after a crash."""
        plan = self.plan(host)
        out = [["rm", "-rf", "--", self.scratch]] if self.scratch else []
        if not self.target.existing_mount:
            out += self._unmounts(host, plan.force_unmount, plan) + self._after(host, plan)
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

    def _setup(self, cancel: threading.Event) -> str | None:
        t = self.target
        for host, tr in self.transports.items():
            # recorded before anything is set up: if fsbench dies, the next run undoes it with these
            self._cleanups[host] = self.leftovers.add(host, f"target {t.name}", self.cleanup_commands(host))
            for cmd in t.setup:
                r = self._run(tr, sh(render(cmd, self.values(host))), f"{host}: {cmd}", cancel)
                if not r.ok:
                    return f"target setup failed {r.describe()}"
            plan = self.plan(host)
            first = host == next(iter(self.transports))  # e.g. one volume, formatted once, mounted everywhere
            steps = [(a, False) for a in plan.prepare + (plan.once if first else [])] + [(a, True) for a in plan.mount]
            if t.existing_mount:  # the user's mount: checked, never mounted, unmounted nor removed
                steps = []
                refused = self._check_existing_mount(host, tr)
            else:
                refused = self._mount_point(host, tr) if plan.mount else None
            if refused:
                return refused
            if steps:
                self._begun.add(host)
                self._tried.update([host] if plan.mount else [])
            for argv, mounts in steps:
                r = self._run(tr, argv, f"{host}: {_label(argv)}", cancel, env=plan.env)
                if not r.ok:
                    what = _label(argv, short=True)
                    return (f"{self.kind.name} target: {what} failed {r.describe(_script_name(argv))}"
                            f"{self._log_tail(host, tr)}")
                if mounts:
                    self._mounted.add(host)
            if plan.mount:  # a client that returned before its mount is there (or never mounted) is caught here
                r = wait_ready(tr, ["mountpoint", "-q", t.path], t.ready_timeout_s, cancel)
                if not r.ok:
                    self._mounted.discard(host)  # nothing to unmount: teardown undoes the rest (_begun)
                    return (f"{self.kind.name} reported success but {t.path} on {host} is not a mount point after "
                            f"{t.ready_timeout_s:.0f}s{self._log_tail(host, tr)}")
                self._own_mount(host, tr)
            if t.ready:
                r = wait_ready(tr, sh(render(t.ready, self.values(host))), t.ready_timeout_s, cancel,
                               env=self.env(host) or None)
                if not r.ok:
                    return (f"target {t.name} never became ready on {host} within {t.ready_timeout_s:.0f}s: "
                            f"the check `{t.ready}` {r.describe()}")
            missing = self._address_missing(tr, host)
            if missing:
                return missing
            unsafe = None if t.destructive or self.kind.address == "url" else resolved_unsafe_reason(tr, t.path)
            if unsafe:
                return f"{unsafe}; fsbench will not write there (set `destructive: true` if you mean it)"
            if self.scratch:
                refused = self._make_scratch(host, tr)
                if refused:
                    return refused
        return None

    def remount(self, host: str, between: list[list[str]],
                cancel: threading.Event | None = None) -> tuple[str | None, list[str]]:
        """Unmount fsbench's own mount on host (guarded), run `between` while the client is stopped, mount it
        again and record the new mount as fsbench's: (why it is not mounted again, or None; the steps of
        `between` that failed, in their own words)."""
        tr, plan = self.transports[host], self.plan(host)
        if host not in self._mounted or host not in self._ours or self.target.existing_mount:
            return f"{self.target.name} on {host} holds no mount fsbench made: not remounted", []
        env = {**self.env(host), **plan.env} or None
        for argv in self._unmounts(host, plan.unmount, plan):
            r = tr.run(argv, timeout=60, env=env)
            if not r.ok:
                return f"unmounting {self.target.path} on {host} failed {r.describe(_script_name(argv))}", []
        self._mounted.discard(host)
        failed = [r.stderr_tail.strip() or r.describe() for r in (tr.run(a, timeout=300) for a in between) if not r.ok]
        for argv in plan.mount:
            r = self._run(tr, argv, f"{host}: {_label(argv)}", cancel, env=plan.env)
            if not r.ok:
                return f"{_label(argv, short=True)} on {host} failed {r.describe(_script_name(argv))}", failed
        self._mounted.add(host)
        r = wait_ready(tr, ["mountpoint", "-q", self.target.path], self.target.ready_timeout_s, cancel)
        if not r.ok:
            return (f"{self.target.path} on {host} is not a mount point again after "
                    f"{self.target.ready_timeout_s:.0f}s", failed)
        self._own_mount(host, tr)
        return None, failed

    def _check_existing_mount(self, host: str, tr: Transport) -> str | None:
        """Why the user's mount (`existing_mount: true`) cannot be used on host, or None."""
        t = self.target
        if self.kind.address != "directory":
            return (f"target {t.name}: `existing_mount: true` is for a mounted folder; a {self.kind.name} "
                    f"target's path is a {self.kind.address}: remove existing_mount")
        ours, unknown = read_identity(tr, t.path)
        if unknown:
            return f"target {t.name}: {unknown}"
        if not ours:
            return (f"target {t.name}: `existing_mount: true` but {t.path} on {host} is not a mount point: mount "
                    "it first (fsbench does not, for such a target), or remove existing_mount to let fsbench mount it")
        return None

    def _mount_point(self, host: str, tr: Transport) -> str | None:
        """Refuse a path that is a mount point already; make the mount point if missing (remembered)."""
        t = self.target
        there, unknown = read_identity(tr, t.path)
        if unknown:
            return f"target {t.name}: {unknown}"
        if there:
            return (f"target {t.name}: {t.path} on {host} is already a mount point ({there}); fsbench mounts "
                    f"{self.kind.name} there itself and unmounts only what it mounted, so it will not mount over "
                    "it: point the target at an empty folder, or set `existing_mount: true` on the target to "
                    "benchmark that mount as it is (fsbench then never mounts, unmounts or removes it)")
        r = tr.run(made_dir_script(t.path), timeout=30)
        if r.ok and r.extra.get("stdout", "").strip() == "made":
            self._made_dir.add(host)
            self._record(host)
        return None  # a path that could not be made: the kind's own steps say why

    def _own_mount(self, host: str, tr: Transport) -> None:
        """Record the mount that appeared after fsbench's mount command as fsbench's (kept in leftovers)."""
        ours, _ = read_identity(tr, self.target.path)
        if ours:
            self._ours[host] = ours
            self._record(host)

    def _make_scratch(self, host: str, tr: Transport) -> str | None:
        """Make the scratch folder with a plain mkdir (no link followed, nothing existing taken), or say why not."""
        r = tr.run(scratch_script(self.scratch, shared=bool(self._made_scratch)), timeout=30)
        if r.ok:
            self._made_scratch.add(host)
            return None
        return (f"target {self.target.name}: cannot make fsbench's scratch folder on {host} "
                f"{r.describe(_script_name(r.argv))}; fsbench writes only into a folder it has just made, and "
                "never through an entry someone else put there: remove that entry if it is stale, and check who "
                "made it")

    def _fetch_logs(self, host: str, tr: Transport, plan: KindPlan) -> list[Path]:
        """Copy the client's logs into targets/<target>/ (masked); the copies that exist."""
        if self.log_dir is None:
            return []
        self.log_dir.mkdir(parents=True, exist_ok=True)
        copies = []
        for remote, local in plan.logs.items():
            target = self.log_dir / local.format(host=host)
            try:
                tr.fetch(remote, target)
            except FsbenchError:
                continue
            if target.exists():
                redact_file(target)
                copies.append(target)
        return copies

    def _log_tail(self, host: str, tr: Transport, lines: int = 5) -> str:
        """The last lines of the client's log, for the message of a failed mount (fetched right away)."""
        for copy in self._fetch_logs(host, tr, self.plan(host)):
            tail = [line for line in copy.read_text(errors="replace").splitlines() if line.strip()][-lines:]
            if tail:
                name = copy.relative_to(self.log_dir.parent.parent) if self.log_dir else copy.name
                return f"; the end of its log ({name}):\n  " + "\n  ".join(tail)
        return ""

    def _address_missing(self, tr: Transport, host: str) -> str | None:
        """Why the target's path is not what its kind needs after setup (a folder, a device), or None."""
        path = self.target.path
        if self.kind.address == "directory" and not tr.is_dir(path):
            return (f"target path {path} is not an existing directory on {host} "
                    "(create or mount it, or add a setup command that does)")
        if self.kind.address == "device" and not tr.run(["test", "-e", path], timeout=30).ok:
            return f"target device {path} does not exist on {host}"
        return None

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
        for host in hosts:
            tr = self.transports.get(host)
            if tr is None:
                continue
            try:
                tr.remove_tree(self.data_dir(dataset))
            except FsbenchError as exc:
                self.emit(Event("warning", message=f"could not remove dataset {dataset} on {host}: {exc}"))

    def teardown(self) -> None:
        """Remove the scratch folder, unmount what fsbench mounted, run teardown commands; never raise."""
        if not self._setup_started:
            return
        for host, tr in self.transports.items():
            try:
                self._teardown_host(host, tr)
                self.leftovers.done(self._cleanups.pop(host, ""))
            except FsbenchError as exc:  # one lost host must not stop the others' teardown
                self.emit(Event("warning", message=f"teardown of {self.target.name} on {host} failed: {exc}"))

    def _teardown_host(self, host: str, tr: Transport) -> None:
        if host in self._made_scratch:  # never a folder fsbench did not make (a planted link, a user's folder)
            tr.remove_tree(self.scratch)
        if host in self._tried and host not in self._ours:
            # a client that mounted after fsbench stopped waiting: the path held no mount before its command
            self._own_mount(host, tr)
        if host in self._mounted:
            self._unmount(host, tr, self.plan(host))
        elif host in self._begun:  # setup stopped half-way, or the kind mounts nothing (a URL): undo what it did
            plan = self.plan(host)
            for argv in self._unmounts(host, plan.force_unmount if plan.mount else [], plan) + self._after(host, plan):
                r = tr.run(argv, timeout=self.target.setup_timeout_s, env={**self.env(host), **plan.env} or None)
                if r.exit_status == NOT_OURS and plan.mount:
                    self.emit(Event("warning", message=f"{self.target.name} on {host}: {r.describe()}"))
                if not r.ok and not plan.mount:
                    self.emit(Event("warning", message=f"teardown of {self.target.name} on {host}: "
                                                       f"{_label(argv, short=True)} failed "
                                                       f"{r.describe(_script_name(argv))}"))
            self._fetch_logs(host, tr, plan)
        for cmd in self.target.teardown:
            self.emit(Event("target_teardown", message=f"{self.target.name} on {host}: {cmd}"))
            r = tr.run(sh(render(cmd, self.values(host))), timeout=self.target.setup_timeout_s,
                       env=self.env(host) or None)
            if not r.ok:
                self.emit(Event("warning", message=f"teardown of {self.target.name} failed {r.describe()}"))

    def _unmount(self, host: str, tr: Transport, plan: KindPlan) -> None:
        self.emit(Event("target_teardown", message=f"{self.target.name} on {host}: unmount ({self.kind.name})"))
        results = [tr.run(argv, timeout=60, env=plan.env or None) for argv in self._unmounts(host, plan.unmount, plan)]
        if not all(r.ok for r in results) and not any(r.exit_status == NOT_OURS for r in results):
            results = [tr.run(argv, timeout=60, env=plan.env or None)
                       for argv in self._unmounts(host, plan.force_unmount, plan)]
        foreign = [r for r in results if r.exit_status == NOT_OURS]
        if foreign:
            self.emit(Event("warning", message=f"{self.target.name} on {host}: {foreign[0].describe()}"))
        elif not all(r.ok for r in results):
            self.emit(Event("warning", message=f"could not unmount {self.target.path} on {host}"))
        else:
            self._mounted.discard(host)
            for argv in self._after(host, plan):
                tr.run(argv, timeout=max(30.0, self.target.setup_timeout_s), env=plan.env or None)
        self._fetch_logs(host, tr, plan)


def _script_name(argv: list[str]) -> str | None:
    """A kind's shell script named by its purpose in messages (its text is in the kind's module), else None."""
    return f"sh: {_label(argv)}" if argv[:3] == ["/bin/sh", "-e", "-c"] and argv[3].startswith("# ") else None


def _label(argv: list[str], short: bool = False) -> str:
    """A step for messages: a shell script by its first line when that is a comment, else the command."""
    if argv[:3] == ["/bin/sh", "-e", "-c"] and argv[3].startswith("# "):
        return argv[3].split("\n", 1)[0][2:]
    if short:
        return " ".join([Path(argv[0]).name, *argv[1:2]])
    return shlex.join([Path(argv[0]).name, *argv[1:]])
