"""A sample's pid scan, the sampler's p, c, m, n and w lines (format in fsbench.monitor.script): the watched pids,
their command lines, which of them are the run's, and which is the target's client."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fsbench.monitor.script import US, Client


@dataclass
class PidScan:
    """A sample's pid scan (its p, c, m, n and w lines): the watched pids, and which of them are the run's."""

    folders: Sequence[tuple[int, str]] = ()
    names: dict[int, str] = field(default_factory=dict)
    cmdlines: dict[int, list[str]] = field(default_factory=dict)
    marked: set[int] = field(default_factory=set)
    unmarked: set[int] = field(default_factory=set)
    working: dict[int, int] = field(default_factory=dict)  # pid -> the start tick of the service it works for

    def read(self, line: str) -> bool:
        """Take one line of the scan; False when it is none of them."""
        kind, _, rest = line.partition(" ")
        pid, _, value = rest.partition(" ")
        if kind not in ("p", "c", "m", "n", "w") or not pid.isdigit():
            return False
        if kind == "p" and value:
            self.names[int(pid)] = value
        elif kind == "c":
            self.cmdlines[int(pid)] = value.split(US)
        elif kind in ("m", "n") and not value.strip():
            (self.marked if kind == "m" else self.unmarked).add(int(pid))
        elif kind == "w" and value.isdigit() and 0 < int(value) <= len(self.folders):
            self.working[int(pid)] = self.folders[int(value) - 1][0]
        return True

    def own(self, pid: int, start: int) -> bool | None:
        """Whether the process is the run's: its marker, or (a title written over the marker: redis-server,
        postgres) a service's folder as its working folder and a start after the service's; None when unknown."""
        if pid in self.marked or (pid in self.working and start >= self.working[pid]):
            return True
        return False if pid in self.unmarked else None


def is_client(cmdline: list[str] | None, client: Client, marked: bool = False) -> bool:
    """Whether a command line holds every word of the client's as a whole argument (a trailing / aside).

    A process may rewrite its command line into one title (JuiceFS does, to hide a password): its
    words are then the title's space-separated parts. A title shorter than the original is padded with
    NULs and may be cut (JuiceFS stops at 255 bytes, often before the mount point): then the words the
    cut may hide (those after the last one seen, in the kind's order) are taken on trust when the
    process carries the run's marker (`marked`); the first word must still be seen (`mount` for JuiceFS,
    which `juicefs objbench`, whose title its masked keys shorten, does not have).
    """
    args = [a for a in cmdline or [] if a]
    if not args:
        return False
    padded = len(args) == 1 and len(cmdline or []) > 2  # the title, its NUL terminator, then padding
    if len(args) == 1 and " " in args[0]:
        args = args[0].split()
    own = {a.rstrip("/") or a for a in args}
    found = [(w.rstrip("/") or w) in own for w in client.words]
    if all(found):
        return True
    seen = found.index(False)  # words seen first, then only unseen ones: what a cut hides
    return padded and marked and seen > 0 and not any(found[seen:])
