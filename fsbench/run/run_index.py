"""This user's index of running runs on the controller: where a killed run's clean-ups are found.

Recovery runs the commands it reads, so it reads only what this user wrote: the state folder is per
user (its uid in the name), made 0700, and refused when someone else owns it or may write in it; an
index entry or a leftovers.json that is not a regular file of this user, closed to group and others,
is skipped with a warning.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import tempfile
from pathlib import Path

from fsbench.core.errors import PreflightError
from fsbench.core.events import Event, Listener, ignore

#: the index of running runs, per user; FSBENCH_STATE_DIR puts it elsewhere (tests, a shared /var/tmp policy)
STATE_ENV = "FSBENCH_STATE_DIR"


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


def write_private(path: Path, text: str) -> None:
    """Write a file readable by this user only (whatever the umask), through a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # 0600, a name of its own
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def claim_run_id(run_dir: Path, run_id: str) -> bool:
    """Take run_id in the index for run_dir; False when another run holds it (running, or killed and not yet
    cleaned up after). A run id names the run's processes (their FSBENCH_RUN marker), its services' and its
    cases' (a case's strays are stopped by run id and case id), so two runs of one scenario started in the same
    second into two folders must not share one: each would stop the other's processes."""
    path = state_dir() / f"{run_id}.json"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(_entry(run_dir))
    except BaseException:  # a half-written entry would hold the id for ever, and warn at every run
        path.unlink(missing_ok=True)
        raise
    return True


def register_run(run_dir: Path, run_id: str) -> None:
    """Note this run in the controller's index of runs (removed when it ends normally)."""
    write_private(state_dir() / f"{run_id}.json", _entry(run_dir))


def _entry(run_dir: Path) -> str:
    """An index entry: the run directory (where its clean-ups are) and the fsbench process running it."""
    return json.dumps({"run_dir": str(run_dir.resolve()), "pid": os.getpid()})


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
        if not (run_dir / "lock").exists() and _running(info.get("pid")):
            continue  # a run that claimed its id and is making its run directory: it locks that next
        if not _lock_held(run_dir / "lock"):
            out.append((entry.stem, run_dir))
    return out


def _running(pid: object) -> bool:
    """Whether a process of that pid exists (a starting run's: it holds no lock yet)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
