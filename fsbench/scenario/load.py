"""Read a scenario file: YAML with lines -> variables -> schema -> cross-checks -> Scenario."""

from __future__ import annotations

import copy
import os
from pathlib import Path

from fsbench.config import schema as s
from fsbench.config.files import MAX_INPUT_BYTES, read_bytes_bounded, read_text_bounded
from fsbench.config.yamllines import MAX_BYTES, LineMap, load_yaml
from fsbench.core.errors import Issue, ScenarioError
from fsbench.core.inventory import INVENTORY_TRANSPORTS
from fsbench.core.secrets import SecretRef
from fsbench.kinds import KINDS
from fsbench.scenario.extends import apply_extends
from fsbench.scenario.literal_secrets import remember_literal_secrets
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
from fsbench.scenario.one_host import narrow_one_host_targets
from fsbench.scenario.report_checks import check_views
from fsbench.scenario.sections import TARGET_KEYS, scenario_struct
from fsbench.scenario.substitute import substitute
from fsbench.scenario.variables import parse_set, resolve_variables, scale_of_run
from fsbench.services import SERVICE_KINDS
from fsbench.tools import TOOLS


def load_scenario(path: str | Path, overrides: list[str] | dict | None = None,
                  inventory: str | Path | None = None) -> Scenario:
    """Load and fully validate a scenario file (and its inventory); raises ScenarioError listing every issue."""
    path = Path(path)
    try:  # a FIFO or /dev/zero is refused at once; one byte over the bound is enough for load_yaml to say so
        text = read_bytes_bounded(path, MAX_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        raise ScenarioError([Issue(str(path), None, "", f"cannot read the scenario: {exc.strerror}",
                                   "give the path of a scenario file (YAML)")]) from None
    return load_scenario_text(text, str(path), base_dir=path.parent, overrides=overrides, inventory=inventory)


def load_scenario_text(text: str, file: str, *, base_dir: Path = Path("."),
                       overrides: list[str] | dict | None = None, inventory: str | Path | None = None) -> Scenario:
    """Validate scenario text; `file` is only used in messages."""
    raw, lm = load_yaml(text, file)
    if not isinstance(raw, dict):
        raise ScenarioError([Issue(file, 1, "", "a scenario is a mapping with name, targets and workloads")])
    sets = overrides if isinstance(overrides, dict) else parse_set(list(overrides or []))
    values = resolve_variables(raw, lm, sets)
    struct = scenario_struct()
    data = substitute(raw, values, lm, shell=lambda key_path: s.is_shell(struct, key_path))
    data = apply_extends(data, lm)
    warnings = remember_literal_secrets(data, lm) if isinstance(data, dict) else []  # before any message
    issues: list[Issue] = []
    checked = struct(data, (), lm, issues)
    if checked is None:
        raise ScenarioError(issues)
    shape_ok = not issues
    shape_paths = {i.path for i in issues}  # a value refused by its shape is not checked again as ''
    inv_path = Path(inventory) if inventory else (base_dir / checked["inventory"] if checked.get("inventory") else None)
    hosts_inventory = _inventory(inv_path, lm, issues, inventory is not None) if inv_path else {}
    try:
        scenario = _build(checked, values, lm, base_dir, issues, hosts_inventory, inventory is not None)
        scenario.inventory_file = str(inv_path) if inv_path else ""
        cross: list[Issue] = []
        _cross_check(scenario, lm, cross)
        issues.extend(i for i in cross if i.path not in shape_paths)
        issues.extend(check_views(scenario, lm, raw.get("variables") if isinstance(raw.get("variables"), dict) else {}))
    except (TypeError, AttributeError, KeyError, ValueError):
        if shape_ok:  # only a half-valid scenario may trip the cross-checks
            raise
    if issues:
        raise ScenarioError(sorted(issues, key=lambda i: (i.line or 0, i.path)))
    resolved: dict = copy.deepcopy(data) if isinstance(data, dict) else {}  # a dict: the schema refused the rest
    resolved["variables"] = dict(values)
    scale = scale_of_run(raw, lm, values)  # the report says which scale ran and how it differs from full
    if scale is not None:
        resolved["scale_run"] = scale
    report = resolved.get("report")
    if isinstance(report, dict) and report.get("templates"):  # the run's copy must find them from anywhere
        report["templates"] = os.path.abspath(_relative(base_dir, str(report["templates"])))
    scenario.resolved = resolved
    scenario.warnings = warnings + narrow_one_host_targets(scenario, KINDS)  # e.g. JuiceFS on SQLite: one client
    return scenario


def _inventory(path: Path, lm: LineMap, issues: list[Issue], from_flag: bool) -> dict:
    from fsbench.core.inventory import load_inventory

    try:
        return load_inventory(path)
    except ScenarioError as exc:
        for i in exc.issues:
            if i.line is not None or i.file != str(path):
                issues.append(i)
            elif from_flag:  # the file itself is unreadable: say who named it
                issues.append(Issue(i.file, None, "--inventory", i.message, i.hint))
            else:
                issues.append(lm.issue(("inventory",), i.message.replace("the inventory:", f"the inventory {path}:"),
                                       i.hint))
        return {}


def _build(d: dict, values: dict, lm: LineMap, base_dir: Path, issues: list[Issue], inventory: dict,
           explicit_inventory: bool = False) -> Scenario:
    declared = d["hosts"] or ({n: {} for n in inventory} if inventory else {})
    if explicit_inventory and inventory and any(n not in inventory for n in declared):
        # an inventory given on the command line for a scenario whose hosts it does not know (a local
        # one) places the scenario on the inventory's machines; where it knows every declared host it
        # only says how to reach them
        declared = {n: d["hosts"].get(n) or {} for n in inventory}
    hosts = {}
    for n, h in declared.items():
        h = h or {}
        spec = inventory.get(n)
        transport = h.get("transport") or (spec.transport if spec is not None else "local")
        if transport in INVENTORY_TRANSPORTS and spec is None:
            issues.append(lm.issue(("hosts", n), f"host {n!r} is not in the inventory"
                                   + (f" {d.get('inventory') or ''}" if inventory else " (no inventory given)"),
                                   "add it to the inventory file, give one with `inventory:` or --inventory, "
                                   "or set `transport: local`"))
        groups = tuple(h.get("groups") or ()) or (spec.groups if spec is not None else ())
        slots = h.get("slots") or (spec.slots if spec is not None else 1) or 1
        hosts[n] = s.build(Host, h, name=n, transport=transport, groups=groups, slots=slots,
                           spec=spec if transport in INVENTORY_TRANSPORTS else None)
    if not hosts:
        hosts = {"local": Host(name="local")}
    targets = {}
    for n, t in d["targets"].items():
        if t:
            kind = KINDS.get(t.get("kind") or "directory")
            for other in [k for k in t if k not in TARGET_KEYS]:  # keys beyond Target's own: kinds' sections
                if other != kind.name and t.get(other) is not None:
                    issues.append(lm.issue(("targets", n, other), f"`{other}:` settings need "
                                           f"`kind: {other}` (this target is a {kind.name})"))
            targets[n] = s.build(Target, t, name=n, settings=kind.settings(t.get(kind.name)))
    services = {}
    for n, v in d["services"].items():
        if v:
            skind = SERVICE_KINDS.get(v.get("kind") or "command")
            services[n] = s.build(Service, v, name=n, settings=skind.settings(v.get(skind.name)))
    workloads = {}
    for n, w in d["workloads"].items():
        if not w:
            continue
        text, job_file = None, None
        if w["job_file"]:
            jf = (base_dir / w["job_file"]) if not Path(w["job_file"]).is_absolute() else Path(w["job_file"])
            job_file = str(jf)
            try:
                text = read_text_bounded(jf)
            except OSError as exc:
                issues.append(lm.issue(("workloads", n, "job_file"), f"cannot read job file {jf}: {exc.strerror}",
                                       "paths are relative to the scenario file's folder; a job file is at most "
                                       f"{MAX_INPUT_BYTES // 2**20} MiB"))
        workloads[n] = s.build(Workload, w, name=n, job_file=job_file, job_file_text=text,
                               sweep=s.build(Sweep, w.get("sweep") or {}))
    secrets = {}
    for n, v in (d.get("secrets") or {}).items():
        if v:
            file = v.get("file") or ""
            secrets[n] = SecretRef(n, v.get("env") or "", file if file.startswith("~") else _relative(base_dir, file))
    dep = d.get("deploy") or {}
    deploy = s.build(Deploy, dep, upload={k: {"from": _relative(base_dir, v["from"]), "to": v["to"]}
                                          for k, v in (dep.get("upload") or {}).items() if v},
                     tools={t: dict(v) for t, v in dep.items() if t in TOOLS and isinstance(v, dict)},
                     base_dir=str(base_dir))
    collectors = {n: s.build(Collector, c, name=n) for n, c in (d.get("collectors") or {}).items() if c}
    return s.build(Scenario, d, file=lm.file, use_case={k: v for k, v in d["use_case"].items() if v},
                   variables=values, hosts=hosts, targets=targets, workloads=workloads,
                   settings=s.build(Settings, d.get("settings") or {}), base_dir=base_dir, services=services,
                   monitor=s.build(Monitor, d.get("monitor") or {}),
                   inventory={n: h.spec for n, h in hosts.items() if h.spec is not None}, inventory_file="",
                   deploy=deploy, secrets=secrets, report=s.build(Report, d.get("report") or {}),
                   collectors=collectors)


def _relative(base_dir: Path, value: str) -> str:
    """A path relative to the scenario file's folder (URLs and empty values unchanged)."""
    if not value or "://" in value or Path(value).is_absolute():
        return value
    return str(base_dir / value)


def _cross_check(sc: Scenario, lm: LineMap, issues: list[Issue]) -> None:
    from fsbench.scenario.checks import check_scenario

    issues.extend(check_scenario(sc, lm))
