"""`fsbench deploy`: put the tools a scenario needs on its hosts, then check they are there.

A missing tool is uploaded when the scenario says where from (`deploy.upload`, e.g. an mdtest build
or a vdbench distribution), or installed with the host's package manager when `deploy.install` is
true; every tool is checked again afterwards. The package managers: apt-get, dnf, zypper.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from fsbench.errors import FsbenchError
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.shell import sh
from fsbench.tools import get_tool
from fsbench.transport.base import Transport

#: package names per tool and package manager where the distributions ship them
PACKAGES = {"fio": {"apt-get": "fio", "dnf": "fio", "zypper": "fio"}}
INSTALL = {
    "apt-get": ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "--no-install-recommends"],
    "dnf": ["dnf", "install", "-y"],
    "zypper": ["zypper", "--non-interactive", "install"],
}
DETECT = "for m in apt-get dnf zypper; do command -v $m >/dev/null 2>&1 && { echo $m; exit 0; }; done; exit 1"


@dataclass
class DeployRow:
    """One tool on one host: found before, what was done, found after."""

    host: str
    tool: str
    before: str
    action: str
    after: str

    @property
    def ok(self) -> bool:
        return self.after != "missing"


def install_argv(manager: str, package: str) -> list[str]:
    """The install command of a package manager."""
    return [*INSTALL[manager], package]


def _present(t: Transport, argv: list[str]) -> str:
    r = t.run(argv, timeout=60)
    out = (r.extra.get("stdout", "") or "").strip().splitlines()
    return (out[0] if out else "present") if r.ok else "missing"


def _upload(t: Transport, source: Path, dest: str) -> None:
    if source.is_dir():
        for root, _dirs, files in os.walk(source):
            rel = os.path.relpath(root, source)
            remote = posixpath.normpath(posixpath.join(dest, rel))
            t.makedirs(remote)
            for f in files:
                local = Path(root) / f
                t.put_file(local, posixpath.join(remote, f), mode=local.stat().st_mode & 0o777)
    else:
        t.makedirs(posixpath.dirname(dest) or "/")
        t.put_file(source, dest, mode=0o755)


def deploy(sc: Scenario, cases: list[Case], transports: dict[str, Transport]) -> list[DeployRow]:
    """Check, upload or install, check again: one row per (host, tool)."""
    rows = []
    needs: dict[tuple[str, str], list[str]] = {}
    for c in cases:
        for h in c.hosts:
            needs.setdefault((h, c.tool), get_tool(c.tool).version_argv(c.options))
    for (host, tool), argv in needs.items():
        t = transports[host]
        try:
            before = _present(t, argv)
            action = "none"
            if before == "missing":
                action = _provide(sc, t, tool)
            after = _present(t, argv) if action != "none" else before
        except FsbenchError as exc:
            before, action, after = "?", f"failed: {exc}", "missing"
        rows.append(DeployRow(host, tool, before, action, after))
    return rows


def _provide(sc: Scenario, t: Transport, tool: str) -> str:
    up = sc.deploy.upload.get(tool)
    if up:
        source = Path(up["from"])
        if not source.exists():
            return f"cannot upload: {source} does not exist"
        _upload(t, source, up["to"])
        return f"uploaded {source} to {up['to']}"
    if not sc.deploy.install:
        return "not installed: set deploy.install: true or give deploy.upload for it"
    r = t.run(sh(DETECT), timeout=30)
    manager = (r.extra.get("stdout", "") or "").strip()
    if not r.ok or manager not in INSTALL:
        return "no apt-get, dnf or zypper there: give deploy.upload for it"
    package = sc.deploy.packages.get(tool) or PACKAGES.get(tool, {}).get(manager)
    if not package:
        return f"no {manager} package known for {tool}: set deploy.packages.{tool} or deploy.upload.{tool}"
    r = t.run(install_argv(manager, package), timeout=900)
    return f"{manager} install {package}" + ("" if r.ok else f" failed {r.describe()}")
