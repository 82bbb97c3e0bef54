"""Putting metabench on a host: this machine's build where OS and architecture match, else compiled there.

metabench is one C file (`metabench.c` beside this module) built by `build.sh` with the host's C
compiler; `fsbench deploy` installs gcc and the C library headers through the host's package manager
first when `deploy.install` allows it. An uploaded build must be of this source's version, so a stale
binary on this machine is never copied to hosts.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.host import packages as hostpkg

HERE = Path(__file__).parent
SOURCE = HERE / "metabench.c"
BUILD_SCRIPT = HERE / "build.sh"
METHODS = ("auto", "upload", "build")
_HAS_CC = "{ command -v cc || command -v gcc; } >/dev/null && printf '#include <stdio.h>\\n' | cc -E - >/dev/null 2>&1"


def source_version() -> str:
    """The version the source in this repository builds (`metabench X.Y.Z`)."""
    found = re.search(r'^#define VERSION "([^"]+)"', SOURCE.read_text(), re.M)
    return f"metabench {found.group(1)}" if found else "metabench ?"


def destination(binary: str) -> str:
    """Where metabench goes on a host: the workload's `binary` when it is a path, else /usr/local/bin/NAME."""
    return binary if "/" in binary else posixpath.join("/usr/local/bin", binary)


def provide(t: Transport, controller: Transport, binary: str, *, method: str = "auto", install: bool = False) -> str:
    """Put metabench at destination(binary) on the host; returns what was done (or why it could not be)."""
    dest = destination(binary)
    if method in ("auto", "upload"):
        found = controller.run(["sh", "-c", "command -v metabench && metabench --version"], timeout=30)
        lines = (found.extra.get("stdout", "") or "").strip().splitlines()
        here, there = hostpkg.platform(controller), hostpkg.platform(t)
        same = (here.os, here.arch) == (there.os, there.arch)
        have = found.ok and len(lines) == 2 and lines[1] == source_version()
        if have and same:
            hostpkg.upload_tree(t, Path(os.path.realpath(lines[0])), dest)
            return f"uploaded this machine's {lines[0]} to {dest} (same {there.os}, {there.arch})"
        if method == "upload":
            reason = (f"this machine has no {source_version()}" if not have else
                      f"the platforms differ (here: {here.os}, {here.arch}; there: {there.os}, {there.arch})")
            return f"cannot upload: {reason}; use method build"
    return _build(t, dest, install)


def _build(t: Transport, dest: str, install: bool) -> str:
    steps = []
    if not hostpkg.succeeds(t, _HAS_CC).ok:
        ok, what = hostpkg.install(t, "c-build", install)
        if not ok:
            return f"cannot build metabench there: {what}"
        steps.append(what)
    tmp = hostpkg.remote_tempdir(t)
    try:
        t.put_file(SOURCE, f"{tmp}/metabench.c")
        t.put_file(BUILD_SCRIPT, f"{tmp}/build.sh", mode=0o755)
        r = t.run(["sh", f"{tmp}/build.sh", f"{tmp}/metabench.c", dest], timeout=600)
        if not r.ok:
            return "; ".join(steps + [f"building metabench failed {r.describe()}"])
    finally:
        t.run(["rm", "-rf", tmp], timeout=120)
    return "; ".join(steps + [f"built {source_version()} there from its source, at {shlex.quote(dest)}"])
