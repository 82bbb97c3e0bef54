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

Recovery runs the commands it reads, so it reads only what this user wrote: the state folder is per
user (its uid in the name), made 0700, and refused when someone else owns it or may write in it; an
index entry or a leftovers.json that is not a regular file of this user, closed to group and others,
is skipped with a warning.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError, PreflightError
from fsbench.core.events import Event, Listener, ignore

#: the index of running runs, per user; FSBENCH_STATE_DIR puts it elsewhere (tests, a shared /var/tmp policy)
STATE_ENV = "FSBENCH_STATE_DIR"
MARKER = "FSBENCH_RUN"
#: in the environment of a case's own commands only (its tool, prepare step and servers), never of the
#: run's services or mounts: what tells a case's strays from the run's long-lived processes
CASE_MARKER = "FSBENCH_CASE"


def state_path() -> Path:
    """Where this user's index of running runs lives (not created, not checked)."""
    given = os.environ.get(STATE_ENV)
    # one level under the sticky /var/tmp: nobody else can rename or replace it once it is ours
    return Path(given) if given else Path(f"/var/tmp/fsbench-runs-{os.geteuid()}")


def state_dir() -> Path:
    """This user's index of running runs: created 0700; PreflightError when it is not safe to read."""
    path = state_path()
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise PreflightError([("(controller)", "state folder", f"{path}: cannot create it "
                               f"({exc.strerror or exc}): set {STATE_ENV} to a folder of yours")]) from None
    problem = _unsafe(info, path, "folder")
    if problem:
        raise PreflightError([("(controller)", "state folder", f"{problem}: fsbench runs the clean-up commands "
                               f"recorded there, so it must be yours alone; remove it (or `chmod go-w` it if it is "
                               f"yours), or set {STATE_ENV} to a folder of yours")])
    return path


def _unsafe(info: os.stat_result, path: Path, what: str) -> str | None:
    """Why a file or folder of the index cannot be trusted, or None."""
    kind = stat.S_ISDIR if what == "folder" else stat.S_ISREG
    if not kind(info.st_mode):
        return f"{path} is not a {what} (a symbolic link or something else)"
    if info.st_uid != os.geteuid():
        return f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by its group or by others (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def read_trusted(path: Path) -> str | None:
    """The text of a file of this user that only this user can write; None when absent.

    Raises ValueError with the reason when the file exists but cannot be trusted. The file is opened
    without following links and checked on the open descriptor, so it cannot be swapped in between.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        problem = _unsafe(os.fstat(fd), path, "file")
        if problem:
            raise ValueError(problem)
        return fh.read().decode(errors="replace")


def _write_private(path: Path, text: str) -> None:
    """Write a file readable by this user only (whatever the umask), through a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # 0600, a name of its own
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
        self._down: Callable[[str], str | None] = _never_down
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
        self.actions.append(action)
        self._save()
        return action.id

    def done(self, action_id: str) -> None:
        """The thing was cleaned up by the run itself; kept pending when its host stopped answering.

        Callers cross a clean-up off after trying it; on a host found dead meanwhile the try cannot have
        worked (or cannot be known to), so the action stays for the next run, which redoes it harmlessly.
        """
        action = next((a for a in self.actions if a.id == action_id), None)
        if action is None or self._down(action.host):
            return
        self.actions = [a for a in self.actions if a.id != action_id]
        self._save()

    def watch_hosts(self, down: Callable[[str], str | None]) -> None:
        """How to tell a host given up for this run (its reason, else None): done() then keeps its actions."""
        self._down = down

    def _save(self) -> None:
        try:  # private: recovery trusts only a file of this user that nobody else can write
            _write_private(self.path, json.dumps([asdict(a) for a in self.actions], indent=1))
        except OSError:  # a full disk: the file keeps its last state; redoing a done clean-up is harmless
            pass


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


def register_run(run_dir: Path, run_id: str) -> None:
    """Note this run in the controller's index of runs (removed when it ends normally)."""
    _write_private(state_dir() / f"{run_id}.json",
                   json.dumps({"run_dir": str(run_dir.resolve()), "pid": os.getpid()}))


def unregister_run(run_id: str) -> None:
    """The run ended and cleaned up after itself."""
    (state_path() / f"{run_id}.json").unlink(missing_ok=True)


def dead_runs(emit: Listener = ignore) -> list[tuple[str, Path]]:
    """(run id, run directory) of indexed runs whose fsbench process is gone (nobody holds their lock).

    Entries that are not this user's own (see the module's doc) are skipped with a warning.
    """
    out = []
    folder = state_dir()
    for entry in sorted(folder.glob("*.json")):
        try:
            text = read_trusted(entry)
            info = json.loads(text or "")
            run_dir = Path(info["run_dir"])
        except ValueError as exc:  # JSONDecodeError is one too
            emit(Event("warning", message=f"ignoring the run index entry {entry}: {exc}"))
            continue
        except (KeyError, TypeError):
            emit(Event("warning", message=f"ignoring the run index entry {entry}: no run_dir in it"))
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


def kill_marked(run_id: str, grace_s: float = 5.0, case_id: str | None = None) -> list[int]:
    """TERM, then KILL, every local process of the run (of one case of it, when given); the pids found."""
    pids = marked_pids(run_id, case_id)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while marked_pids(run_id, case_id) and time.monotonic() < deadline:
            time.sleep(0.1)
    return pids


def remote_case_kill_argv(run_id: str, case_id: str, grace_s: int = 2) -> list[str]:
    """A shell command that stops a case's processes on a host (both markers in their environment):
    TERM, KILL after grace_s; prints each pid it found with its name."""
    script = (
        'found=""; for e in /proc/[0-9]*/environ; do p=${e#/proc/}; p=${p%/environ}; [ "$p" = $$ ] && continue; '
        '[ "$(tr "\\0" "\\n" 2>/dev/null < "$e" | grep -cxF -e "$1" -e "$2")" = 2 ] || continue; '
        'echo "$p $(cat /proc/$p/comm 2>/dev/null)"; found="$found $p"; done; '
        '[ -n "$found" ] || exit 0; kill -s TERM $found 2>/dev/null; i=0; '
        'while [ $i -lt $(($3 * 10)) ]; do alive=""; for p in $found; do '
        '[ -e /proc/$p ] && [ "$(cut -d" " -f3 /proc/$p/stat 2>/dev/null)" != Z ] && alive="$alive $p"; done; '
        '[ -n "$alive" ] || exit 0; sleep 0.1; i=$((i + 1)); done; kill -s KILL $alive 2>/dev/null; true'
    )
    return ["/bin/sh", "-c", script, "fsbench-case-stop", f"{MARKER}={run_id}", f"{CASE_MARKER}={case_id}",
            str(grace_s)]


def stop_case_processes(tr: Transport, run_id: str, case_id: str) -> list[str]:
    """Stop what a case's commands left running on one host; `PID NAME` of each process found."""
    from fsbench.transport.local import LocalTransport

    if isinstance(tr, LocalTransport):
        found = []
        for pid in marked_pids(run_id, case_id):
            try:
                found.append(f"{pid} {Path(f'/proc/{pid}/comm').read_text().strip()}")
            except OSError:
                continue
        kill_marked(run_id, 2.0, case_id)
        return found
    r = tr.run(remote_case_kill_argv(run_id, case_id), timeout=60)
    if not r.ok:
        raise FsbenchError(f"cannot stop the processes case {case_id} left on {tr.host}: {r.describe()}")
    return [line for line in r.extra.get("stdout", "").splitlines() if line.strip()]


def remote_kill_argv(run_id: str) -> list[str]:
    """A shell command that kills a run's processes on a remote host (found by the marker)."""
    script = ('for e in /proc/[0-9]*/environ; do p=${e#/proc/}; p=${p%/environ}; [ "$p" = $$ ] && continue; '
              'tr "\\0" "\\n" < "$e" 2>/dev/null | grep -qx "$1" && kill -s KILL "$p" 2>/dev/null; done; true')
    return ["/bin/sh", "-c", script, "fsbench-recover", f"{MARKER}={run_id}"]


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

    problems: list[str] = []
    killed = kill_marked(run_id)
    if killed:
        emit(Event("warning", message=f"run {run_id} had died: stopped its {len(killed)} processes on this machine"))
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
        notes, unknown = [], ""
        try:
            for argv in action.commands:
                r = tr.run(argv, timeout=300)
                if r.exit_status is None:  # the host was lost meanwhile: whether it ran is not known
                    unknown = r.describe().splitlines()[0]
                    break
                if not r.ok:  # often "not mounted" or "no such process": already gone, which is the aim
                    notes.append(r.describe().splitlines()[0])
        except FsbenchError as exc:
            problems.append(f"{action.host}: {action.what}: {exc}")
            continue
        if unknown:
            problems.append(f"{action.host}: {action.what}: {unknown}")
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
