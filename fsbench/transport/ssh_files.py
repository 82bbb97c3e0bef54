"""Files and folders on an SSH host: SFTP for content, argv commands (sudo-aware) for folders."""

from __future__ import annotations

import logging
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsbench.core.errors import CommandFailed
from fsbench.transport.errors import TransferError

if TYPE_CHECKING:
    from fsbench.core.errors import CommandResult
    from fsbench.transport.ssh_settings import Resolved

log = logging.getLogger("fsbench.transport.ssh")
# the base folder sits in a shared /tmp: create it private and refuse a symlink planted there
_WORKDIR_SCRIPT = 'mkdir -p -m 700 -- "$1" && test ! -L "$1" && rm -rf -- "$2" && mkdir -p -- "$2"'


class SSHFileOps:
    """The file half of SSHTransport; needs connection(), run(), new_sftp() and net_errors() from it."""

    if TYPE_CHECKING:
        host: str
        op_timeout: float

        @property
        def settings(self) -> Resolved: ...
        @property
        def remote_base(self) -> str: ...
        def connection(self) -> Any: ...
        def new_sftp(self, t: Any) -> Any: ...
        def net_errors(self) -> tuple[type[BaseException], ...]: ...
        def run(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
                env: dict[str, str] | None = None, stdout_path: Path | None = None,
                stderr_path: Path | None = None, cancel: threading.Event | None = None) -> CommandResult: ...
        def execute(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
                    env: dict[str, str] | None = None, stdout_path: Path | None = None,
                    stderr_path: Path | None = None, cancel: threading.Event | None = None,
                    sudo: bool = False) -> CommandResult: ...

    def __init__(self) -> None:
        self._sftp: Any = None
        self._sftp_lock = threading.Lock()
        self.base_made = False  # remote_base, private (0700), made by this transport

    def workdir(self, raw_dir: Path, name: str) -> str:
        """A fresh, empty folder for one case under remote_base: <base>/<name> (<run>/<case>/<host>)."""
        raw_dir.mkdir(parents=True, exist_ok=True)  # like the local transport: the runner writes there next
        path = f"{self.remote_base}/{name}"
        # as the login user even on sudo hosts: put_text and fetch (SFTP) must be able to write and read it
        result = self.execute(["sh", "-c", _WORKDIR_SCRIPT, "fsbench-workdir", self.remote_base, path],
                              timeout=self.op_timeout, sudo=False)
        if not result.ok:
            raise CommandFailed(result, f"making the work directory {path}")
        self.base_made = True
        return path

    def put_text(self, path: str, text: str) -> None:
        """Write a text file over SFTP (as the login user)."""
        data = text.encode()
        with self._sftp_lock:
            sftp = self._sftp_client()
            try:
                with sftp.open(path, "wb") as fh:
                    fh.write(data)
            except self.net_errors() as exc:
                raise TransferError(self.host, self.settings.where, f"cannot write {path}: {exc}",
                                    f"check that its folder exists and {self.settings.user} may write there") from None

    def put_file(self, local: Path, path: str, mode: int | None = None) -> None:
        """Upload a local file over SFTP (binary safe), optionally setting its mode."""
        with self._sftp_lock:
            sftp = self._sftp_client()
            try:
                sftp.put(str(local), path)
                if mode is not None:
                    sftp.chmod(path, mode)
            except self.net_errors() as exc:
                raise TransferError(self.host, self.settings.where, f"cannot upload {local} to {path}: {exc}",
                                    f"check that its folder exists and {self.settings.user} may write there") from None

    def fetch(self, path: str, local: Path) -> bool:
        """Copy a remote file, or a folder with everything below it, to local; False when it does not exist."""
        with self._sftp_lock:
            sftp = self._sftp_client()
            try:
                st = sftp.stat(path)
            except FileNotFoundError:
                return False
            except self.net_errors() as exc:
                raise TransferError(self.host, self.settings.where, f"cannot read {path}: {exc}") from None
            if stat.S_ISDIR(st.st_mode or 0):
                self._fetch_tree(sftp, path, local)
                return True
            local.parent.mkdir(parents=True, exist_ok=True)
            try:
                sftp.get(path, str(local))
            except self.net_errors() as exc:
                raise TransferError(self.host, self.settings.where, f"cannot fetch {path}: {exc}") from None
        return True

    def _fetch_tree(self, sftp, path: str, local: Path) -> None:
        """A remote folder, recursively (symlinks are not followed out of it)."""
        local.mkdir(parents=True, exist_ok=True)
        try:
            entries = sftp.listdir_attr(path)
        except self.net_errors() as exc:
            raise TransferError(self.host, self.settings.where, f"cannot list {path}: {exc}") from None
        for entry in entries:
            remote, mode = f"{path}/{entry.filename}", entry.st_mode or 0
            if stat.S_ISDIR(mode):
                self._fetch_tree(sftp, remote, local / entry.filename)
            elif stat.S_ISREG(mode):
                try:
                    sftp.get(remote, str(local / entry.filename))
                except self.net_errors() as exc:
                    raise TransferError(self.host, self.settings.where, f"cannot fetch {remote}: {exc}") from None

    def makedirs(self, path: str) -> None:
        """mkdir -p on the host."""
        result = self.run(["mkdir", "-p", "--", path], timeout=self.op_timeout)
        if not result.ok:
            raise CommandFailed(result, f"making {path}")

    def remove_tree(self, path: str) -> None:
        """rm -rf on the host; a failure is logged, not raised, as the local transport ignores it."""
        if not path.strip("/"):
            raise ValueError(f"refusing to remove {path!r} on {self.host}")
        result = self.run(["rm", "-rf", "--", path], timeout=self.op_timeout)
        if not result.ok:
            log.warning("could not remove %s %s", path, result.describe())

    def is_dir(self, path: str) -> bool:
        """An existing directory on the host?"""
        return self.run(["test", "-d", path], timeout=self.op_timeout).exit_status == 0

    def _sftp_client(self):
        t = self.connection()
        if self._sftp is None or self._sftp.get_channel().get_transport() is not t:
            self.drop_sftp()
            self._sftp = self.new_sftp(t)
        return self._sftp

    def drop_sftp(self) -> None:
        """Close the SFTP session, if any."""
        sftp, self._sftp = self._sftp, None
        if sftp is not None:
            try:
                sftp.close()
            except self.net_errors():
                pass  # the connection is going away anyway
