"""What a host is (OS, architecture, MPI) and how to put packages and files on it."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import CommandFailed, CommandResult
from fsbench.core.shell import sh

INSTALL = {
    "apt-get": ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"],
    "dnf": ["dnf", "install", "-y"],
    "zypper": ["zypper", "--non-interactive", "install"],
}
DETECT = "for m in apt-get dnf zypper; do command -v $m >/dev/null 2>&1 && { echo $m; exit 0; }; done; exit 1"
#: one line each: distribution and version, architecture, the MPI that mpirun belongs to
PLATFORM = ('. /etc/os-release 2>/dev/null; echo "${ID:-unknown} ${VERSION_ID:-}"; uname -m; '
            'mpirun --version 2>/dev/null | head -n 1 || true')

#: packages per purpose and package manager
PACKAGES: dict[str, dict[str, list[str]]] = {
    "mpi": {"apt-get": ["openmpi-bin"], "dnf": ["openmpi"], "zypper": ["openmpi4"]},
    "mpi-build": {"apt-get": ["gcc", "make", "libopenmpi-dev", "openmpi-bin"], "dnf": ["gcc", "make", "openmpi-devel"],
                  "zypper": ["gcc", "make", "openmpi4-devel"]},
    "c-build": {"apt-get": ["gcc", "libc6-dev"], "dnf": ["gcc", "glibc-devel"], "zypper": ["gcc", "glibc-devel"]},
    "java": {"apt-get": ["default-jre-headless"], "dnf": ["java-17-openjdk-headless"],
             "zypper": ["java-17-openjdk-headless"]},
}


@dataclass(frozen=True)
class Platform:
    """Distribution, architecture and MPI of a host: a build made on one runs on another when they match."""

    os: str
    arch: str
    mpi: str

    def describe(self) -> str:
        return f"{self.os}, {self.arch}, {self.mpi or 'no MPI'}"


def parse_platform(text: str) -> Platform:
    """The three lines of PLATFORM's output."""
    lines = [line.strip() for line in text.splitlines()] + ["", "", ""]
    return Platform(lines[0], lines[1], lines[2])


def platform(t: Transport) -> Platform:
    """The host's platform (empty fields where a command failed)."""
    r = t.run(sh(PLATFORM), timeout=30)
    return parse_platform(r.extra.get("stdout", "") if r.ok else "")


def package_manager(t: Transport) -> str | None:
    """apt-get, dnf or zypper, whichever the host has."""
    r = t.run(sh(DETECT), timeout=30)
    manager = (r.extra.get("stdout", "") or "").strip()
    return manager if r.ok and manager in INSTALL else None


def install_argv(manager: str, *packages: str) -> list[str]:
    """The install command of a package manager."""
    return [*INSTALL[manager], *packages]


def install(t: Transport, purpose: str, allowed: bool) -> tuple[bool, str]:
    """Install the packages of a purpose (PACKAGES) with the host's package manager; (ok, what happened)."""
    if not allowed:
        return False, (f"{purpose} packages are missing there and the package manager is not allowed: "
                       "set deploy.install: true (or pass --install)")
    manager = package_manager(t)
    if manager is None:
        return False, f"no apt-get, dnf or zypper there to install the {purpose} packages"
    names = PACKAGES[purpose][manager]
    r = t.run(install_argv(manager, *names), timeout=1800)
    what = f"{manager} install {' '.join(names)}"
    return r.ok, what if r.ok else f"{what} failed {r.describe()}"


def succeeds(t: Transport, script: str, timeout: float = 60) -> CommandResult:
    """Run a shell probe on the host."""
    return t.run(sh(script), timeout=timeout)


def upload_tree(t: Transport, source: Path, dest: str) -> int:
    """Copy a local file or folder to dest on the host, modes kept; the number of files."""
    if not source.is_dir():
        t.makedirs(posixpath.dirname(dest) or "/")
        t.put_file(source, dest, mode=0o755)
        return 1
    count = 0
    for root, _dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        remote = posixpath.normpath(posixpath.join(dest, rel))
        t.makedirs(remote)
        for f in files:
            local = Path(root) / f
            t.put_file(local, posixpath.join(remote, f), mode=local.stat().st_mode & 0o777)
            count += 1
    return count


def remote_tempdir(t: Transport) -> str:
    """A new private folder on the host (mktemp -d)."""
    r = t.run(["mktemp", "-d", "/tmp/fsbench-deploy.XXXXXX"], timeout=30)
    path = (r.extra.get("stdout", "") or "").strip()
    if not r.ok or not path.startswith("/tmp/fsbench-deploy."):
        raise CommandFailed(r, "making a temporary folder")
    return path
