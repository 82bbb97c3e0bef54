"""A run's processes, found by the markers in their environment: a case's strays stopped after it, a dead
run's processes stopped before its clean-ups run again."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import CommandResult, FsbenchError

MARKER = "FSBENCH_RUN"
#: in the environment of a case's own commands only (its tool, prepare step and servers), never of the
#: run's services or mounts: what tells a case's strays from the run's long-lived processes
CASE_MARKER = "FSBENCH_CASE"

log = logging.getLogger(__name__)
#: what the clean-up command says on stderr when its removal failed (the folder stays; the case stands)
NOT_REMOVED = "fsbench: could not remove"


def marked_pids(run_id: str, case_id: str | None = None) -> list[int]:
    """Processes on this machine whose environment carries the run's marker (and the case's, when given)."""
    needles = {f"{MARKER}={run_id}".encode()} | ({f"{CASE_MARKER}={case_id}".encode()} if case_id else set())
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as fh:
                if needles <= set(fh.read().split(b"\0")):
                    out.append(int(d))
        except OSError:
            continue
    return out


def kill_marked(run_id: str, grace_s: float = 5.0, case_id: str | None = None,
                pids: list[int] | None = None) -> list[int]:
    """TERM, then KILL, every local process of the run (of one case of it, when given); the pids found
    (`pids`: as a scan just found them). Each signal goes only to processes a scan of the moment still finds
    marked: a process that ended during the grace may have left its number to one that is not the run's."""
    found = marked_pids(run_id, case_id) if pids is None else pids
    alive = found
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in alive:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while True:
            alive = marked_pids(run_id, case_id)
            if not alive or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if not alive:
            break
    return found


def remote_case_kill_argv(run_id: str, case_id: str, grace_s: int = 2) -> list[str]:
    """A shell command that stops a case's processes on a host (both markers in their environment):
    TERM, KILL after grace_s; prints each pid it found with its name."""
    # the run's processes first, by one grep over every environment (a tr and a grep per process took a
    # second a host on a busy machine, after every case), then the case's among those few
    script = (
        'found=""; for e in $(grep -lsxzF -e "$1" /proc/[0-9]*/environ); do p=${e#/proc/}; p=${p%/environ}; '
        '[ "$p" = $$ ] && continue; grep -qsxzF -e "$2" "$e" || continue; '
        'echo "$p $(cat /proc/$p/comm 2>/dev/null)"; found="$found $p"; done; '
        '[ -n "$found" ] || exit 0; kill -s TERM $found 2>/dev/null; i=0; '
        'while [ $i -lt $(($3 * 10)) ]; do alive=""; for p in $found; do '
        '[ -e /proc/$p ] && [ "$(cut -d" " -f3 /proc/$p/stat 2>/dev/null)" != Z ] && alive="$alive $p"; done; '
        '[ -n "$alive" ] || exit 0; sleep 0.1; i=$((i + 1)); done; kill -s KILL $alive 2>/dev/null; true'
    )
    return ["/bin/sh", "-c", script, "fsbench-case-stop", f"{MARKER}={run_id}", f"{CASE_MARKER}={case_id}",
            str(grace_s)]


def remote_case_cleanup_argv(run_id: str, case_id: str, path: str, grace_s: int = 2) -> list[str]:
    """remote_case_kill_argv's stop, then `rm -rf` of the case's folder, in one command (one round trip a host
    at the case's end instead of two); exits with the stop's status, and says NOT_REMOVED when rm failed."""
    stop = remote_case_kill_argv(run_id, case_id, grace_s)
    script = f'( {stop[2]} ); s=$?; rm -rf -- "$4" || echo "{NOT_REMOVED} $4" >&2; exit $s'
    return ["/bin/sh", "-c", script, "fsbench-case-clean-up", *stop[4:], path]


def stop_case_processes(tr: Transport, run_id: str, case_id: str, remove: str | None = None) -> list[str]:
    """Stop what a case's commands left running on one host, then remove `remove` (the case's folder) there when
    given; `PID NAME` of each process found. A removal that fails is logged, as Transport.remove_tree does."""
    from fsbench.transport.local import LocalTransport

    if remove is not None and not remove.strip("/"):
        raise ValueError(f"refusing to remove {remove!r} on {tr.host}")
    if isinstance(tr, LocalTransport):
        try:
            return _stop_local(run_id, case_id)
        finally:  # as over SSH, where both are one command: the removal is tried whatever the stop did
            if remove is not None:
                tr.remove_tree(remove)
    # the stop's minute, and the removal's own minute as Transport.remove_tree gave it over SSH
    r = tr.run(case_stop_argv(run_id, case_id, remove), timeout=60 if remove is None else 120)
    return case_stop_found(tr, case_id, remove, r)


def case_stop_argv(run_id: str, case_id: str, remove: str | None) -> list[str]:
    """The one command that stops a case's strays on a remote host, and removes its folder when given."""
    return remote_case_kill_argv(run_id, case_id) if remove is None else remote_case_cleanup_argv(run_id, case_id,
                                                                                                 remove)


def case_stop_found(tr: Transport, case_id: str, remove: str | None, r: CommandResult) -> list[str]:
    """What case_stop_argv's result says: `PID NAME` of each process it stopped (a removal that failed is
    logged, as Transport.remove_tree does); FsbenchError when the stop itself failed."""
    if remove is not None and NOT_REMOVED in r.stderr_tail:
        log.warning("could not remove %s %s", remove, r.describe())
    if not r.ok:
        raise FsbenchError(f"cannot stop the processes case {case_id} left on {tr.host}: {r.describe()}")
    return [line for line in r.extra.get("stdout", "").splitlines() if line.strip()]


def _stop_local(run_id: str, case_id: str) -> list[str]:
    pids = marked_pids(run_id, case_id)
    if not pids:  # what nearly every case leaves: one look at /proc, not three
        return []
    found = []
    for pid in pids:
        try:
            found.append(f"{pid} {Path(f'/proc/{pid}/comm').read_text().strip()}")
        except OSError:
            continue
    kill_marked(run_id, 2.0, case_id, pids)
    return found


def remote_kill_argv(run_id: str) -> list[str]:
    """A shell command that kills a run's processes on a remote host (found by the marker)."""
    # one grep over every environment (a `tr` and a `grep` per process took seconds a host on a busy machine):
    # -z reads NUL-separated entries, -x -F matches the whole entry as given, -l names the files
    script = ('for e in $(grep -lsxzF -e "$1" /proc/[0-9]*/environ); do p=${e#/proc/}; p=${p%/environ}; '
              '[ "$p" = $$ ] && continue; kill -s KILL "$p" 2>/dev/null; done; true')
    return ["/bin/sh", "-c", script, "fsbench-recover", f"{MARKER}={run_id}"]


#: in the environment of a target's mount commands only: what tells its client (a FUSE daemon, which may
#: rewrite its command line as a title, cut short) from every other process of the run
TARGET_MARKER = "FSBENCH_TARGET"


def client_stop_argv(run_id: str, target: str, grace_s: int = 5) -> list[str]:
    """A shell command that stops the mount client(s) fsbench started for `target` (`<target>@<host>`) in this
    run: the processes whose environment carries the run's marker and the target's, and no case's. TERM (and
    CONT: a stopped process takes TERM only once continued), KILL after grace_s: a FUSE client whose servers
    died ignores TERM while it waits for them. Prints `term PID NAME`, `kill PID NAME`, and `alive PID NAME`
    for one that outlived KILL (exit 1)."""
    script = (
        # the run's processes first (one grep over every environment), then the few of them that qualify
        'mine() { grep -lsxzF -e "$1" /proc/[0-9]*/environ | while IFS= read -r e; do p=${e#/proc/}; '
        'p=${p%/environ}; grep -qsxzF -e "$2" "$e" || continue; grep -qsz "^$3=" "$e" && continue; '
        '[ "$(cut -d" " -f3 "/proc/$p/stat" 2>/dev/null)" = Z ] && continue; echo "$p"; done; }; '
        'name() { cat "/proc/$1/comm" 2>/dev/null || echo "?"; }; '
        'left=$(mine "$@"); [ -n "$left" ] || exit 0; '
        'for p in $left; do echo "term $p $(name $p)"; done; kill -s TERM $left 2>/dev/null; '
        'kill -s CONT $left 2>/dev/null; i=0; '
        'while [ $i -lt $(($4 * 10)) ]; do left=$(mine "$@"); [ -n "$left" ] || exit 0; sleep 0.1; i=$((i + 1)); '
        'done; for p in $left; do echo "kill $p $(name $p)"; done; kill -s KILL $left 2>/dev/null; sleep 0.5; '
        'left=$(mine "$@"); [ -n "$left" ] || exit 0; for p in $left; do echo "alive $p $(name $p)"; done; exit 1'
    )
    return ["/bin/sh", "-c", script, "fsbench-client-stop", f"{MARKER}={run_id}", f"{TARGET_MARKER}={target}",
            CASE_MARKER, str(grace_s)]
