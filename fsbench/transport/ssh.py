"""SSH transport: one paramiko connection per host, opened on first use and reused for the whole run.

This is fsbench's only paramiko importer, and it imports paramiko lazily so `import fsbench.transport`
stays cheap. Host keys are checked against known_hosts (never trusted on first use); commands run in
their own remote process group so a timeout or cancel stops them (see fsbench.transport.remote).
File operations (put_text, fetch) use SFTP as the login user; commands use `sudo -n` where the spec says.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Mapping
from pathlib import Path

from fsbench.core.inventory import HostSpec
from fsbench.transport import heartbeat, hostkeys
from fsbench.transport.capture import DEFAULT_CAP
from fsbench.transport.deadlines import DEADLINES
from fsbench.transport.errors import AuthError, ConnectError
from fsbench.transport.ssh_exec import SSHCommands
from fsbench.transport.ssh_files import SSHFileOps
from fsbench.transport.ssh_settings import (
    DEFAULT_KNOWN_HOSTS,
    DEFAULT_SSH_CONFIG,
    Resolved,
    jump_spec,
    resolve,
)

log = logging.getLogger(__name__)


class _UnknownHostKey(Exception):
    def __init__(self, key: hostkeys.HostKey):
        self.key = key


def net_errors() -> tuple[type[BaseException], ...]:
    """What paramiko and sockets raise when a connection or channel fails."""
    import paramiko

    return (paramiko.SSHException, OSError, EOFError)


class SSHTransport(SSHCommands, SSHFileOps):
    """Runs commands and moves files on one host over SSH; thread-safe, one TCP connection."""

    net_errors = staticmethod(net_errors)

    def __init__(self, host: HostSpec, *, jump: SSHTransport | None = None,
                 ssh_config: Path | str | None = DEFAULT_SSH_CONFIG,
                 user_known_hosts: Path | str | None = DEFAULT_KNOWN_HOSTS, remote_base: str | None = None,
                 connect_timeout: float = 30.0, op_timeout: float = 60.0, allow_agent: bool = True,
                 own_jump: bool = False, keepalive_s: float = heartbeat.INTERVAL_S,
                 dead_after_s: float = heartbeat.TIMEOUT_S):
        self.spec, self.host = host, host.name
        self._jump, self._own_jump = jump, own_jump  # own_jump: close() closes the jump connection too
        self._ssh_config = Path(ssh_config) if ssh_config else None
        self._user_known_hosts = Path(user_known_hosts) if user_known_hosts else None
        self._remote_base = remote_base or host.remote_base
        self.connect_timeout, self.op_timeout, self.allow_agent = connect_timeout, op_timeout, allow_agent
        self._lock = threading.RLock()
        self._client = None
        self._settings: Resolved | None = None
        self.connects = 0  # TCP connections opened so far: 1 for a whole run unless the link dropped
        self.marker: dict[str, str] = {}  # FSBENCH_RUN=<run id> in every command's environment
        self.keepalive_s, self.dead_after_s = keepalive_s, dead_after_s
        self.output_cap = DEFAULT_CAP  # bytes kept per output stream of one command (settings.output_cap)
        #: why the host is given up for the rest of this transport's life (it stopped answering), else None
        self.dead: str | None = None
        self._heartbeat: heartbeat.Heartbeat | None = None
        super().__init__()

    def __repr__(self) -> str:
        state = "connected" if self._client is not None else "not connected"
        return f"SSHTransport({self.host!r}, {self.spec.target!r}, {state})"

    @property
    def settings(self) -> Resolved:
        """Address, port, user, keys and known_hosts after ~/.ssh/config is applied."""
        if self._settings is None:
            self._settings = resolve(self.spec, self._config_lookup(), self._user_known_hosts)
        return self._settings

    @property
    def jump_host(self) -> SSHTransport | None:
        """The transport this one tunnels through, if any (set once connected through ProxyJump)."""
        return self._jump

    @property
    def remote_base(self) -> str:
        """The folder under which per-case work directories are made."""
        return self._remote_base or f"/tmp/fsbench-{self.settings.user}"

    def mark(self, marker: Mapping[str, str]) -> None:
        """Every command from now on carries these variables (the run's marker)."""
        self.marker = dict(marker)

    def cap_output(self, cap: int) -> None:
        """Keep at most cap bytes of each output stream of one command."""
        self.output_cap = cap

    def connection(self):
        """The open paramiko Transport, connecting on first use (or after the link dropped).

        A host found dead raises at once: a frozen sshd still completes TCP handshakes, so every new
        connection would wait its full banner timeout again.
        """
        with self._lock:
            self.raise_if_dead()
            t = self._client.get_transport() if self._client is not None else None
            if t is None or not t.is_active():
                self._drop()
                client = self._connect()
                self._client = client
                self.connects += 1
                t = client.get_transport()
                self._heartbeat = heartbeat.Heartbeat(t, self._declare_dead, interval_s=self.keepalive_s,
                                                      timeout_s=self.dead_after_s, name=self.host)
                self._heartbeat.start()
            return t

    def raise_if_dead(self) -> None:
        """ConnectError with the reason when the host stopped answering earlier in this run."""
        if self.dead is not None:
            raise ConnectError(self.host, self.settings.where, self.dead,
                               "is the host frozen, overloaded or cut off? fsbench gave up on it for this run; "
                               "once it answers again, the next fsbench run removes what this one left there")

    def _declare_dead(self, reason: str) -> None:
        if self.dead is None:
            self.dead = reason
            log.warning("%s (%s): %s", self.host, self.settings.where, reason)

    def new_sftp(self, t):
        """An SFTP session on the connection, every request bounded by op_timeout."""
        import paramiko

        try:
            chan = t.open_session(timeout=self.connect_timeout)
            watchdog = DEADLINES.call_later(self.connect_timeout, chan.close)  # invoke_subsystem has no timeout
            try:
                chan.invoke_subsystem("sftp")
            finally:
                watchdog.cancel()
            chan.settimeout(self.op_timeout)
            return paramiko.SFTPClient(chan)
        except net_errors() as exc:
            raise ConnectError(self.host, self.settings.where, f"cannot start SFTP: {exc}",
                               "the server needs `Subsystem sftp` in its sshd_config") from None

    def close(self) -> None:
        """Close SFTP and the connection (and a jump connection this transport opened itself)."""
        with self._lock:
            self._drop()
            if self._own_jump and self._jump is not None:
                self._jump.close()

    def _drop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        self.drop_sftp()
        if self._client is not None:
            self._client.close()
            self._client = None

    def _config_lookup(self) -> dict:
        if self._ssh_config is None or not self._ssh_config.expanduser().is_file():
            return {}
        import paramiko

        path = self._ssh_config.expanduser()
        try:
            return dict(paramiko.SSHConfig.from_path(str(path)).lookup(self.spec.target))
        except (OSError, ValueError, paramiko.SSHException) as exc:
            raise ConnectError(self.host, self.spec.target, f"cannot read ssh config {path}: {exc}") from None

    def _connect(self):
        import paramiko

        _quiet_paramiko()
        r = self.settings
        if self.spec.key_file and not Path(r.key_files[0]).is_file():
            raise AuthError(self.host, r.where, f"key file {r.key_files[0]} does not exist", "check key_file")
        client = paramiko.SSHClient()
        hostkeys.load_known_hosts(client.load_system_host_keys, self.host, r)
        client.set_missing_host_key_policy(_reject_unknown())
        sock = self._jump_channel(r) if self._jump is not None or r.proxy_jump else self._socket(r)
        how = f"keys {', '.join(r.key_files) or '(default files)'}, agent {'on' if self.allow_agent else 'off'}" \
              + (f", password from ${self.spec.password_env}" if self.spec.password_env else "")
        log.debug("connecting to %s (%s) as %s with %s", self.host, r.where, r.user, how)
        password = os.environ.get(self.spec.password_env) if self.spec.password_env else None
        ct = self.connect_timeout
        try:
            # paramiko takes a list of key files too (its docs); its type stubs say str only
            client.connect(r.address, r.port, username=r.user, key_filename=list(r.key_files) or None,  # type: ignore[arg-type]
                           password=password, timeout=ct, banner_timeout=ct, auth_timeout=ct, channel_timeout=ct,
                           allow_agent=self.allow_agent, look_for_keys=not r.key_files, sock=sock)
        except _UnknownHostKey as exc:
            client.close()
            raise hostkeys.unknown_key(self.host, r, exc.key) from None
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise hostkeys.changed_key(self.host, r, exc.key, exc.expected_key) from None
        except paramiko.AuthenticationException as exc:
            client.close()
            raise AuthError(self.host, r.where, f"authentication as {r.user} failed ({exc}); tried {how}",
                            f"put the public key of {r.key_files[0] if r.key_files else 'your key'} into "
                            f"~{r.user}/.ssh/authorized_keys on {r.address}") from None
        except net_errors() as exc:
            client.close()
            raise ConnectError(self.host, r.where, f"cannot connect: {exc or type(exc).__name__}",
                               "is sshd running there, and are the address and port right?") from None
        finally:
            password = None
        t = client.get_transport()
        # paramiko's own attributes, untyped and not its documented API: read by name, where it has them
        handler = getattr(t, "auth_handler", None)
        if handler is not None and getattr(handler, "password", None):
            handler.password = None  # paramiko keeps it after auth; it has no use once we are in
        return client  # (no paramiko keepalive: the heartbeat's probes, which want a reply, keep the link busy)

    def _socket(self, r: Resolved) -> socket.socket:
        try:
            sock = socket.create_connection((r.address, r.port), timeout=self.connect_timeout)
        except OSError as exc:
            raise ConnectError(self.host, r.where, f"cannot connect: {exc}",
                               "is sshd running there, and are the address and port right?") from None
        # without it each small request waits for the peer's delayed ACK: 40 ms per command instead of 4
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _jump_channel(self, r: Resolved):
        if self._jump is None:
            self._jump = SSHTransport(jump_spec(r.proxy_jump or "", self.spec), ssh_config=self._ssh_config,
                                      user_known_hosts=self._user_known_hosts, connect_timeout=self.connect_timeout,
                                      op_timeout=self.op_timeout, allow_agent=self.allow_agent)
            self._own_jump = True
        jt = self._jump.connection()
        try:
            return jt.open_channel("direct-tcpip", (r.address, r.port), ("127.0.0.1", 0),
                                   timeout=self.connect_timeout)
        except net_errors() as exc:
            raise ConnectError(self.host, r.where, f"jump host {self._jump.host} cannot reach {r.where}: {exc}",
                               "check the address as seen from the jump host") from None


def _reject_unknown():
    import paramiko

    class RejectUnknown(paramiko.MissingHostKeyPolicy):
        """Like paramiko's RejectPolicy, but hands the key on so the error can show its fingerprint."""

        def missing_host_key(self, client, hostname, key):
            raise _UnknownHostKey(key)

    return RejectUnknown()


def _quiet_paramiko() -> None:
    # paramiko logs failed connects with tracebacks; without any handler Python would print them to
    # stderr, so give it a NullHandler (records still reach handlers an application configures)
    logger = logging.getLogger("paramiko")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
