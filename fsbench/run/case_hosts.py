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


def remove_everywhere(hosts: dict[str, Transport], path: str, emit: Listener) -> None:
    """path removed on every host; a host's failure is a warning, never the case's outcome."""
    def remove(h: str) -> None:
        try:
            hosts[h].remove_tree(path)
        except (FsbenchError, OSError) as exc:
            emit(Event("warning", message=f"could not remove {path} on {h}: {exc}"))

    each(list(hosts), remove)


def stop_strays(used: dict[str, Transport], run_id: str, case_id: str, emit: Listener) -> list[str]:
    """Stop what the case's commands left running (a tool's background child) on every host it used: only
    processes whose environment carries the run's and the case's markers. Notes of what was stopped where."""
    def stop(h: str) -> list[str]:
        try:
            return stop_case_processes(used[h], run_id, case_id)
        except (FsbenchError, OSError) as exc:  # a lost host must not hide the case's own outcome
            emit(Event("warning", message=f"could not stop what {case_id} left running on {h}: {exc}"))
            return []

    notes = []
    hosts = list(used)
    for h, found in zip(hosts, each(hosts, stop), strict=True):
        if found:
            procs = ", ".join(f"{name or '?'} (pid {pid})" for pid, _, name in (f.partition(" ") for f in found))
            notes.append(f"stopped what the case left running on {h}: {procs}")
    return notes
