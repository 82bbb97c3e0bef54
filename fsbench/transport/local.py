"""The local host: subprocesses in their own process group, so a timeout or Ctrl-C stops the whole tool."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fsbench.api.transport import HostEntry, Transport, TransportKind, tail
from fsbench.core.errors import CommandResult
from fsbench.transport.capture import DEFAULT_CAP, CappedOutput
from fsbench.transport.exit_wait import Ended, wait_exit

GRACE_S = 5.0
EOF_GRACE_S = 2.0  # the command ended but a background child of it still holds its output open
CHUNK = 1 << 16


class LocalTransport:
    """Runs commands on this machine."""

    #: a tool runs in the run directory itself: no work folders elsewhere to remove
    remote_base: str | None = None
    #: this machine never stops answering (a run that cannot reach it ends anyway)
    dead: str | None = None

    def __init__(self, host: str = "local"):
        self.host = host
        #: environment every command gets (FSBENCH_RUN=<run id>): finds a killed run's processes later
        self.marker: dict[str, str] = {}
        #: bytes kept per output stream of one command (head and tail; the scenario's settings.output_cap)
        self.output_cap = DEFAULT_CAP

    def mark(self, marker: Mapping[str, str]) -> None:
        """Every command from now on carries these variables (the run's marker)."""
        self.marker = dict(marker)

    def cap_output(self, cap: int) -> None:
        """Keep at most cap bytes of each output stream of one command."""
        self.output_cap = cap

    def run(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
            env: dict[str, str] | None = None, stdout_path: Path | None = None,
            stderr_path: Path | None = None, cancel: threading.Event | None = None) -> CommandResult:
        """Run argv to completion, timeout or cancellation; never raises for a failing command."""
        full_env = {**os.environ, **self.marker, **(env or {})} if env or self.marker else None
        # through pipes, never straight into the files: only so can a command's output be capped
        out = CappedOutput(stdout_path, keep=stdout_path is None, cap=self.output_cap, name="stdout")
        err = CappedOutput(stderr_path, keep=False, cap=self.output_cap, name="stderr")
        start = time.monotonic()
        try:
            try:
                proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as exc:
                return CommandResult(self.host, list(argv), 127, "", f"cannot start {argv[0]}: {exc.strerror}",
                                     time.monotonic() - start)
            pipes = _Pump(proc, out, err)
            ended = wait_exit(proc, cancel, timeout, start)
            timed_out, interrupted = ended is Ended.TIMED_OUT, ended is Ended.CANCELLED
            if timed_out or interrupted:
                _stop_group(proc)
            pipes.finish(EOF_GRACE_S)
        finally:
            out.close()
            err.close()
        duration = time.monotonic() - start
        result = CommandResult(self.host, list(argv), proc.returncode, tail(out.tail()), tail(err.tail()), duration,
                               timed_out, interrupted)
        if not stdout_path:
            result.extra["stdout"] = out.data().decode(errors="replace")
        capped = [n for n in (out.note(), err.note()) if n]
        if capped:
            result.extra["capped"] = capped
        return result

    def workdir(self, raw_dir: Path, name: str) -> str:
        """Locally the tool runs in the raw directory itself, so its output lands there first (name unused)."""
        raw_dir.mkdir(parents=True, exist_ok=True)
        return str(raw_dir)

    def put_text(self, path: str, text: str) -> None:
        """Write a text file."""
        Path(path).write_text(text)

    def put_file(self, local: Path, path: str, mode: int | None = None) -> None:
        """Copy a local file to path, optionally setting its mode."""
        shutil.copyfile(local, path)
        if mode is not None:
            os.chmod(path, mode)

    def fetch(self, path: str, local: Path) -> bool:
        """Copy path (a file or a folder) to local unless it is already there."""
        src = Path(path)
        if not src.exists():
            return False
        if src.resolve() != local.resolve():
            if src.is_dir():
                shutil.copytree(src, local, dirs_exist_ok=True, symlinks=True)
            else:
                shutil.copyfile(src, local)
        return True

    def makedirs(self, path: str) -> None:
        """mkdir -p."""
        Path(path).mkdir(parents=True, exist_ok=True)

    def remove_tree(self, path: str) -> None:
        """rm -rf, without following symlinks out of the tree."""
        shutil.rmtree(path, ignore_errors=True)

    def is_dir(self, path: str) -> bool:
        """An existing directory? False where the path cannot be read, as `test -d` says over SSH (a FUSE
        mount whose client died raises ENOTCONN, which pathlib passes on)."""
        try:
            return Path(path).is_dir()
        except OSError:
            return False

    def close(self) -> None:
        """Nothing to release locally."""


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM the process group (fio prints its partial results then), SIGKILL after a grace period.

    Descendants that left the group (fio's job processes call setsid) are found through /proc first
    and get the same signals, so a stopped tool leaves nothing running.
    """
    strays = [p for p in descendants(proc.pid)]
    for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        for pid in strays:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if not any(_alive(p) for p in strays):
            return


def descendants(root: int) -> list[int]:
    """Every process below root (by parent pid in /proc), at this moment."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


class _Pump:
    """Reads a command's two pipes into their capped outputs from one thread, so neither pipe fills up."""

    def __init__(self, proc: subprocess.Popen, out: CappedOutput, err: CappedOutput):
        if proc.stdout is None or proc.stderr is None:
            raise ValueError("a pumped command needs both pipes (stdout=PIPE, stderr=PIPE)")
        self._sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
        self._files = [proc.stdout, proc.stderr]
        self._lock = threading.Lock()
        self._detached = False
        self._thread = threading.Thread(target=self._loop, name="fsbench-output", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        open_fds = list(self._sinks)
        try:
            while open_fds:
                ready, _, _ = select.select(open_fds, [], [], 0.5)
                for fd in ready:
                    data = os.read(fd, CHUNK)
                    if not data:
                        open_fds.remove(fd)
                        continue
                    with self._lock:
                        if not self._detached:
                            self._sinks[fd].write(data)
        finally:
            for fh in self._files:
                if fh is not None:
                    fh.close()

    def finish(self, grace_s: float) -> None:
        """Wait for both pipes' end; after grace_s a background child holds them: its output is dropped.

        (Reading on without keeping it, so such a child never blocks on a full pipe nor dies of SIGPIPE.)
        """
        self._thread.join(grace_s)
        with self._lock:
            self._detached = True


class LocalTransports:
    """The `local` transport plug-in: this machine, under any number of host names."""

    name = "local"

    def make_all(self, hosts: Sequence[HostEntry], inventory: dict[str, Any]) -> dict[str, Transport]:
        """A LocalTransport for each host."""
        return {h.name: LocalTransport(h.name) for h in hosts}


PLUGIN: TransportKind = LocalTransports()
