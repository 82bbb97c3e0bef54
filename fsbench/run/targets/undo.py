"""Undoing a target's setup: its teardown (always, host by host), and the remount around a client-cache drop."""

from __future__ import annotations

import threading

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import FsbenchError
from fsbench.core.events import Event
from fsbench.core.shell import render, sh
from fsbench.kinds import KindPlan
from fsbench.run.run_processes import client_stop_argv
from fsbench.run.targets.ownership import NOT_OURS, read_identity
from fsbench.run.targets.services import wait_ready
from fsbench.run.targets.session_state import TargetState
from fsbench.run.targets.steps import fetch_logs, label, script_name

#: seconds a forced unmount may take after a fault (the servers it would wait for are gone)
FAULT_UNMOUNT_S = 20.0


class TargetUndo(TargetState):
    """Teardown of what the session made (never more), and a guarded remount of fsbench's own mount."""

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
                return f"unmounting {self.target.path} on {host} failed {r.describe(script_name(argv))}", []
        self._mounted.discard(host)
        failed = [r.stderr_tail.strip() or r.describe() for r in (tr.run(a, timeout=300) for a in between) if not r.ok]
        for argv in plan.mount:
            r = self._run(tr, argv, f"{host}: {label(argv)}", cancel, env={**plan.env, **self.client_tag(host)})
            if not r.ok:
                return f"{label(argv, short=True)} on {host} failed {r.describe(script_name(argv))}", failed
        self._mounted.add(host)
        r = wait_ready(tr, ["mountpoint", "-q", self.target.path], self.target.ready_timeout_s, cancel)
        if not r.ok:
            return (f"{self.target.path} on {host} is not a mount point again after "
                    f"{self.target.ready_timeout_s:.0f}s", failed)
        self._own_mount(host, tr)
        return None, failed

    def teardown(self, unformat: bool = False) -> None:
        """Remove the scratch folder, unmount what fsbench mounted, run teardown commands; never raise.
        `unformat`: the target is set up again later in the run (fresh rounds): what its setup formatted is
        undone too, once every host has let go of it."""
        if not self._setup_started:
            return

        def undo(host: str) -> str | FsbenchError:
            try:
                return self._teardown_host(host, self.transports[host])
            except FsbenchError as exc:  # one lost host must not stop the others' teardown
                return exc

        hosts = list(self.transports)  # every host at once: each waits on its own unmount and client's end
        for host, left in zip(hosts, each(hosts, undo), strict=True):
            if isinstance(left, FsbenchError):
                self.emit(Event("warning", message=f"teardown of {self.target.name} on {host} failed: {left}"))
                continue
            if left:  # kept in leftovers.json: the run stays indexed, and the next run stops and unmounts it
                self.emit(Event("warning", message=f"{self.target.name} on {host}: {left}; left for the next "
                                                   "fsbench run, which stops it before anything else"))
                continue
            self.leftovers.done(self._cleanups.pop(host, ""))
        if unformat and self._formatted and hosts:
            self._unformat(hosts[0])

    def _unformat(self, host: str) -> None:
        """The kind's unformat steps on the host that formatted, each in turn; a failure is said (the next setup
        then refuses the volume that is still there, saying so)."""
        tr, plan = self.transports[host], self.plan(host)
        held = sorted(h for h in self.transports if h in self._mounted)
        if held or self.fault:  # a client still on it, or the system under test failed: left as it is
            why = f"{', '.join(held)} still hold{'s' if len(held) == 1 else ''} its mount" if held else self.fault
            self.emit(Event("warning", message=f"{self.target.name}: what its setup formatted stays ({why}); its "
                                               "next setup refuses it"))
            return
        for argv in plan.unformat:
            self.emit(Event("target_teardown", message=f"{self.target.name} on {host}: {label(argv, short=True)}"))
            r = tr.run(argv, timeout=self.target.setup_timeout_s, env={**self.env(host), **plan.env} or None)
            if not r.ok:
                self.emit(Event("warning", message=f"teardown of {self.target.name} on {host}: "
                                                   f"{label(argv, short=True)} failed {r.describe(script_name(argv))}"))
                return
        self._formatted = False

    def _teardown_host(self, host: str, tr: Transport) -> str:
        """Undo the target on host; what is still there ("" when nothing: its clean-up can be crossed off)."""
        left = ""
        if host in self._made_scratch and self.fault and host in self._mounted:
            # on the faulted mount the removal would wait for ever; nor can a later run reach it unmounted
            self.emit(Event("warning", message=f"{self.target.name} on {host}: its scratch folder {self.scratch} "
                                               "stays on the volume, which failed during a case (its reason says "
                                               "how): if the volume outlives this run, mount it and remove that "
                                               "folder"))
        elif host in self._made_scratch:  # never a folder fsbench did not make (a planted link, a user's folder)
            tr.remove_tree(self.scratch)
        if host in self._tried and host not in self._ours:
            # a client that mounted after fsbench stopped waiting: the path held no mount before its command
            self._own_mount(host, tr)
        if host in self._mounted:
            left = self._unmount(host, tr, self.plan(host))
        elif host in self._begun:  # setup stopped half-way, or the kind mounts nothing (a URL): undo what it did
            plan = self.plan(host)
            for argv in self._unmounts(host, plan.force_unmount if plan.mount else [], plan) + self._after(host, plan):
                r = tr.run(argv, timeout=self.target.setup_timeout_s, env={**self.env(host), **plan.env} or None)
                if r.exit_status == NOT_OURS and plan.mount:
                    self.emit(Event("warning", message=f"{self.target.name} on {host}: {r.describe()}"))
                if not r.ok and not plan.mount:
                    self.emit(Event("warning", message=f"teardown of {self.target.name} on {host}: "
                                                       f"{label(argv, short=True)} failed "
                                                       f"{r.describe(script_name(argv))}"))
            fetch_logs(self.log_dir, host, tr, plan)
        for cmd in self.target.teardown:
            self.emit(Event("target_teardown", message=f"{self.target.name} on {host}: {cmd}"))
            r = tr.run(sh(render(cmd, self.values(host))), timeout=self.target.setup_timeout_s,
                       env=self.env(host) or None)
            if not r.ok:
                self.emit(Event("warning", message=f"teardown of {self.target.name} failed {r.describe()}"))
        return left

    def _unmount(self, host: str, tr: Transport, plan: KindPlan) -> str:
        """Unmount fsbench's mount on host, then stop its client if it outlived that; what is left, or ""."""
        self.emit(Event("target_teardown", message=f"{self.target.name} on {host}: unmount ({self.kind.name})"))
        # after a fault the polite unmount would wait on the dead servers (a minute each): forced at once, the
        # kernel's connection aborted first so that nothing waits on it any more
        if self.fault:
            self.abort_connection(host, tr)
        polite, wait = (plan.force_unmount, FAULT_UNMOUNT_S) if self.fault else (plan.unmount, 60.0)
        results = [tr.run(argv, timeout=wait, env=plan.env or None) for argv in self._unmounts(host, polite, plan)]
        if not all(r.ok for r in results) and not any(r.exit_status == NOT_OURS for r in results):
            results = [tr.run(argv, timeout=wait, env=plan.env or None)
                       for argv in self._unmounts(host, plan.force_unmount, plan)]
        foreign = [r for r in results if r.exit_status == NOT_OURS]
        if foreign:  # someone else's mount there now: neither it nor its client is fsbench's to stop
            self.emit(Event("warning", message=f"{self.target.name} on {host}: {foreign[0].describe()}"))
            fetch_logs(self.log_dir, host, tr, plan)
            return ""
        # the client of a forced (lazy) unmount, or of one whose servers died, goes on running: stopped here
        client = self.stop_client(host, tr)
        if not all(r.ok for r in results) and read_identity(tr, self.target.path)[0]:  # still a mount point
            lazy = tr.run(self._unmounts(host, [["umount", "-l", self.target.path]], plan)[0], timeout=30)
            if not lazy.ok:
                fetch_logs(self.log_dir, host, tr, plan)
                return f"could not unmount {self.target.path} {lazy.describe()}" + (f"; {client}" if client else "")
        self._mounted.discard(host)
        for argv in self._after(host, plan):
            tr.run(argv, timeout=max(30.0, self.target.setup_timeout_s), env=plan.env or None)
        fetch_logs(self.log_dir, host, tr, plan)
        return client

    def abort_connection(self, host: str, tr: Transport) -> None:
        """After a fault: abort the kernel's FUSE connection of fsbench's own mount on host (its identity's
        minor number), so that every process waiting on it (the tool, the watch's lookups, a client that holds
        the connection for a restart) is answered with an error and can end; never raises."""
        ours = self._ours.get(host, "")
        if not ours or read_identity(tr, self.target.path)[0] != ours:  # only while the path holds fsbench's mount
            return
        parts = ours.split()
        minor = parts[1].split(":")[-1] if len(parts) > 1 and ":" in parts[1] else ""
        if not minor.isdigit() or len(parts) < 3 or not parts[2].startswith("fuse"):
            return
        try:
            # the kernel's fusectl file system, where the distribution's init has not mounted it (a container, CI)
            tr.run(sh("d=/sys/fs/fuse/connections; { [ -d $d ] && ! mountpoint -q $d && "
                      "mount -t fusectl fusectl $d; } 2> /dev/null || true\n"
                      f"f=$d/{minor}/abort; [ -w \"$f\" ] && echo 1 > \"$f\" || true"), timeout=30)
        except FsbenchError:
            pass

    def stop_client(self, host: str, tr: Transport) -> str:
        """Stop the client processes fsbench started for this mount on host (TERM, then KILL); what outlived
        them, or ""; a client that needed KILL is said in a warning."""
        r = tr.run(client_stop_argv(self.run_id, self.client_name(host)), timeout=60)
        lines = [line.split(None, 2) for line in r.extra.get("stdout", "").splitlines() if line.strip()]
        killed = [f"{p[2] if len(p) > 2 else '?'} (pid {p[1]})" for p in lines if p[0] == "kill"]
        if killed:
            self.emit(Event("warning", message=f"{self.target.name} on {host}: its client ignored TERM: fsbench "
                                               f"killed {', '.join(killed)}"))
        alive = [f"{p[2] if len(p) > 2 else '?'} (pid {p[1]})" for p in lines if p[0] == "alive"]
        if alive:
            return f"its client outlived KILL: {', '.join(alive)}"
        return "" if r.ok else f"could not stop its client {r.describe()}"
