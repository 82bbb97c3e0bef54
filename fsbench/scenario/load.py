"""Read a scenario file: YAML with lines -> variables -> schema -> cross-checks -> Scenario."""

from __future__ import annotations

import copy
from pathlib import Path

from fsbench.errors import Issue, ScenarioError
from fsbench.config import schema as s
from fsbench.scenario.model import (USE_CASE_KEYS, Deploy, Host, JuiceFS, Monitor, Scenario, Service, Settings,
                                    Sweep, Target, Workload)
from fsbench.scenario.extends import apply_extends
from fsbench.scenario.variables import parse_set, resolve_variables, substitute
from fsbench.config.yamllines import LineMap, load_yaml
from fsbench.secrets import SecretRef

TOOLS = ("fio", "mdtest", "vdbench", "juicefs-bench")

_commands = s.list_of(s.string, allow_single=True)
HOST = s.Struct({
    "transport": s.Key(s.one_of("local", "ssh"), doc="local, or ssh (the default for a host of the inventory)"),
    "address": s.Key(s.address, default=""),
    "groups": s.Key(s.list_of(s.string), default=list),
    "slots": s.Key(s.integer(1)),
}, what="host")
def _port(value: object, path: tuple, lm, issues: list) -> object:
    """A TCP port number, or `auto` for a free one chosen at run time."""
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536):
        return value
    issues.append(lm.issue(path, f"expected a port number or auto, got {value!r}"))
    return None


SERVICE = s.Struct({
    "description": s.Key(s.string, default=""),
    "hosts": s.Key(s.list_of(s.string), default=list, doc="hosts or groups it runs on"),
    "managed": s.Key(s.boolean, default=True, doc="false: already running; only the ready probe runs"),
    "port": s.Key(_port),
    "ports": s.Key(s.list_of(s.string), default=list, doc="names of more free ports: ${service.port_NAME}"),
    "files": s.Key(s.mapping_of(s.string, name_rule=True, what="file"), default=dict),
    "start": s.Key(_commands, default=list),
    "ready": s.Key(s.string),
    "ready_timeout": s.Key(s.duration, default=60.0),
    "stop": s.Key(_commands, default=list),
}, what="service")
JUICEFS = s.Struct({
    "meta": s.Key(s.string, required=True, doc="the metadata engine URL, e.g. redis://127.0.0.1:6379/1"),
    "storage": s.Key(s.one_of("file", "s3", "minio"), default="file"),
    "bucket": s.Key(s.string, default=""),
    "volume": s.Key(s.string, default=""),
    "binary": s.Key(s.string, default="juicefs"),
    "format_options": s.Key(s.list_of(s.string), default=list),
    "mount_options": s.Key(s.list_of(s.string), default=list),
    "access_key_env": s.Key(s.string, default=""),
    "secret_key_env": s.Key(s.string, default=""),
}, what="juicefs settings")
TARGET = s.Struct({
    "path": s.Key(s.line_text, required=True, doc="the directory or mount point under test"),
    "description": s.Key(s.string, default=""),
    "baseline": s.Key(s.boolean, default=False),
    "setup": s.Key(_commands, default=list),
    "teardown": s.Key(_commands, default=list),
    "destructive": s.Key(s.boolean, default=False),
    "setup_timeout": s.Key(s.duration, default=300.0),
    "hosts": s.Key(s.list_of(s.string), default=list),
    "kind": s.Key(s.one_of("directory", "juicefs"), default="directory"),
    "services": s.Key(s.list_of(s.string), default=list),
    "ready": s.Key(s.string),
    "ready_timeout": s.Key(s.duration, default=60.0),
    "juicefs": s.Key(JUICEFS),
    "extends": s.Key(s.string),
    "fstype": s.Key(s.string, doc="the file system type the path must be on (findmnt), e.g. fuse.juicefs"),
}, what="target")
SWEEP = s.Struct({
    "product": s.Key(s.mapping_of(s.list_of(s.scalar), name_rule=False), default=dict),
    "zip": s.Key(s.mapping_of(s.list_of(s.scalar), name_rule=False), default=dict),
}, what="sweep")
WORKLOAD = s.Struct({
    "tool": s.Key(s.one_of(*TOOLS), required=True, doc=f"one of {', '.join(TOOLS)}"),
    "description": s.Key(s.string, default=""),
    "options": s.Key(s.mapping_of(s.scalar_or_list, name_rule=False), default=dict),
    "jobs": s.Key(s.mapping_of(s.mapping_of(s.scalar, name_rule=False), what="job"), default=dict),
    "job_file": s.Key(s.string),
    "sweep": s.Key(SWEEP, default=dict),
    "repetitions": s.Key(s.integer(1)),
    "timeout": s.Key(s.duration),
    "targets": s.Key(s.list_of(s.string), default=list),
    "drop_caches": s.Key(s.boolean, doc="sync and drop the page cache on every involved host before each case "
                                         "(default: only after a prepare step laid out files)"),
    "dataset": s.Key(s.name, doc="cases naming the same dataset on a target share one data folder, kept "
                                   "until the target's teardown (default: the workload's name)"),
    "prepare": s.Key(s.one_of("auto", "none"), default="auto",
                     doc="auto: before a case that reads, lay its files out untimed and unmonitored"),
    "allow_commands": s.Key(s.boolean, default=False, doc="allow tool options that run commands "
                                                          "(fio exec_prerun, exec_postrun, exec engine)"),
    "optional": s.Key(s.boolean, default=False, doc="where its tool is not installed, skip the cases (said in "
                                                    "the report) instead of refusing to run"),
}, what="workload")
SETTINGS = s.Struct({
    "repetitions": s.Key(s.integer(1), default=1),
    "case_timeout": s.Key(s.duration),
    "cooldown": s.Key(s.duration, default=0.0),
    "output_root": s.Key(s.string, default="reports"),
    "progress": s.Key(s.one_of("auto", "plain", "none"), default="auto"),
    "scratch": s.Key(s.string, default="/var/tmp/fsbench"),
}, what="settings")
def _percent(value: object, path: tuple, lm, issues: list) -> object:
    """'10%' or 0.1 -> 0.1."""
    try:
        return float(str(value).rstrip("%")) / 100 if str(value).endswith("%") else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        issues.append(lm.issue(path, f"expected a percentage such as 10%, got {value!r}"))
        return None


def _threshold(value: object, path: tuple, lm, issues: list) -> object:
    """{good: 150MiB/s, poor: 50MiB/s} under a `workload.operation.metric` key."""
    from fsbench.thresholds import parse_threshold
    from fsbench.tidy import METRIC_UNITS

    key = str(path[-1])
    if key.count(".") < 2 or key.rsplit(".", 1)[-1] not in METRIC_UNITS:
        issues.append(lm.issue(path, f"a threshold key is WORKLOAD.OPERATION.METRIC (* allowed), got {key!r}",
                               f"metrics: {', '.join(METRIC_UNITS)}"))
        return None
    checked = s.Struct({"good": s.Key(s.scalar, required=True), "poor": s.Key(s.scalar, required=True)},
                       what="threshold")(value, path, lm, issues)
    for k in ("good", "poor"):
        if checked and checked.get(k) is not None:
            try:
                parse_threshold(checked[k])
            except ValueError as exc:
                issues.append(lm.issue(path + (k,), str(exc)))
    return checked


REPORT = s.Struct({
    "cv_threshold": s.Key(_percent, default=0.10, doc="mark repetitions that spread more than this"),
    "same_band": s.Key(_percent, default=0.05, doc="ratios within this band of the baseline are not coloured"),
    "thresholds": s.Key(s.mapping_of(_threshold, name_rule=False), default=dict),
    "metrics": s.Key(s.mapping_of(s.list_of(s.string), name_rule=False), default=dict,
                     doc="metrics shown per tool, e.g. {fio: [bandwidth, iops]}"),
}, what="report settings")

def _process_name(value: object, path: tuple, lm, issues: list) -> object:
    """A process name as /proc/PID/comm shows it; `host` is the host's own scope."""
    name = s.string(value, path, lm, issues)
    if name == "host":
        issues.append(lm.issue(path, "`host` names the whole host's figures, not a process"))
        return None
    return name


MONITOR = s.Struct({
    "enabled": s.Key(s.boolean, default=True),
    "interval": s.Key(s.duration, default=1.0),
    "processes": s.Key(s.list_of(_process_name), default=list,
                       doc="process names (as in /proc/PID/comm) whose CPU and memory are reported"),
}, what="monitor settings")

UPLOAD = s.Struct({
    "from": s.Key(s.string, required=True, doc="a local file or folder (relative to the scenario file)"),
    "to": s.Key(s.string, required=True, doc="where it goes on every host, e.g. /usr/local/bin/mdtest"),
}, what="upload")
DEPLOY = s.Struct({
    "install": s.Key(s.boolean, default=False, doc="install missing tools with apt-get, dnf or zypper"),
    "packages": s.Key(s.mapping_of(s.string, name_rule=False), default=dict, doc="tool -> package name"),
    "upload": s.Key(s.mapping_of(UPLOAD, name_rule=False), default=dict),
    "before_run": s.Key(s.boolean, default=False, doc="deploy as part of `fsbench run`, before preflight"),
    "mdtest": s.Key(s.Struct({
        "method": s.Key(s.one_of("auto", "upload", "build"), default="auto",
                        doc="auto: this machine's build where OS, arch and MPI match, else built there"),
        "source": s.Key(s.string, default="", doc="IOR release tarball, a path (relative to this file) or URL"),
    }, what="mdtest deploy settings"), default=dict),
    "vdbench": s.Key(s.Struct({
        "zip": s.Key(s.string, default="", doc="the vdbench zip downloaded from Oracle (relative to this file)"),
        "home": s.Key(s.string, default="/opt/vdbench", doc="where it is unpacked when `binary` is not a path"),
    }, what="vdbench deploy settings"), default=dict),
}, what="deploy settings")

def _secret(value: object, path: tuple, lm, issues: list) -> object:
    """Where a secret comes from: exactly one of an environment variable or a file."""
    checked = s.Struct({"env": s.Key(s.line_text), "file": s.Key(s.line_text)}, what="secret reference")(
        value, path, lm, issues)
    if checked is not None and bool(checked.get("env")) == bool(checked.get("file")):
        issues.append(lm.issue(path, "a secret comes from exactly one place: {env: VARIABLE} or {file: PATH}",
                               "never the value itself: the scenario is copied into the run directory"))
        return None
    return checked


SCENARIO = s.Struct({
    "name": s.Key(s.name, required=True, doc="a short name, used in the run directory's name"),
    "description": s.Key(s.string, default=""),
    "use_case": s.Key(s.Struct({k: s.Key(s.string, default="") for k in USE_CASE_KEYS}, what="use case"),
                      default=dict),
    "variables": s.Key(s.anything, default=dict),
    "inventory": s.Key(s.string, doc="a host inventory file (relative to this file); --inventory overrides it"),
    "hosts": s.Key(s.mapping_of(HOST, what="host"), default=dict),
    "settings": s.Key(SETTINGS, default=dict),
    "services": s.Key(s.mapping_of(SERVICE, what="service"), default=dict),
    "report": s.Key(REPORT, default=dict),
    "monitor": s.Key(MONITOR, default=dict),
    "deploy": s.Key(DEPLOY, default=dict),
    "secrets": s.Key(s.mapping_of(_secret, what="secret"), default=dict,
                     doc="NAME: {env: VARIABLE} or {file: PATH}; used as ${secrets.NAME}, never written anywhere"),
    "targets": s.Key(s.mapping_of(TARGET, what="target"), required=True),
    "workloads": s.Key(s.mapping_of(WORKLOAD, what="workload"), required=True),
}, what="scenario")


def load_scenario(path: str | Path, overrides: list[str] | dict | None = None,
                  inventory: str | Path | None = None) -> Scenario:
    """Load and fully validate a scenario file (and its inventory); raises ScenarioError listing every issue."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ScenarioError([Issue(str(path), None, "", f"cannot read the scenario: {exc.strerror}",
                                   "check the path")]) from None
    return load_scenario_text(text, str(path), base_dir=path.parent, overrides=overrides, inventory=inventory)


def load_scenario_text(text: str, file: str, *, base_dir: Path = Path("."),
                       overrides: list[str] | dict | None = None, inventory: str | Path | None = None) -> Scenario:
    """Validate scenario text; `file` is only used in messages."""
    raw, lm = load_yaml(text, file)
    if not isinstance(raw, dict):
        raise ScenarioError([Issue(file, 1, "", "a scenario is a mapping with name, targets and workloads")])
    sets = overrides if isinstance(overrides, dict) else parse_set(list(overrides or []))
    values = resolve_variables(raw, lm, sets)
    data = substitute(raw, values, lm)
    data = apply_extends(data, lm)
    issues: list[Issue] = []
    checked = SCENARIO(data, (), lm, issues)
    if checked is None:
        raise ScenarioError(issues)
    shape_ok = not issues
    inv_path = Path(inventory) if inventory else (base_dir / checked["inventory"] if checked.get("inventory") else None)
    hosts_inventory = _inventory(inv_path, lm, issues) if inv_path else {}
    try:
        scenario = _build(checked, values, lm, base_dir, issues, hosts_inventory, inventory is not None)
        scenario.inventory_file = str(inv_path) if inv_path else ""
        _cross_check(scenario, lm, issues)
    except (TypeError, AttributeError, KeyError, ValueError):
        if shape_ok:  # only a half-valid scenario may trip the cross-checks
            raise
    if issues:
        raise ScenarioError(sorted(issues, key=lambda i: (i.line or 0, i.path)))
    resolved = copy.deepcopy(data)
    resolved["variables"] = dict(values)
    scenario.resolved = resolved
    return scenario


def _inventory(path: Path, lm: LineMap, issues: list[Issue]) -> dict:
    from fsbench.inventory import load_inventory

    try:
        return load_inventory(path)
    except ScenarioError as exc:
        issues.extend(exc.issues)
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
        transport = h.get("transport") or ("ssh" if spec is not None else "local")
        if transport == "ssh" and spec is None:
            issues.append(lm.issue(("hosts", n), f"host {n!r} is not in the inventory"
                                   + (f" {d.get('inventory') or ''}" if inventory else " (no inventory given)"),
                                   "add it to the inventory file, give one with `inventory:` or --inventory, "
                                   "or set `transport: local`"))
        groups = tuple(h.get("groups") or ()) or tuple(getattr(spec, "groups", ()) or ())
        slots = h.get("slots") or getattr(spec, "slots", 1) or 1
        hosts[n] = Host(n, transport, h.get("address") or "", groups, slots, spec if transport == "ssh" else None)
    if not hosts:
        hosts = {"local": Host("local")}
    targets = {
        n: Target(n, t["path"], t["description"], t["baseline"], tuple(t["setup"]), tuple(t["teardown"]),
                  t["destructive"], t["setup_timeout"], tuple(t["hosts"]), t["kind"], tuple(t["services"]),
                  t["ready"], t["ready_timeout"], _juicefs(t["juicefs"]), t["fstype"])
        for n, t in d["targets"].items() if t
    }
    services = {
        n: Service(n, v["description"], tuple(v["hosts"]), v["managed"], v["port"], tuple(v["ports"]), dict(v["files"]),
                   tuple(v["start"]), v["ready"], v["ready_timeout"], tuple(v["stop"]))
        for n, v in d["services"].items() if v
    }
    workloads = {}
    for n, w in d["workloads"].items():
        if not w:
            continue
        text, job_file = None, None
        if w["job_file"]:
            jf = (base_dir / w["job_file"]) if not Path(w["job_file"]).is_absolute() else Path(w["job_file"])
            job_file = str(jf)
            try:
                text = jf.read_text()
            except OSError as exc:
                issues.append(lm.issue(("workloads", n, "job_file"), f"cannot read job file {jf}: {exc.strerror}",
                                       "paths are relative to the scenario file's folder"))
        sw = w["sweep"] or {}
        workloads[n] = Workload(
            n, w["tool"], dict(w["options"]), w["description"], dict(w["jobs"]), job_file, text,
            Sweep(dict(sw.get("product") or {}), dict(sw.get("zip") or {})),
            w["repetitions"], w["timeout"], tuple(w["targets"]), w["drop_caches"], w["optional"],
            w["dataset"] or "", w["prepare"], w["allow_commands"],
        )
    st = d["settings"]
    settings = Settings(st["repetitions"], st["case_timeout"], st["cooldown"], st["output_root"], st["progress"],
                        st["scratch"])
    secrets = {}
    for n, v in (d.get("secrets") or {}).items():
        if v:
            file = v.get("file") or ""
            secrets[n] = SecretRef(n, v.get("env") or "", file if file.startswith("~") else _relative(base_dir, file))
    return Scenario(d["name"], lm.file, d["description"], {k: v for k, v in d["use_case"].items() if v},
                    values, hosts, targets, workloads, settings, {}, base_dir, services,
                    Monitor(d["monitor"]["enabled"], d["monitor"]["interval"], tuple(d["monitor"]["processes"])),
                    {n: h.spec for n, h in hosts.items() if h.spec is not None}, "",
                    Deploy(d["deploy"]["install"], dict(d["deploy"]["packages"]),
                           {k: {"from": str(base_dir / v["from"]) if not Path(v["from"]).is_absolute() else v["from"],
                                "to": v["to"]} for k, v in d["deploy"]["upload"].items() if v},
                           d["deploy"]["before_run"], d["deploy"]["mdtest"]["method"],
                           _relative(base_dir, d["deploy"]["mdtest"]["source"]),
                           _relative(base_dir, d["deploy"]["vdbench"]["zip"]), d["deploy"]["vdbench"]["home"]),
                    secrets)


def _relative(base_dir: Path, value: str) -> str:
    """A path relative to the scenario file's folder (URLs and empty values unchanged)."""
    if not value or "://" in value or Path(value).is_absolute():
        return value
    return str(base_dir / value)


def _juicefs(j: dict | None) -> JuiceFS | None:
    if not j:
        return None
    return JuiceFS(j["meta"], j["storage"], j["bucket"], j["volume"], j["binary"], tuple(j["format_options"]),
                   tuple(j["mount_options"]), j["access_key_env"], j["secret_key_env"])


def _cross_check(sc: Scenario, lm: LineMap, issues: list[Issue]) -> None:
    from fsbench.scenario.checks import check_scenario

    issues.extend(check_scenario(sc, lm))
