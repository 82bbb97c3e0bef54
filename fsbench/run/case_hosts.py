"""A case's steps on each of its hosts, all hosts at once (fsbench.core.at_once.each): its folders made and
removed, what its commands left running stopped. One after the other they cost a case seconds per host
(a case's end on 32 hosts waited for 32 stops in turn); at once, the slowest host's."""

from __future__ import annotations

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import FsbenchError
from fsbench.core.events import Event, Listener
from fsbench.run.run_processes import stop_case_processes


def make_folders(hosts: dict[str, Transport], dirs: dict[str, str], test_dir: str, folder: bool,
                 empty_first: bool) -> None:
    """The case's folder on each host (dirs: a host's own, else test_dir); a write's dataset emptied first."""
    # every host's old files go before any host makes its folder: on a file system the hosts share
    # (a JuiceFS volume), one host's removal would otherwise take the folders of those before it
    if empty_first:
        each(list(hosts.values()), lambda tr: tr.remove_tree(test_dir))
    if folder:
        each(list(hosts), lambda h: hosts[h].makedirs(dirs.get(h, test_dir)))


def clean_up(used: dict[str, Transport], hosts: dict[str, Transport], path: str | None, run_id: str, case_id: str,
             emit: Listener) -> list[str]:
    """Stop what the case's commands left running on every host it used (only processes whose environment
    carries the run's and the case's markers), then remove `path` (the case's folder; None: it stays) on every
    host of the case. Notes of what was stopped where.

    A host of the case stops its strays and removes the folder in one step (one command over SSH), all such
    hosts at once; hosts the case only used (the controller of fio --client) stop theirs first. Each host
    removes after its own strays have stopped, so the removal that starts last starts after every stray has:
    on a folder the hosts share, nothing a stray wrote outlives it."""
    def step(h: str) -> list[str]:
        tr = hosts.get(h) or used[h]
        remove = path if h in hosts else None
        if remove is not None and not remove.strip("/"):  # the strays still stop
            emit(Event("warning", message=f"refusing to remove {remove!r} on {h}"))
            remove = None
        try:
            if h not in used:
                if remove is not None:
                    tr.remove_tree(remove)
                return []
            return stop_case_processes(tr, run_id, case_id, remove)
        except (FsbenchError, OSError, ValueError) as exc:  # a lost host must not hide the case's own outcome
            what = f"stop what {case_id} left running" + (f" or remove {remove}" if remove else "")
            emit(Event("warning", message=f"could not {what} on {h}: {exc}"))
            return []

    hosts = hosts if path is not None else {}
    first = [h for h in used if h not in hosts]
    then = list(hosts)
    notes = []
    for group in (first, then):
        for h, found in zip(group, each(group, step), strict=True):
            if found:
                procs = ", ".join(f"{name or '?'} (pid {pid})" for pid, _, name in (f.partition(" ") for f in found))
                notes.append(f"stopped what the case left running on {h}: {procs}")
    return notes
