"""The run's scratch folder on every host (services' folders, SSH work folders): recorded as a leftover before
the run begins, removed at its end."""

from __future__ import annotations

import posixpath

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import FsbenchError
from fsbench.core.events import Event, Listener


class ScratchFolders:
    """`<settings.scratch>/<run id>` on each host, and an SSH host's work folder for the run."""

    def __init__(self, root: str, run_id: str, transports: dict[str, Transport], leftovers, emit: Listener):
        self.path = posixpath.join(root, run_id)
        self.run_id, self.transports, self.leftovers, self.emit = run_id, transports, leftovers, emit
        self._cleanups: dict[str, str] = {}

    def commands(self, tr: Transport) -> list[list[str]]:
        """Removing the run's scratch folder on a host, and on SSH hosts its work folder."""
        out = [["rm", "-rf", "--", self.path]]
        base = tr.remote_base
        if base is not None and base.startswith("/"):
            out.append(["rm", "-rf", "--", posixpath.join(base, self.run_id)])
        return out

    def record(self) -> None:
        """Before anything is made there: the clean-up of every host in leftovers.json."""
        self._cleanups = {name: self.leftovers.add(name, "scratch folders", self.commands(tr))
                          for name, tr in self.transports.items()}

    def remove(self) -> None:
        """Remove them on every host; one that fails stays in leftovers.json (the next run tries again)."""
        def remove(name: str) -> None:
            tr = self.transports[name]
            try:
                failed = [r for r in (tr.run(argv, timeout=120) for argv in self.commands(tr)) if not r.ok]
                if failed:
                    self.emit(Event("warning", message=f"could not remove {self.path} on {name}: "
                                                       f"{failed[0].describe()}"))
                else:
                    self.leftovers.done(self._cleanups[name])
            except FsbenchError as exc:
                self.emit(Event("warning", message=f"could not remove {self.path} on {name}: {exc}"))

        each(list(self.transports), remove)  # every host at once
