"""A real OpenSSH server on loopback addresses (127.0.0.2...) for tests and benchmarks.

sshd (started by absolute path, in the foreground, as a child of this process) listens on every
given address at one free port, with throwaway host and client keys in a folder of its own. One sshd
takes at most 16 ListenAddress lines (OpenSSH's MAX_LISTEN_SOCKS), so 32 hosts get two sshd processes
sharing the port, keys and log. Sessions
carry `FSBENCH_SSHLAB=<id>` (sshd's SetEnv), so `stop()` finds and kills every process the lab's
clients started, then the sshd processes, by pid. Works as root (sshd then needs /run/sshd).

    with sshlab() as lab:                         # 127.0.0.2-127.0.0.5
        t = lab.transport("127.0.0.3")
        t.run(["true"])
    with sshlab(addresses=loopback_addresses(32)) as lab: ...   # 127.0.0.2-127.0.0.33
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
DEFAULT_ADDRESSES = ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5")
START_TIMEOUT_S = 30.0
MAX_LISTEN = 16  # OpenSSH 9.2: "Too many listen sockets. Enlarge MAX_LISTEN_SOCKS" beyond this

CONFIG = """\
Port {port}
{listen}
HostKey {host_key}
PidFile {pid_file}
AuthorizedKeysFile {authorized_keys}
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
# clients do send a configured password (root's is locked, so it always fails): tests prove it never leaks
PasswordAuthentication yes
KbdInteractiveAuthentication no
MaxStartups 200:30:400
MaxSessions 100
MaxAuthTries 10
AllowTcpForwarding yes
UseDNS no
PrintMotd no
LogLevel INFO
Subsystem sftp internal-sftp
# one SetEnv line (sshd keeps only the first): the marker, and SHLVL=1, with which bash skips the
# ~/.bashrc it otherwise sources for every ssh command (here pyenv init: 80 ms and stderr noise each)
SetEnv FSBENCH_SSHLAB={marker} SHLVL=1
"""


def loopback_addresses(count: int, first: int = 2) -> list[str]:
    """count loopback addresses from 127.0.0.<first> on (Linux routes all of 127/8 to lo)."""
    return [f"127.0.0.{i}" for i in range(first, first + count)]


def make_key(path: Path) -> Path:
    """A new passphrase-less ed25519 key pair at path (and path.pub)."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fsbench-sshlab", "-f", str(path)],
                   check=True, timeout=30, stdin=subprocess.DEVNULL)
    return path


def write_known_hosts(path: Path, addresses: list[str], port: int, public_key: Path) -> Path:
    """A known_hosts file trusting public_key for every address at port."""
    key = " ".join(public_key.read_text().split()[:2])
    path.write_text("".join(f"[{a}]:{port} {key}\n" for a in addresses))
    return path


def free_port(addresses: list[str]) -> int:
    """A TCP port free on every address right now."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind((addresses[0], 0))
            port = probe.getsockname()[1]
        if all(_bindable(a, port) for a in addresses[1:]):
            return port
    raise RuntimeError(f"no port free on all of {addresses}")


@dataclass
class SSHLab:
    """A running sshd: where it listens, its keys, known_hosts and log."""

    root: Path
    addresses: list[str]
    port: int
    host_key: Path
    client_key: Path
    known_hosts: Path
    log: Path
    pid_files: list[Path]
    marker: str
    procs: list[subprocess.Popen]
    user: str

    def spec(self, address: str | None = None, name: str | None = None, **settings):
        """A HostSpec for one lab address (the first by default), with the lab's key and known_hosts."""
        from fsbench.core.inventory import HostSpec

        address = address or self.addresses[0]
        values = {"port": self.port, "user": self.user, "key_file": str(self.client_key),
                  "known_hosts": str(self.known_hosts), **settings}
        return HostSpec(name=name or address, address=address, **values)

    def transport(self, address: str | None = None, name: str | None = None, *, options: dict | None = None,
                  **settings):
        """An SSHTransport to a lab address that ignores the machine's ~/.ssh (config and known_hosts)."""
        from fsbench.transport.ssh import SSHTransport

        opts = {"ssh_config": None, "user_known_hosts": None, **(options or {})}
        return SSHTransport(self.spec(address, name, **settings), **opts)

    def session_pids(self) -> list[int]:
        """Processes started through this lab's sshd (they carry its marker in their environment)."""
        needle = f"FSBENCH_SSHLAB={self.marker}".encode()
        return [pid for pid in _pids() if needle in _read(f"/proc/{pid}/environ")]

    def running(self) -> bool:
        """Whether any of the lab's listening sshd processes is still alive."""
        return any(p.poll() is None for p in self.procs)

    def sshd_pids(self) -> list[int]:
        """The listening sshd processes and every process below them, deepest first."""
        below = [pid for p in self.procs for pid in reversed(_descendants(p.pid))]
        return below + [p.pid for p in self.procs if p.poll() is None]

    def accepted_logins(self) -> int:
        """How many logins sshd accepted so far (one per TCP connection)."""
        return self.log.read_text(errors="replace").count("Accepted publickey")

    def crash(self) -> None:
        """SIGKILL the sshd processes only, as a host crash would: connections drop, commands are orphaned."""
        for pid in self.sshd_pids():
            if _comm(pid) == "sshd":
                _signal(pid, signal.SIGKILL)
        for p in self.procs:
            p.wait(timeout=10)

    def stop(self) -> None:
        """Kill the sessions' processes, then the sshd processes, by pid; wait until they are gone."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            victims = set(self.session_pids()).union(*(_descendants(p.pid) for p in self.procs))
            if not victims:
                break
            for pid in victims:
                _signal(pid, signal.SIGKILL)
            time.sleep(0.05)
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)


def start_lab(root: Path, addresses: list[str] | tuple[str, ...] = DEFAULT_ADDRESSES, *,
              extra_config: str = "") -> SSHLab:
    """Start sshd on addresses with new keys under root; retries on a port taken in the meantime."""
    addresses = list(addresses)
    root.mkdir(parents=True, exist_ok=True)
    host_key, client_key = make_key(root / "hostkey"), make_key(root / "id_ed25519")
    (root / "authorized_keys").write_text(Path(f"{client_key}.pub").read_text())
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation needs it as root
    last_error = ""
    for _ in range(3):
        port = free_port(addresses)
        lab = _launch(root, addresses, port, host_key, client_key, extra_config)
        last_error = _wait_listening(lab)
        if not last_error:
            return lab
        lab.stop()
    raise RuntimeError(f"sshd did not start: {last_error}")


@contextmanager
def sshlab(root: Path | None = None, addresses: list[str] | tuple[str, ...] = DEFAULT_ADDRESSES,
           **options) -> Iterator[SSHLab]:
    """A running lab for the with-block; stopped (and its temporary folder removed) afterwards."""
    made = root is None
    folder = Path(tempfile.mkdtemp(prefix="fsbench-sshlab-")) if root is None else root
    lab = start_lab(folder, addresses, **options)
    try:
        yield lab
    finally:
        lab.stop()
        if made:
            shutil.rmtree(folder, ignore_errors=True)


def _launch(root: Path, addresses: list[str], port: int, host_key: Path, client_key: Path, extra: str) -> SSHLab:
    marker, log = uuid.uuid4().hex[:12], root / "sshd.log"
    log.write_text("")
    known = write_known_hosts(root / "known_hosts", addresses, port, Path(f"{host_key}.pub"))
    procs, pid_files = [], []
    for i in range(0, len(addresses), MAX_LISTEN):
        config, pid_file = root / f"sshd_config.{i // MAX_LISTEN}", root / f"sshd.{i // MAX_LISTEN}.pid"
        listen = "\n".join(f"ListenAddress {a}" for a in addresses[i:i + MAX_LISTEN])
        config.write_text(CONFIG.format(port=port, listen=listen, host_key=host_key, pid_file=pid_file,
                                        marker=marker, authorized_keys=root / "authorized_keys") + extra
                          + "".join(_own_tmpdir(root, a, marker) for a in addresses[i:i + MAX_LISTEN]))
        procs.append(subprocess.Popen([SSHD, "-D", "-f", str(config), "-E", str(log)], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        pid_files.append(pid_file)
    return SSHLab(root, addresses, port, host_key, client_key, known, log, pid_files, marker, procs,
                  getpass.getuser())


def _own_tmpdir(root: Path, address: str, marker: str) -> str:
    """A Match block giving sessions on address a TMPDIR of their own, as a real host has its own /tmp.

    Hosts of the lab share one kernel, hostname and /tmp: two Open MPI daemons (orted) of one job
    on two lab addresses then build the same session folder and write their hwloc topology to the
    same shared-memory file, and one of them crashes (SIGSEGV in hwloc_shmem_topology_write).
    Match blocks come last: every line after a Match belongs to it.
    """
    tmp = root / f"tmp-{address}"
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o1777)
    return (f"\nMatch LocalAddress {address}\n"
            f"    SetEnv FSBENCH_SSHLAB={marker} SHLVL=1 TMPDIR={tmp}\n")


def _wait_listening(lab: SSHLab) -> str:
    """'' once sshd listens on every address, else why not."""
    wanted = [f"Server listening on {a} port {lab.port}." for a in lab.addresses]
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        text = lab.log.read_text(errors="replace")
        if all(w in text for w in wanted):
            return ""
        if "Bind to port" in text or any(p.poll() is not None for p in lab.procs):
            return text.strip()[-2000:] or "sshd exited"
        time.sleep(0.02)
    return f"not listening after {START_TIMEOUT_S}s:\n{lab.log.read_text(errors='replace')[-2000:]}"


def _bindable(address: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((address, port))
            return True
        except OSError:
            return False


def _pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:  # gone meanwhile, or not ours to read
        return b""


def _stat(pid: int) -> tuple[str, int] | None:
    raw = _read(f"/proc/{pid}/stat").decode(errors="replace")
    if not raw:
        return None
    comm = raw[raw.find("(") + 1:raw.rfind(")")]
    fields = raw[raw.rfind(")") + 2:].split()
    return (comm, int(fields[1])) if fields[0] != "Z" else None  # zombies are already dead


def _comm(pid: int) -> str:
    st = _stat(pid)
    return st[0] if st else ""


def _descendants(root_pid: int) -> list[int]:
    """Every live process below root_pid, parents before children."""
    children: dict[int, list[int]] = {}
    for pid in _pids():
        st = _stat(pid)
        if st:
            children.setdefault(st[1], []).append(pid)
    out, todo = [], list(children.get(root_pid, []))
    while todo:
        pid = todo.pop(0)
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
