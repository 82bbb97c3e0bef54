"""What a run leaves on its hosts until it cleans up, recorded first, so a killed run can be cleaned later.

Every service start, target setup and scratch folder registers its own clean-up (commands per host)
in `leftovers.json` before it starts, and crosses it off once it cleaned up itself. Every command
carries `FSBENCH_RUN=<run id>` in its environment. An index of the controller's running runs sits in
the state folder (`state_dir()`). When fsbench is killed (SIGKILL, a crash, a power cut) nothing is
crossed off: the next `fsbench run` (or `--resume`) finds the run whose lock nobody holds, takes that
lock, stops its processes (found by the marker), runs its pending clean-ups in reverse order and marks
its manifest. Clean-ups on hosts the new run does not use are left (and said); a host of the new run
where a clean-up cannot even be attempted stops the new run with the list (remove
<state folder>/<run id>.json once cleaned by hand).
The index of runs (and which files recovery trusts) is fsbench.run.run_index; the markers and the
stopping of marked processes fsbench.run.run_processes.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.errors import FsbenchError
from fsbench.core.events import Event, Listener, ignore
from fsbench.run.run_index import (
    STATE_ENV,
    dead_runs,
    read_trusted,
    register_run,
    state_dir,
    state_path,
    unregister_run,
    write_private,
)
from fsbench.run.run_processes import CASE_MARKER, MARKER, kill_marked, remote_kill_argv, stop_case_processes

#: what the campaign and recovery read from here (the index and the markers live in their own modules)
__all__ = ["CASE_MARKER", "MARKER", "STATE_ENV", "Action", "Leftovers", "NoLeftovers", "dead_runs", "recover",
           "register_run", "state_dir", "state_path", "stop_case_processes", "unregister_run"]


@dataclass
class Action:
    """Commands that undo one thing a run started on one host."""

    id: str
    host: str
    what: str
    commands: list[list[str]] = field(default_factory=list)


class Leftovers:
    """The run's pending clean-ups, kept in a file of the run directory (atomically rewritten)."""

    def __init__(self, path: Path, text: str | None = None):
        self.path = path
        self.actions: list[Action] = []
        self._lock = threading.Lock()  # the hosts of a target are set up and torn down at once
        self._down: Callable[[str], str | None] = _never_down
        self._texts: dict[str, str] = {}  # action id -> its JSON, made once
        if text is None and path.exists():
            text = path.read_text()
        if text:
            try:
                self.actions = [Action(**a) for a in json.loads(text)]
            except (json.JSONDecodeError, TypeError):
                self.actions = []

    def add(self, host: str, what: str, commands: list[list[str]]) -> str:
        """Record a clean-up before starting what it undoes; returns its id."""
        action = Action(uuid.uuid4().hex[:12], host, what, [list(c) for c in commands])
        with self._lock:
            self.actions.append(action)
            self._save()
        return action.id

    def done(self, action_id: str) -> None:
        """The thing was cleaned up by the run itself; kept pending when its host stopped answering.

        Callers cross a clean-up off after trying it; on a host found dead meanwhile the try cannot have
        worked (or cannot be known to), so the action stays for the next run, which redoes it harmlessly.
        """
        with self._lock:
            action = next((a for a in self.actions if a.id == action_id), None)
            if action is None or self._down(action.host):
                return
            self.actions = [a for a in self.actions if a.id != action_id]
            self._texts.pop(action_id, None)
            self._save()

    def watch_hosts(self, down: Callable[[str], str | None]) -> None:
        """How to tell a host given up for this run (its reason, else None): done() then keeps its actions."""
        self._down = down

    def _save(self) -> None:
        # each action's JSON is made once: rewriting every action on every add and done made a run's saves
        # grow with the square of its hosts (16 clients: 64 saves, 0.64 s of the controller's CPU, most of it
        # dataclasses.asdict copying the commands again)
        text = "[\n" + ",\n".join(self._json(a) for a in self.actions) + "\n]" if self.actions else "[]"
        try:  # private: recovery trusts only a file of this user that nobody else can write
            write_private(self.path, text)
        except OSError:  # a full disk: the file keeps its last state; redoing a done clean-up is harmless
            pass

    def _json(self, action: Action) -> str:
        if action.id not in self._texts:
            self._texts[action.id] = json.dumps({"id": action.id, "host": action.host, "what": action.what,
                                                 "commands": action.commands})
        return self._texts[action.id]


class NoLeftovers:
    """The registry of code that runs outside a run directory (tests, `fsbench deploy`)."""

    def add(self, host: str, what: str, commands: list[list[str]]) -> str:
        return ""

    def done(self, action_id: str) -> None:
        return None

    def watch_hosts(self, down: Callable[[str], str | None]) -> None:
        return None


def _never_down(host: str) -> str | None:
    return None


def recover(run_id: str, run_dir: Path, transports: dict[str, Transport], local: Transport,
            emit: Listener = ignore) -> list[str]:
    """Clean up after a dead run: its processes, then its pending clean-ups in reverse; what failed.

    Holds the dead run's lock meanwhile, so two runs started together never both clean it.
    """
    from fsbench.run.store import RunDir, RunDirLocked

    holder = RunDir(run_dir)
    try:
        holder.lock()
    except RunDirLocked:  # another new run is cleaning it (or it came back to life): not ours to touch
        return []
    except OSError as exc:
        emit(Event("warning", message=f"cannot lock the dead run {run_id} ({run_dir}): {exc.strerror or exc}"))
        return []
    try:
        if not (state_path() / f"{run_id}.json").exists():  # cleaned by a run that held the lock before us
            return []
        try:
            text = read_trusted(run_dir / "leftovers.json")
        except ValueError as exc:
            emit(Event("warning", message=f"not cleaning up after the dead run {run_id}: {exc}; "
                                          f"clean by hand, then delete {state_path() / (run_id + '.json')}"))
            return []
        return _recover(run_id, run_dir, Leftovers(run_dir / "leftovers.json", text or "[]"), transports, local,
                        emit)
    finally:
        holder.unlock()


def _recover(run_id: str, run_dir: Path, pending: Leftovers, transports: dict[str, Transport],
             local: Transport, emit: Listener) -> list[str]:
    from fsbench.run.store import RunDir

    def reach(host: str) -> Transport | None:
        return transports.get(host) or (local if host in ("local", "controller") else None)

    problems = _stop_processes(run_id, sorted({a.host for a in pending.actions}), reach, local, emit)
    elsewhere = []
    for action in reversed(list(pending.actions)):
        tr = reach(action.host)
        if tr is None:  # not a host of this run: nothing here can collide with it; said, and kept for later
            elsewhere.append(f"{action.what} on {action.host}")
            continue
        problem, notes = _undo(action, tr)
        if problem:
            problems.append(f"{action.host}: {action.what}: {problem}")
            continue
        pending.done(action.id)
        emit(Event("warning", message=f"cleaned up after the dead run {run_id}: {action.what} on {action.host}"
                                      + (f" ({'; '.join(notes)})" if notes else "")))
    try:
        rd = RunDir.open(run_dir)
        if rd.manifest.get("status") == "running":
            rd.manifest["status"] = "interrupted"
            rd.save_manifest()
    except (FsbenchError, OSError):
        pass
    if elsewhere:
        emit(Event("warning", message=f"the dead run {run_id} ({run_dir}) left {'; '.join(elsewhere)}: not hosts "
                                      "of this run; resume that run (or clean by hand) to remove them"))
    elif not problems:
        unregister_run(run_id)
    return problems


def _stop_processes(run_id: str, hosts: list[str], reach: Callable[[str], Transport | None], local: Transport,
                    emit: Listener) -> list[str]:
    """Stop the dead run's processes here and on its hosts (before its clean-ups run); what could not be."""
    killed = kill_marked(run_id)
    if killed:
        emit(Event("warning", message=f"run {run_id} had died: stopped its {len(killed)} processes on this machine"))

    def stop_on(host: str) -> str | None:
        tr = reach(host)
        if tr is None or tr is local:
            return None
        try:
            tr.run(remote_kill_argv(run_id), timeout=60)
        except FsbenchError as exc:
            return f"{host}: cannot stop the processes of run {run_id}: {exc}"
        return None

    # every host at once (one after the other, a dead run's 1,000 hosts waited their round trips and grace in turn)
    return [p for p in each(hosts, stop_on) if p]


def _undo(action: Action, tr: Transport) -> tuple[str, list[str]]:
    """Run one clean-up's commands: (why it cannot count as done, or ""; the failures that mean already gone)."""
    notes: list[str] = []
    try:
        for argv in action.commands:
            r = tr.run(argv, timeout=300)
            if r.exit_status is None:  # the host was lost meanwhile: whether it ran is not known
                return r.describe().splitlines()[0], notes
            if not r.ok:  # often "not mounted" or "no such process": already gone, which is the aim
                notes.append(r.describe().splitlines()[0])
    except FsbenchError as exc:
        return str(exc), notes
    return "", notes
