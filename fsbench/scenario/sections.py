"""The checkers of a scenario's parts: derived from the model's declarations and the plug-ins' own sections.

A plug-in's section (a target kind's settings, a service kind's, a tool's deploy section) is looked up when
a scenario names it, so that checking a scenario imports only the plug-ins it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from fsbench.api.registry import Registry
from fsbench.api.tools import DeclaresDeploySection, declarations
from fsbench.collectors import COLLECTORS
from fsbench.config import schema as s
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.kinds import KINDS
from fsbench.scenario.model import (
    Collector,
    Deploy,
    Host,
    Monitor,
    Report,
    Scenario,
    Service,
    Settings,
    Sweep,
    Target,
    Workload,
)
from fsbench.services import SERVICE_KINDS
from fsbench.tools import TOOLS
from fsbench.transport.registry import TRANSPORTS


def _secret(value: object, path: tuple, lm, issues: list) -> object:
    """Where a secret comes from: exactly one of an environment variable or a file."""
    checked = s.Struct({"env": s.Key(s.line_text), "file": s.Key(s.line_text)}, what="secret reference")(
        value, path, lm, issues)
    if checked is not None and bool(checked.get("env")) == bool(checked.get("file")):
        issues.append(lm.issue(path, "a secret comes from exactly one place: {env: VARIABLE} or {file: PATH}",
                               "never the value itself: the scenario is copied into the run directory"))
        return None
    return checked


def _plugin_name(registry: Registry[Any], what: str) -> s.Check:
    """A name of a registered plug-in (tool, target kind), with a suggestion for typos; only a name no
    plug-in has asks for every name (importing every plug-in)."""

    def run(value: object, path: tuple, lm: LineMap, issues: list) -> object:
        if isinstance(value, str) and value in registry:
            return value
        names = registry.names()
        import difflib

        close = difflib.get_close_matches(str(value), names, n=1)
        issues.append(lm.issue(path, f"unknown {what} {value!r}",
                               (f"did you mean {close[0]!r}? " if close else "") + f"known: {', '.join(names)}"))
        return None

    return run


def _one_of_names(registry: Registry[Any]) -> Callable[[], str]:
    """`one of NAMES`, listed only when a message shows it (listing imports every plug-in)."""
    return lambda: f"one of {', '.join(registry.names())}"


def _sections_of(registry: Registry[Any], section: Callable[[Any], object], doc: str) -> s.PluginKeys:
    """The keys named after the plug-ins of registry that have a section (section(plugin), None without),
    each plug-in imported only when a scenario has its key. doc: the key's text, {name} filled in."""

    def key(name: str) -> s.Key | None:
        found = section(registry.get(name)) if name in registry else None
        return s.Key(cast(s.Check, found), doc=doc.format(name=name)) if found is not None else None

    return s.PluginKeys(key, lambda: [p.name for p in registry if section(p) is not None])


def _deploy_section(tool: object) -> object:
    return tool.deploy_section if isinstance(tool, DeclaresDeploySection) else None


#: a target's own keys (fields and `kind`): any other key of a checked target is a target kind's section
TARGET_KEYS = frozenset(s.doc_of(Target)) | {"kind"}


def sections() -> dict[str, s.Struct]:
    """The checker of each part of a scenario, derived from the model and the plug-ins' own sections.

    A plug-in's section (a target kind's settings, a tool's deploy section) is looked up when a scenario
    names it: validating a scenario imports only the plug-ins it uses.
    """
    sweep = s.struct_of(Sweep, "sweep")
    return {
        "host": s.struct_of(Host, "host", more={"transport": s.Key(_plugin_name(TRANSPORTS, "transport"),
                                                                   doc="local, or ssh (an inventory host's default)")}),
        "service": s.struct_of(Service, "service", more={
            "kind": s.Key(_plugin_name(SERVICE_KINDS, "service kind"), doc=_one_of_names(SERVICE_KINDS))},
            plugin_keys=_sections_of(SERVICE_KINDS, lambda k: k.section, "settings of a {name} service")),
        "target": s.struct_of(Target, "target", more={"kind": s.Key(_plugin_name(KINDS, "target kind"),
                                                                     doc=_one_of_names(KINDS))},
                              plugin_keys=_sections_of(KINDS, lambda k: k.section, "settings of a {name} target")),
        "workload": s.struct_of(Workload, "workload", more={"sweep": s.Key(sweep),
                                                            "tool": s.Key(_plugin_name(TOOLS, "tool"), required=True,
                                                                          doc=_one_of_names(TOOLS))}),
        "settings": s.struct_of(Settings, "settings"),
        "monitor": s.struct_of(Monitor, "monitor settings"),
        "collector": s.struct_of(Collector, "collector", more={
            "kind": s.Key(_plugin_name(COLLECTORS, "collector kind"), doc=_one_of_names(COLLECTORS))}),
        "report": s.struct_of(Report, "report settings"),
        "deploy": s.struct_of(Deploy, "deploy settings",
                              plugin_keys=_sections_of(TOOLS, _deploy_section, "how {name} is put on hosts")),
    }


def scenario_struct() -> s.Struct:
    """The checker of a whole scenario file: model.Scenario's keys, with the sections of the plug-ins."""
    return s.struct_of(Scenario, "scenario", parts={**sections(), "secret": _secret})


@dataclass(frozen=True)
class DeployFlag:
    """A command-line flag of `fsbench deploy` that a tool declares for a key of its deploy section."""

    tool: str
    key: str
    flag: s.Flag
    choices: tuple[str, ...] = ()

    @property
    def override(self) -> str:
        """The deploy setting it overrides: `TOOL.KEY` (fsbench.campaign.deploy_tools)."""
        return f"{self.tool}.{self.key}"


def deploy_flags() -> list[DeployFlag]:
    """Every flag the tools declare on their deploy sections (`--vdbench-zip`), in tool order."""
    out = []
    for tool in TOOLS:
        section = declarations(tool).deploy_section
        for key, spec in (section.keys.items() if isinstance(section, s.Struct) else ()):
            if spec.flag is not None:
                out.append(DeployFlag(tool.name, key, spec.flag, s.choices_of(spec.check)))
    return out


def report_settings(data: dict, file: str = "scenario.yaml") -> Report:
    """The `report:` section of resolved scenario data, checked with its defaults (for `fsbench report`)."""
    issues: list[Issue] = []
    checked = sections()["report"](data.get("report") or {}, ("report",), LineMap(file), issues)
    return s.build(Report, checked or {})
