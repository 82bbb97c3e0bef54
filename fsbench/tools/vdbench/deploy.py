"""Putting vdbench on a host from the zip its user downloaded from Oracle, with a Java runtime.

vdbench is bring-your-own: Oracle's licence forbids passing it on, so fsbench never downloads or
ships it. `fsbench deploy SCENARIO --vdbench-zip vdbench50407.zip` unpacks the zip here, uploads it
to the vdbench home on each host (the folder of the workload's `binary` when that is a path, else
/opt/vdbench with a /usr/local/bin/vdbench wrapper) and installs a Java runtime where none is.
"""

from __future__ import annotations

import posixpath
import stat
import tempfile
import zipfile
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.host import packages as hostpkg

DEFAULT_HOME = "/opt/vdbench"
NOT_GIVEN = ("vdbench is bring-your-own (Oracle's licence forbids passing it on): download it from Oracle, "
             "then `fsbench deploy SCENARIO --vdbench-zip PATH/vdbench50407.zip`")


def unpack(zip_path: Path, into: Path) -> Path:
    """Extract the zip (unix modes kept); the folder that holds the `vdbench` script."""
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            name = posixpath.normpath(info.filename)
            if name.startswith(("/", "../")) or name == "..":
                raise ValueError(f"{zip_path}: entry {info.filename!r} points outside the folder")
            zf.extract(info, into)
            mode = (info.external_attr >> 16) & 0o777
            if mode and not info.is_dir():
                (into / name).chmod(mode | stat.S_IRUSR)
    scripts = sorted(into.rglob("vdbench"), key=lambda p: len(p.parts))
    scripts = [p for p in scripts if p.is_file()]
    if not scripts:
        raise ValueError(f"{zip_path} holds no `vdbench` script: is it vdbench's distribution zip?")
    script = scripts[0]
    script.chmod(script.stat().st_mode | 0o755)
    return script.parent


def home_for(binary: str, default_home: str = DEFAULT_HOME) -> tuple[str, str | None]:
    """(vdbench home, wrapper path or None) for the workload's `binary`."""
    if "/" in binary:
        return posixpath.dirname(binary) or "/", None
    return default_home, posixpath.join("/usr/local/bin", binary)


def provide(t: Transport, binary: str, zip_path: str, *, install: bool = False,
            default_home: str = DEFAULT_HOME) -> str:
    """Upload vdbench from the user's zip and make sure Java is there; what was done, or why not."""
    steps = []
    if not hostpkg.succeeds(t, "java -version >/dev/null 2>&1").ok:
        ok, what = hostpkg.install(t, "java", install)
        steps.append(what if ok else f"vdbench needs Java: {what}")
        if not ok:
            return "; ".join(steps)
    if not zip_path:
        return "; ".join(steps + [NOT_GIVEN])
    source = Path(zip_path).expanduser()
    if not source.is_file():
        return "; ".join(steps + [f"{source} does not exist (--vdbench-zip)"])
    home, wrapper = home_for(binary, default_home)
    with tempfile.TemporaryDirectory(prefix="fsbench-vdbench-") as tmp:
        try:
            folder = unpack(source, Path(tmp))
        except (zipfile.BadZipFile, ValueError) as exc:
            return "; ".join(steps + [f"cannot use {source}: {exc}"])
        count = hostpkg.upload_tree(t, folder, home)
    steps.append(f"uploaded {source.name} ({count} files) to {home}")
    if wrapper:
        t.makedirs(posixpath.dirname(wrapper))
        t.put_text(wrapper, f'#!/bin/sh\nexec {posixpath.join(home, "vdbench")} "$@"\n')
        t.run(["chmod", "755", wrapper], timeout=30)
        steps.append(f"wrapper {wrapper}")
    return "; ".join(steps)
