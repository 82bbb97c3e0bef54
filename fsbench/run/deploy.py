"""`fsbench deploy`: put the tools a scenario needs on its hosts, then check they are there.

Per (host, tool) that lacks the tool, in this order: the scenario's own `deploy.upload` for it; the
tool plug-in's own `provide` (mdtest: this machine's build where the platforms match, else IOR built
there; vdbench: the user's zip and a Java runtime); else the packages the plug-in names for the host's
package manager (apt-get, dnf, zypper) when `deploy.install` allows it. Every tool is checked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fsbench.api.tools import Provides
from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError
from fsbench.host import packages as hostpkg
from fsbench.host.packages import install_argv
from fsbench.scenario.model import Deploy, Scenario
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.transport.local import LocalTransport


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


def _present(t: Transport, argv: list[str]) -> str:
    r = t.run(argv, timeout=120)
    out = (r.extra.get("stdout", "") or "").strip().splitlines()
    return (out[0] if out else "present") if r.ok else "missing"


def deploy(sc: Scenario, cases: list[Case], transports: dict[str, Transport],
           settings: Deploy | None = None) -> list[DeployRow]:
    """Check, provide, check again: one row per (host, tool, binary)."""
    settings = settings or sc.deploy
    rows = []
    needs: dict[tuple[str, str, str], list[str]] = {}
    for c in cases:
        binary = str(c.options.get("binary", ""))
        for h in c.hosts:
            needs.setdefault((h, c.tool, binary), get_tool(c.tool).version_argv(c.options))
    controller = LocalTransport("controller")
    for (host, tool, binary), argv in needs.items():
        t = transports[host]
        try:
            before = _present(t, argv)
            action = "none"
            if before == "missing":
                action = _provide(sc, settings, t, controller, tool, binary or tool)
            after = _present(t, argv) if action != "none" else before
        except FsbenchError as exc:
            before, action, after = "?", f"failed: {exc}", "missing"
        rows.append(DeployRow(host, tool, before, action, after))
    return rows


def _provide(sc: Scenario, settings: Deploy, t: Transport, controller: Transport, tool: str, binary: str) -> str:
    up = settings.upload.get(tool)
    if up:
        source = Path(up["from"])
        if not source.exists():
            return f"cannot upload: {source} does not exist"
        hostpkg.upload_tree(t, source, up["to"])
        return f"uploaded {source} to {up['to']}"
    plugin = get_tool(tool)
    if isinstance(plugin, Provides):  # the tool's own way (mdtest: a build; vdbench: the user's zip)
        return plugin.provide(t, controller, binary, settings)
    if not settings.install:
        return "not installed: set deploy.install: true (or --install) or give deploy.upload for it"
    manager = hostpkg.package_manager(t)
    if manager is None:
        return "no apt-get, dnf or zypper there: give deploy.upload for it"
    names = [settings.packages[tool]] if tool in settings.packages else \
        plugin.packages.get(manager)
    if not names:
        return f"no {manager} package known for {tool}: set deploy.packages.{tool} or deploy.upload.{tool}"
    r = t.run(install_argv(manager, *names), timeout=1800)
    return f"{manager} install {' '.join(names)}" + ("" if r.ok else f" failed {r.describe()}")
