"""A target's session: setup (user commands, then its kind's), a readiness check, teardown always."""

from __future__ import annotations

import threading

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import FsbenchError
from fsbench.core.path_safety import resolved_unsafe_reason
from fsbench.core.shell import render, sh
from fsbench.run.targets.mount_facts import note_mounts
from fsbench.run.targets.ownership import (
    made_dir_script,
    read_identity,
    scratch_script,
)
from fsbench.run.targets.services import wait_ready
from fsbench.run.targets.steps import address_missing, label, log_tail, script_name
from fsbench.run.targets.undo import TargetUndo


class TargetSession(TargetUndo):
    """Setup once before the target's first case; teardown always, even after failures and Ctrl-C."""

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

    def _setup(self, cancel: threading.Event) -> str | None:
        """The first host alone (what is done once: e.g. one volume, formatted once, mounted everywhere), then
        every other host at once: 32 clients' mounts take about one client's time, not 32 of them. The first
        refusal in the hosts' order is the target's."""
        hosts = list(self.transports)
        if not hosts:
            return None
        refused = self._setup_host(hosts[0], True, cancel)
        if refused:
            return refused
        return next((r for r in each(hosts[1:], lambda h: self._setup_host(h, False, cancel)) if r), None)

    def _setup_host(self, host: str, first: bool, cancel: threading.Event) -> str | None:
        tr = self.transports[host]
        # recorded before anything is set up: if fsbench dies, the next run undoes it with these
        self._cleanups[host] = self.leftovers.add(host, f"target {self.target.name}", self.cleanup_commands(host))
        return (self._user_setup(host, tr, cancel) or self._mount(host, tr, first, cancel)
                or self._ready(host, tr, cancel) or self._usable(host, tr))

    def _user_setup(self, host: str, tr: Transport, cancel: threading.Event) -> str | None:
        """The scenario's setup commands on host; why one failed, or None."""
        for cmd in self.target.setup:
            r = self._run(tr, sh(render(cmd, self.values(host))), f"{host}: {cmd}", cancel)
            if not r.ok:
                return f"target setup failed {r.describe()}"
        return None

    def _mount(self, host: str, tr: Transport, first: bool, cancel: threading.Event) -> str | None:
        """The kind's prepare (once: on the first host only) and mount steps on host, until the path is a mount
        point; the user's own mount (`existing_mount`) only checked. Why not, or None."""
        t, plan = self.target, self.plan(host)
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
            env = {**plan.env, **self.client_tag(host)} if mounts else plan.env  # the client: known by its tag
            r = self._run(tr, argv, f"{host}: {label(argv)}", cancel, env=env)
            if not r.ok:
                what = label(argv, short=True)
                return (f"{self.kind.name} target: {what} failed {r.describe(script_name(argv))}"
                        f"{log_tail(self.log_dir, host, tr, self.plan(host))}")
            if mounts:
                self._mounted.add(host)
            elif first and plan.once and argv is plan.once[-1]:
                self._formatted = True
        if plan.mount:  # a client that returned before its mount is there (or never mounted) is caught here
            r = wait_ready(tr, ["mountpoint", "-q", t.path], t.ready_timeout_s, cancel)
            if not r.ok:
                self._mounted.discard(host)  # nothing to unmount: teardown undoes the rest (_begun)
                return (f"{self.kind.name} reported success but {t.path} on {host} is not a mount point after "
                        f"{t.ready_timeout_s:.0f}s{log_tail(self.log_dir, host, tr, self.plan(host))}")
            self._own_mount(host, tr)
        return None

    def _ready(self, host: str, tr: Transport, cancel: threading.Event) -> str | None:
        """The target's own ready check, until it passes or its time is up; why not, or None."""
        t = self.target
        if not t.ready:
            return None
        r = wait_ready(tr, sh(render(t.ready, self.values(host))), t.ready_timeout_s, cancel,
                       env=self.env(host) or None)
        if not r.ok:
            return (f"target {t.name} never became ready on {host} within {t.ready_timeout_s:.0f}s: "
                    f"the check `{t.ready}` {r.describe()}")
        return None

    def _usable(self, host: str, tr: Transport) -> str | None:
        """The path is what the kind addresses, leads nowhere fsbench must not write, and has fsbench's own
        scratch folder in it; why not, or None."""
        t = self.target
        missing = address_missing(self.kind.address, t.path, tr, host)
        if missing:
            return missing
        unsafe = None if t.destructive or self.kind.address == "url" else resolved_unsafe_reason(tr, t.path)
        if unsafe:
            return f"{unsafe}; fsbench will not write there (set `destructive: true` if you mean it)"
        return self._make_scratch(host, tr) if self.scratch else None

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

    def _make_scratch(self, host: str, tr: Transport) -> str | None:
        """Make the scratch folder with a plain mkdir (no link followed, nothing existing taken), or say why not."""
        r = tr.run(scratch_script(self.scratch, shared=bool(self._made_scratch)), timeout=30)
        if r.ok:
            self._made_scratch.add(host)
            return None
        return (f"target {self.target.name}: cannot make fsbench's scratch folder on {host} "
                f"{r.describe(script_name(r.argv))}; fsbench writes only into a folder it has just made, and "
                "never through an entry someone else put there: remove that entry if it is stale, and check who "
                "made it")
