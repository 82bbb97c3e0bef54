"""The command half of SSHTransport: exec channels, output streaming, stopping the remote process group."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsbench.api.transport import tail
from fsbench.core.errors import CommandResult
from fsbench.transport import remote
from fsbench.transport.deadlines import DEADLINES
from fsbench.transport.errors import ConnectError, TransferError, TransportError

if TYPE_CHECKING:
    from fsbench.core.inventory import HostSpec
    from fsbench.transport.ssh_settings import Resolved

log = logging.getLogger("fsbench.transport.ssh")
GRACE_S = 5.0  # as the local transport: TERM, then KILL this long after


class SSHCommands:
    """Mixed into SSHTransport, which provides connection(), settings, spec, timeouts and net_errors()."""

    if TYPE_CHECKING:
        host: str
        spec: HostSpec
        connect_timeout: float
        op_timeout: float
        dead: str | None
        marker: dict[str, str]
        output_cap: int
        base_made: bool  # remote_base made by this transport (fsbench.transport.ssh_files)

        @property
        def remote_base(self) -> str: ...
        def put_text(self, path: str, text: str) -> None: ...

        def raise_if_dead(self) -> None: ...
        @property
        def settings(self) -> Resolved: ...
        def connection(self) -> Any: ...
        def net_errors(self) -> tuple[type[BaseException], ...]: ...

    def run(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
            env: dict[str, str] | None = None, stdout_path: Path | None = None,
            stderr_path: Path | None = None, cancel: threading.Event | None = None) -> CommandResult:
        """Run argv to completion, timeout or cancel; a failing command is a result, a dead host raises."""
        marker = self.marker
        if env:
            # values (secrets among them) never go on the remote command line, where `ps` shows them: they go
            # into a file in the private (0700) work folder, which the command reads and removes first
            argv = self._env_file_argv(env, argv)
        return self.execute(argv, cwd=cwd, timeout=timeout, env=marker or None,
                            stdout_path=stdout_path, stderr_path=stderr_path, cancel=cancel, sudo=self.spec.sudo)

    def _env_file_argv(self, env: dict[str, str], argv: list[str]) -> list[str]:
        import shlex
        import uuid

        base = self.remote_base
        path = f"{base}/env-{uuid.uuid4().hex}"
        text = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        # the folder is made once per transport, not before every command with secrets (a round trip per host
        # and per case for fio's servers); when it went meanwhile (a host that rebooted), it is made again
        if not self.base_made:
            self._make_base(base)
        try:
            self.put_text(path, text)
        except TransferError:
            self._make_base(base)
            self.put_text(path, text)
        return ["sh", "-c", '. "$0" && rm -f -- "$0" && exec "$@"', path, *argv]

    def _make_base(self, base: str) -> None:
        mkdir = self.execute(["mkdir", "-p", "-m", "700", "--", base], timeout=self.op_timeout, sudo=False)
        if not mkdir.ok:
            from fsbench.core.errors import CommandFailed

            raise CommandFailed(mkdir, f"making {base}")
        self.base_made = True

    def execute(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
                env: dict[str, str] | None = None, stdout_path: Path | None = None,
                stderr_path: Path | None = None, cancel: threading.Event | None = None,
                sudo: bool = False) -> CommandResult:
        """run(), with sudo chosen per call (the work directory belongs to the login user, for SFTP)."""
        start = time.monotonic()
        t = self.connection()
        log.debug("%s: running %s%s", self.host, "sudo " if sudo else "", argv)
        cap = self.output_cap
        out = remote.Sink(stdout_path, keep=stdout_path is None, cap=cap, name="stdout")
        err = remote.PgidFilter(remote.Sink(stderr_path, keep=False, cap=cap, name="stderr"))
        status, outcome, note, lost = None, "exit", "", ""
        try:
            chan = self.open_exec(t, remote.command_line(argv, cwd=cwd, env=env, sudo=sudo))
        except TransportError as exc:
            chan, outcome, note, lost = None, "lost", str(exc), exc.reason
        try:
            if chan is not None:
                outcome = remote.pump(chan, out, err, timeout=timeout, cancel=cancel, alive=t.is_active)
                if outcome in ("timeout", "cancel"):
                    self._stop(t, chan, out, err, sudo)
                if chan.status_event.is_set() and chan.exit_status >= 0:
                    status = chan.exit_status
                elif outcome == "lost" and self.dead:
                    lost = self.dead
                    note = (f"fsbench: {self.host} ({self.settings.where}) {self.dead} while the "
                            "command ran; its exit status is unknown")
                elif outcome == "lost":
                    lost = "the connection was lost"
                    note = (f"fsbench: the connection to {self.host} ({self.settings.where}) was lost while "
                            "the command ran; its exit status is unknown")
                elif outcome == "exit":  # (a stopped command under sudo ends this way too: no note then)
                    note = "fsbench: the command ended without an exit status (killed by a signal?)"
        finally:
            if chan is not None:
                chan.close()
            out.close()
            err.close()
        return command_result(self.host, argv, status, outcome, out, err, note=note,
                              lost=f"{self.settings.where}: {lost}" if lost else "", start=start,
                              keep_stdout=stdout_path is None)

    def open_exec(self, t, line: str):
        """A channel running line; exec itself has no timeout in paramiko, so a watchdog closes it."""
        import paramiko

        try:
            chan = t.open_session(timeout=self.connect_timeout)
        except self.net_errors() as exc:
            self.raise_if_dead()  # the heartbeat found the host frozen meanwhile: that is the reason
            if isinstance(exc, paramiko.ChannelException):  # the server said no: too many sessions at once
                raise ConnectError(self.host, self.settings.where, f"the server refused a session channel: {exc}",
                                   "the server's MaxSessions may be below the number of parallel commands") from None
            raise ConnectError(self.host, self.settings.where, f"cannot open a session channel: {exc}",
                               "is the host overloaded or unreachable?") from None
        watchdog = DEADLINES.call_later(self.connect_timeout, chan.close)
        try:
            chan.exec_command(line)  # no shutdown_write(): see remote.command_line for stdin
        except self.net_errors() as exc:
            chan.close()
            raise ConnectError(self.host, self.settings.where, f"cannot start the command: {exc}") from None
        finally:
            watchdog.cancel()
        return chan

    def _stop(self, t, chan, out: remote.Sink, err: remote.PgidFilter, sudo: bool) -> None:
        """TERM the remote process group (tools print partial results then), KILL after the grace period."""
        for sig in ("TERM", "KILL"):
            if err.pgid is None or not t.is_active():
                return
            try:
                killer = self.open_exec(t, remote.kill_line(err.pgid, sig, sudo=sudo))
            except TransportError as exc:
                log.warning("%s: cannot signal process group %s: %s", self.host, err.pgid, exc)
                return
            killer.status_event.wait(self.op_timeout)
            killer.close()
            if remote.pump(chan, out, err, timeout=GRACE_S, cancel=None, alive=t.is_active) != "timeout":
                return


def command_result(host: str, argv: list[str], status: int | None, outcome: str, out: remote.Sink,
                   err: remote.PgidFilter, *, note: str, lost: str, start: float, keep_stdout: bool) -> CommandResult:
    """One remote command's result from its closed output streams, however it reached the host (a channel
    of its own, or a relay): the status as subprocess gives it, the tails, why the host was lost."""
    if err.signalled and status is not None:
        status = -(status & 0x7F)  # killed by a signal: negative, as subprocess (and LocalTransport) says
    err_tail = tail(err.sink.tail())
    if note:
        err_tail = f"{err_tail}{'' if not err_tail or err_tail.endswith(chr(10)) else chr(10)}{note}"
    result = CommandResult(host, list(argv), status, tail(out.tail()), err_tail, time.monotonic() - start,
                           outcome == "timeout", outcome == "cancel")
    if keep_stdout:
        result.extra["stdout"] = out.data().decode(errors="replace")
    if note:
        result.extra["error"] = note
    if lost:  # the host, not the command, failed: a case tells its reader which host it lost, and how
        result.extra["lost"] = lost
    capped = [n for n in (out.note(), err.sink.note()) if n]
    if capped:
        result.extra["capped"] = capped
    return result
