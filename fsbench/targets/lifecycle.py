"""A target's session: setup commands, a readiness check, a scratch folder per run, teardown."""

from __future__ import annotations

import posixpath
import threading

from fsbench.events import Event, Listener
from fsbench.scenario.model import Target
from fsbench.shell import render, sh
from fsbench.transport.base import Transport


class TargetSession:
    """Setup once before the target's first case; teardown always, even after failures and Ctrl-C."""

    def __init__(self, target: Target, transports: dict[str, Transport], run_id: str, emit: Listener):
        self.target, self.transports, self.run_id, self.emit = target, transports, run_id, emit
        self.scratch = posixpath.join(target.path, f"fsbench-{run_id}")
        self._setup_started = False

    def values(self, host: str) -> dict[str, str]:
        """Placeholders available to the target's commands."""
        return {"target.path": self.target.path, "target.name": self.target.name, "run.id": self.run_id,
                "host.name": host}

    def setup(self, cancel: threading.Event) -> str | None:
        """Run setup on every host of the target; None when ready, else the reason it is not."""
        self._setup_started = True
        for host, tr in self.transports.items():
            for cmd in self.target.setup:
                self.emit(Event("target_setup", message=f"{self.target.name} on {host}: {cmd}"))
                r = tr.run(sh(render(cmd, self.values(host))), timeout=self.target.setup_timeout_s, cancel=cancel)
                if not r.ok:
                    return f"target setup failed {r.describe()}"
            if not tr.is_dir(self.target.path):
                return (f"target path {self.target.path} is not an existing directory on {host} "
                        "(create or mount it, or add a setup command that does)")
            tr.makedirs(self.scratch)
        return None

    def case_dir(self, case_id: str) -> str:
        """A unique folder for one case's test files, inside the run's scratch folder."""
        return posixpath.join(self.scratch, case_id)

    def teardown(self) -> None:
        """Remove the scratch folder, then run teardown commands on every host; report, never raise."""
        if not self._setup_started:
            return
        for host, tr in self.transports.items():
            if tr.is_dir(self.scratch):
                tr.remove_tree(self.scratch)
            for cmd in self.target.teardown:
                self.emit(Event("target_teardown", message=f"{self.target.name} on {host}: {cmd}"))
                r = tr.run(sh(render(cmd, self.values(host))), timeout=self.target.setup_timeout_s)
                if not r.ok:
                    self.emit(Event("warning", message=f"teardown of {self.target.name} failed {r.describe()}"))
