"""A case's steps on each of its hosts, all hosts at once (fsbench.core.at_once.each): its folders made and
removed, what its commands left running stopped. One after the other they cost a case seconds per host
(a case's end on 32 hosts waited for 32 stops in turn); at once, the slowest host's."""

from __future__ import annotations

import logging

from fsbench.api.transport import Transport
from fsbench.core.at_once import Pending, each
from fsbench.core.errors import CommandFailed, FsbenchError
from fsbench.core.events import Event, Listener
from fsbench.run.run_processes import case_stop_argv, case_stop_found, stop_case_processes
from fsbench.transport.group import goes_together, run_on_group

log = logging.getLogger(__name__)


def make_folders(hosts: dict[str, Transport], dirs: dict[str, str], test_dir: str, folder: bool,
                 empty_first: bool) -> None:
    """The case's folder on each host (dirs: a host's own, else test_dir); a write's dataset emptied first."""
    # every host's old files go before any host makes its folder: on a file system the hosts share
    # (a JuiceFS volume), one host's removal would otherwise take the folders of those before it
    # hosts whose transport runs a step's commands together (ssh-relay) get one command each, sent at once
    together = {h: tr for h, tr in hosts.items() if goes_together(tr)}
    alone = [h for h in hosts if h not in together]
    if empty_first:
        if together and not test_dir.strip("/"):
            raise ValueError(f"refusing to remove {test_dir!r} on {', '.join(together)}")  # as remove_tree
        side = Pending(lambda: each([hosts[h] for h in alone], lambda tr: tr.remove_tree(test_dir)))
        for r in run_on_group(together, ["rm", "-rf", "--", test_dir], timeout=_op_timeout(together)).failed().values():
            log.warning("could not remove %s %s", test_dir, r.describe())  # as remove_tree says it
        side.result()
    if folder:
        side = Pending(lambda: each(alone, lambda h: hosts[h].makedirs(dirs.get(h, test_dir))))
        made = run_on_group(together, {h: ["mkdir", "-p", "--", dirs.get(h, test_dir)] for h in together},
                            timeout=_op_timeout(together))
        side.result()
        for h, r in made.failed().items():
            raise CommandFailed(r, f"making {dirs.get(h, test_dir)}")


def _op_timeout(hosts: dict[str, Transport]) -> float:
    """The longest of the hosts' own timeouts for a file operation (what makedirs and remove_tree give it)."""
    return max((float(getattr(tr, "op_timeout", 60.0)) for tr in hosts.values()), default=60.0)


def clean_up(used: dict[str, Transport], hosts: dict[str, Transport], path: str | None, run_id: str, case_id: str,
             emit: Listener) -> list[str]:
    """Stop what the case's commands left running on every host it used (only processes whose environment
    carries the run's and the case's markers), then remove `path` (the case's folder; None: it stays) on every
    host of the case. Notes of what was stopped where.

    A host of the case stops its strays and removes the folder in one step (one command over SSH), all such
    hosts at once; hosts the case only used (the controller of fio --client) stop theirs first. Each host
    removes after its own strays have stopped, so the removal that starts last starts after every stray has:
    on a folder the hosts share, nothing a stray wrote outlives it."""
    def remove_of(h: str) -> str | None:
        remove = path if h in hosts else None
        if remove is not None and not remove.strip("/"):  # the strays still stop
            emit(Event("warning", message=f"refusing to remove {remove!r} on {h}"))
            return None
        return remove

    def failed(h: str, remove: str | None, why: object) -> list[str]:
        what = f"stop what {case_id} left running" + (f" or remove {remove}" if remove else "")
        emit(Event("warning", message=f"could not {what} on {h}: {why}"))  # a lost host must not hide the case
        return []

    def step(h: str) -> list[str]:
        tr, remove = hosts.get(h) or used[h], remove_of(h)
        try:
            if h not in used:
                if remove is not None:
                    tr.remove_tree(remove)
                return []
            return stop_case_processes(tr, run_id, case_id, remove)
        except (FsbenchError, OSError, ValueError) as exc:
            return failed(h, remove, exc)

    def steps(group: list[str]) -> list[list[str]]:
        """step() on every host of the group: one command each, those that go together sent at once."""
        together = {h: hosts.get(h) or used[h] for h in group if goes_together(hosts.get(h) or used[h])}
        removes = {h: remove_of(h) for h in together}
        argv: dict[str, list[str]] = {}
        for h, remove in removes.items():
            if h in used:
                argv[h] = case_stop_argv(run_id, case_id, remove)
            elif remove is not None:
                argv[h] = ["rm", "-rf", "--", remove]
        alone = [h for h in group if h not in together]
        side = Pending(lambda: each(alone, step))
        ran = run_on_group({h: together[h] for h in argv}, argv, timeout=120)  # the stop's and the removal's minute
        found = dict(zip(alone, side.result(), strict=True))
        for h, r in ran.results.items():
            if h not in used:
                found[h] = []
                if not r.ok:
                    log.warning("could not remove %s %s", removes[h], r.describe())  # as remove_tree says it
                continue
            try:
                found[h] = case_stop_found(together[h], case_id, removes[h], r)
            except FsbenchError as exc:
                found[h] = failed(h, removes[h], exc)
        return [found.get(h, []) for h in group]

    hosts = hosts if path is not None else {}
    first = [h for h in used if h not in hosts]
    then = list(hosts)
    notes = []
    for group in (first, then):
        for h, found in zip(group, steps(group), strict=True):
            if found:
                procs = ", ".join(f"{name or '?'} (pid {pid})" for pid, _, name in (f.partition(" ") for f in found))
                notes.append(f"stopped what the case left running on {h}: {procs}")
    return notes
