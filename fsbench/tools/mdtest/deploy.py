"""Putting mdtest on a host: this machine's build where the platforms match, else built there from IOR.

A build runs where OS, architecture and MPI are those of this machine (the controller); elsewhere
IOR's release tarball is uploaded with `build-ior.sh` and compiled on the host, its compiler and MPI
packages installed first through the host's package manager when `deploy.install` allows it.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shlex
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.host import packages as hostpkg

BUILD_SCRIPT = Path(__file__).with_name("build-ior.sh")
#: where install.sh keeps the tarball it built from
INSTALLED_SOURCE = Path("/usr/local/share/fsbench/ior.tar.gz")
UPSTREAM = "https://github.com/hpc/ior/releases/download/4.0.0/ior-4.0.0.tar.gz"
METHODS = ("auto", "upload", "build")
_HAS_MPICC = ("command -v make >/dev/null && command -v cc >/dev/null && { command -v mpicc >/dev/null || "
              "ls /usr/lib64/openmpi/bin/mpicc /usr/lib/openmpi/bin/mpicc /usr/lib64/mpi/gcc/openmpi4/bin/mpicc "
              "2>/dev/null | grep -q .; }")


def destination(binary: str) -> str:
    """Where mdtest goes on a host: the workload's `binary` when it is a path, else /usr/local/bin/NAME."""
    return binary if "/" in binary else posixpath.join("/usr/local/bin", binary)


def ior_source(configured: str = "") -> str:
    """The IOR tarball to build from: deploy's setting, FSBENCH_IOR_SOURCE, install.sh's copy, upstream."""
    for candidate in (configured, os.environ.get("FSBENCH_IOR_SOURCE", "")):
        if candidate:
            return candidate
    return str(INSTALLED_SOURCE) if INSTALLED_SOURCE.exists() else UPSTREAM


def local_tarball(source: str, cache: Path) -> Path:
    """A local file for a path or URL (downloads go to cache, once per URL)."""
    if not source.startswith(("http://", "https://")):
        path = Path(source).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"the IOR source {source} does not exist")
        return path
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"ior-{hashlib.sha256(source.encode()).hexdigest()[:12]}.tar.gz"
    if not target.exists():
        import urllib.request  # here: with http and ssl a fifth of what validating a scenario imports

        part = target.with_suffix(".part")
        with urllib.request.urlopen(source, timeout=60) as resp, part.open("wb") as fh:  # noqa: S310 - user's URL
            while chunk := resp.read(1 << 20):
                fh.write(chunk)
        part.rename(target)
    return target


def provide(t: Transport, controller: Transport, binary: str, *, method: str = "auto", install: bool = False,
            source: str = "", cache: Path = Path.home() / ".cache" / "fsbench") -> str:
    """Put mdtest at destination(binary) on the host; returns what was done (or why it could not be)."""
    dest = destination(binary)
    host = hostpkg.platform(t)
    steps: list[str] = []
    if not host.mpi:  # mdtest is an MPI program: the runtime is needed whichever way it arrives
        ok, what = hostpkg.install(t, "mpi", install)
        steps.append(what)
        if not ok:
            return "; ".join(steps)
        host = hostpkg.platform(t)
    if method in ("auto", "upload"):
        here = hostpkg.platform(controller)
        found = controller.run(["sh", "-c", "command -v mdtest"], timeout=30)
        built = (found.extra.get("stdout", "") or "").strip()
        if found.ok and built and here == host:
            hostpkg.upload_tree(t, Path(os.path.realpath(built)), dest)
            return "; ".join(steps + [f"uploaded this machine's {built} to {dest} (same {host.describe()})"])
        if method == "upload":
            reason = "this machine has no mdtest" if not (found.ok and built) else \
                f"the platforms differ (here: {here.describe()}; there: {host.describe()})"
            return "; ".join(steps + [f"cannot upload: {reason}; use method build"])
    return "; ".join(steps + [_build(t, dest, install, source, cache)])


def _build(t: Transport, dest: str, install: bool, source: str, cache: Path) -> str:
    if not hostpkg.succeeds(t, _HAS_MPICC).ok:
        ok, what = hostpkg.install(t, "mpi-build", install)
        if not ok:
            return f"cannot build mdtest there: {what}"
    chosen = ior_source(source)
    try:
        tarball = local_tarball(chosen, cache)
    except (OSError, ValueError) as exc:
        return (f"cannot build mdtest there: {exc}; give an IOR release tarball with --ior-source or "
                "FSBENCH_IOR_SOURCE")
    tmp = hostpkg.remote_tempdir(t)
    try:
        t.put_file(tarball, f"{tmp}/ior.tar.gz")
        t.put_file(BUILD_SCRIPT, f"{tmp}/build-ior.sh", mode=0o755)
        own_prefix = dest.endswith("/bin/mdtest")
        prefix = dest[: -len("/bin/mdtest")] or "/" if own_prefix else f"{tmp}/prefix"
        r = t.run(["sh", f"{tmp}/build-ior.sh", f"{tmp}/ior.tar.gz", prefix], timeout=1800)
        if not r.ok:
            return f"building IOR from {chosen} failed {r.describe()}"
        if not own_prefix:
            t.makedirs(posixpath.dirname(dest) or "/")
            r = t.run(["install", "-m", "755", f"{prefix}/bin/mdtest", dest], timeout=60)
            if not r.ok:
                return f"IOR built, but copying mdtest to {dest} failed {r.describe()}"
    finally:
        t.run(["rm", "-rf", tmp], timeout=120)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    return f"built IOR there from {chosen} (sha256 {digest[:16]}...), mdtest at {shlex.quote(dest)}"
