"""What a run leaves on its hosts until it cleans up, recorded first, so a killed run can be cleaned later.

Every service start, target setup and scratch folder registers its own clean-up (commands per host)
in `leftovers.json` before it starts, and crosses it off once it cleaned up itself. Every command
carries `FSBENCH_RUN=<run id>` in its environment. An index of the controller's running runs sits in
STATE_DIR. When fsbench is killed (SIGKILL, a crash, a power cut) nothing is crossed off: the next
`fsbench run` (or `--resume`) finds the run whose lock nobody holds, stops its processes (found by
the marker), runs its pending clean-ups in reverse order and marks its manifest. Clean-ups on hosts
the new run does not use are left (and said); a host of the new run where a clean-up cannot even be
attempted stops the new run with the list (remove STATE_DIR/<run id>.json once cleaned by hand).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fsbench.errors import FsbenchError
from fsbench.events import Event, Listener, ignore
from fsbench.transport.base import Transport

STATE_DIR = Path(os.environ.get("FSBENCH_STATE_DIR", "/var/tmp/fsbench/runs"))
MARKER = "FSBENCH_RUN"


@dataclass
class Action:
    """Commands that undo one thing a run started on one host."""

    id: str
    host: str
    what: str
    commands: list[list[str]] = field(default_factory=list)


class Leftovers:
    """The run's pending clean-ups, kept in a file of the run directory (atomically rewritten)."""

    def __init__(self, path: Path):
        self.path = path
        self.actions: list[Action] = []
        if path.exists():
            try:
                self.actions = [Action(**a) for a in json.loads(path.read_text())]
            except (json.JSONDecodeError, TypeError):
                self.actions = []

    def add(self, host: str, what: str, commands: list[list[str]]) -> str:
        """Record a clean-up before starting what it undoes; returns its id."""
        action = Action(uuid.uuid4().hex[:12], host, what, [list(c) for c in commands])
        self.actions.append(action)
        self._save()
        return action.id

    def done(self, action_id: str) -> None:
        """The thing was cleaned up by the run itself."""
        self.actions = [a for a in self.actions if a.id != action_id]
        self._save()

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps([asdict(a) for a in self.actions], indent=1))
            os.replace(tmp, self.path)
        except OSError:  # a full disk: the file keeps its last state; redoing a done clean-up is harmless
            tmp.unlink(missing_ok=True)


class NoLeftovers:
    """The registry of code that runs outside a run directory (tests, `fsbench deploy`)."""

    def add(self, host: str, what: str, commands: list[list[str]]) -> str:
        return ""

    def done(self, action_id: str) -> None:
        return None


def register_run(run_dir: Path, run_id: str) -> None:
    """Note this run in the controller's index of runs (removed when it ends normally)."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"{run_id}.json").write_text(json.dumps({"run_dir": str(run_dir.resolve()), "pid": os.getpid()}))


def unregister_run(run_id: str) -> None:
    """The run ended and cleaned up after itself."""
    (STATE_DIR / f"{run_id}.json").unlink(missing_ok=True)


def dead_runs() -> list[tuple[str, Path]]:
    """(run id, run directory) of indexed runs whose fsbench process is gone (nobody holds their lock)."""
    out = []
    for entry in sorted(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else []:
        try:
            info = json.loads(entry.read_text())
            run_dir = Path(info["run_dir"])
        except (OSError, json.JSONDecodeError, KeyError, TypeError):
            continue
        if not run_dir.is_dir():
            entry.unlink(missing_ok=True)  # the run directory was deleted: nothing to read the clean-ups from
            continue
        if not _lock_held(run_dir / "lock"):
            out.append((entry.stem, run_dir))
    return out


def _lock_held(path: Path) -> bool:
    try:
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False
    except OSError:
        return False


def marked_pids(run_id: str) -> list[int]:
    """Processes on this machine whose environment carries the run's marker."""
    needle = f"{MARKER}={run_id}".encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    out.append(int(d))
        except OSError:
            continue
    return out


def kill_marked(run_id: str, grace_s: float = 5.0) -> list[int]:
    """TERM, then KILL, every local process of the run; the pids that were found."""
    pids = marked_pids(run_id)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while marked_pids(run_id) and time.monotonic() < deadline:
            time.sleep(0.1)
    return pids


def remote_kill_argv(run_id: str) -> list[str]:
    """A shell command that kills a run's processes on a remote host (found by the marker)."""
    script = ('for e in /proc/[0-9]*/environ; do p=${e#/proc/}; p=${p%/environ}; [ "$p" = $$ ] && continue; '
              'tr "\\0" "\\n" < "$e" 2>/dev/null | grep -qx "$1" && kill -s KILL "$p" 2>/dev/null; done; true')
    return ["/bin/sh", "-c", script, "fsbench-recover", f"{MARKER}={run_id}"]


def recover(run_id: str, run_dir: Path, transports: dict[str, Transport], local: Transport,
            emit: Listener = ignore) -> list[str]:
    """Clean up after a dead run: its processes, then its pending clean-ups in reverse; what failed."""
    from fsbench.store import RunDir

    problems: list[str] = []
    killed = kill_marked(run_id)
    if killed:
        emit(Event("warning", message=f"run {run_id} had died: stopped its {len(killed)} processes on this machine"))
    pending = Leftovers(run_dir / "leftovers.json")
    hosts = {a.host for a in pending.actions}
    for host in sorted(hosts):
        tr = transports.get(host) or (local if host in ("local", "controller") else None)
        if tr is not None and tr is not local:
            try:
                tr.run(remote_kill_argv(run_id), timeout=60)
            except FsbenchError as exc:
                problems.append(f"{host}: cannot stop the processes of run {run_id}: {exc}")
    elsewhere = []
    for action in reversed(list(pending.actions)):
        tr = transports.get(action.host) or (local if action.host in ("local", "controller") else None)
        if tr is None:  # not a host of this run: nothing here can collide with it; said, and kept for later
            elsewhere.append(f"{action.what} on {action.host}")
            continue
        notes = []
        try:
            for argv in action.commands:
                r = tr.run(argv, timeout=300)
                if not r.ok:  # often "not mounted" or "no such process": already gone, which is the aim
                    notes.append(r.describe().splitlines()[0])
        except FsbenchError as exc:
            problems.append(f"{action.host}: {action.what}: {exc}")
            continue
        pending.done(action.id)
        emit(Event("warning", message=f"cleaned up after the dead run {run_id}: {action.what} on {action.host}"
                                      + (f" ({'; '.join(notes)})" if notes else "")))
    try:
        rd = RunDir.open(run_dir)
        if rd.manifest.get("status") == "running":
            rd.manifest["status"] = "interrupted"
            rd.save_manifest()
    except FsbenchError:
        pass
    if elsewhere:
        emit(Event("warning", message=f"the dead run {run_id} ({run_dir}) left {'; '.join(elsewhere)}: not hosts "
                                      "of this run; resume that run (or clean by hand) to remove them"))
    elif not problems:
        unregister_run(run_id)
    return problems
