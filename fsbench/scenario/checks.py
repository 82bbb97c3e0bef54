"""Checks across the scenario: baseline, references between sections, safety, tool options."""

from __future__ import annotations

from fsbench.api.tools import CheckContext, CheckTarget, declarations
from fsbench.collectors import COLLECTORS
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.core.path_safety import unsafe_path_reason
from fsbench.core.shell import PLACEHOLDER as RUNTIME
from fsbench.core.shell import placeholders
from fsbench.kinds import KINDS
from fsbench.scenario.model import MAX_CASES, MAX_SWEEP_POINTS, Scenario
from fsbench.services import SERVICE_KINDS
from fsbench.services.base import BASE_EXPORTS
from fsbench.tools import TOOLS


def check_scenario(sc: Scenario, lm: LineMap) -> list[Issue]:
    """Every cross-section problem, each located at its key."""
    issues: list[Issue] = []
    if not sc.targets:
        issues.append(lm.issue(("targets",), "no targets: name at least one system under test"))
    if not sc.workloads:
        issues.append(lm.issue(("workloads",), "no workloads: name at least one tool run"))
    baselines = [t.name for t in sc.targets.values() if t.baseline]
    if len(baselines) > 1:
        for name in baselines[1:]:
            issues.append(lm.issue(("targets", name, "baseline"), f"a second baseline ({baselines[0]!r} is one)",
                                   "mark exactly one target `baseline: true`"))
    for t in sc.targets.values():
        path = ("targets", t.name)
        if RUNTIME.search(t.path):
            issues.append(lm.issue(path + ("path",), "a target path cannot use run-time placeholders"))
        reason = unsafe_path_reason(t.path) if KINDS.get(t.kind).address != "url" else None
        if reason and not t.destructive:
            issues.append(lm.issue(path + ("path",), f"{t.path!r} {reason}; fsbench will not write there",
                                   "point at a dedicated directory or mount, or set `destructive: true` "
                                   "on this target if you really mean it"))
        for h in t.hosts:
            if h not in _host_names(sc):
                issues.append(lm.issue(path + ("hosts",), f"unknown host or group {h!r}",
                                       f"hosts: {', '.join(sc.hosts)}"))
        for s in t.services:
            if s not in sc.services:
                issues.append(lm.issue(path + ("services",), f"unknown service {s!r}",
                                       f"services: {', '.join(sc.services) or '(none declared)'}"))
        kind = KINDS.get(t.kind)
        if t.existing_mount and kind.address != "directory":
            issues.append(lm.issue(path + ("existing_mount",),
                                   f"`existing_mount` is for a mounted folder; a {kind.name} target's path is a "
                                   f"{kind.address}", "remove existing_mount from this target"))
        for sub, message, hint in kind.check(t):
            issues.append(lm.issue(path + tuple(sub), message, hint))
        allowed = {"target.path", "target.name", "run.id", "run.scratch", "host.name",
                   *(f"secrets.{n}" for n in sc.secrets)} | {
            f"services.{s}.{k}" for s in t.services if s in sc.services
            for k in (*BASE_EXPORTS, *SERVICE_KINDS.get(sc.services[s].kind).exports,
                      *(f"port_{p}" for p in (*sc.services[s].ports, *_kind_ports(sc.services[s]))))}
        texts = [("setup", c) for c in t.setup] + [("teardown", c) for c in t.teardown]
        texts += [("ready", t.ready)] if t.ready else []
        texts += [(f"{kind.name}.{key}", text) for key, text in kind.texts(t.settings) if text]
        issues.extend(_placeholder_issues(lm, path, texts, allowed))
    for svc in sc.services.values():
        path = ("services", svc.name)
        for h in svc.hosts:
            if h not in _host_names(sc):
                issues.append(lm.issue(path + ("hosts",), f"unknown host or group {h!r}",
                                       f"hosts: {', '.join(sc.hosts)}"))
        splan = SERVICE_KINDS.get(svc.kind).plan(svc)
        if svc.managed and splan.managed and not splan.start:
            issues.append(lm.issue(path, "a managed service needs `start` commands",
                                   "or set `managed: false` if it already runs"))
        if not splan.ready:
            issues.append(lm.issue(path, "a service needs a `ready` probe (a command that succeeds when it "
                                         "answers)", "e.g. ready: redis-cli -p ${service.port} ping"))
        allowed = {"service.name", "service.port", "service.host", "service.dir", "run.id", "run.scratch",
                   *(f"secrets.{n}" for n in sc.secrets),
                   "host.name", *(f"service.port_{p}" for p in (*svc.ports, *splan.ports))}
        texts = [("start", c) for c in svc.start] + [("stop", c) for c in svc.stop]
        texts += [("ready", svc.ready)] if svc.ready else []
        texts += [(f"files.{n}", body) for n, body in svc.files.items()]
        issues.extend(_placeholder_issues(lm, path, texts, allowed))
    issues.extend(_local_client_issues(sc, lm))
    issues.extend(_collector_issues(sc, lm))
    for i, view in enumerate(sc.report.views):
        for name in view.get("workloads") or [view.get("workload")]:
            if name and name not in sc.workloads:
                issues.append(lm.issue(("report", "views", i), f"unknown workload {name!r}",
                                       f"workloads: {', '.join(sc.workloads)}"))
    for w in sc.workloads.values():
        path = ("workloads", w.name)
        for tname in w.targets:
            if tname not in sc.targets:
                issues.append(lm.issue(path + ("targets",), f"unknown target {tname!r}",
                                       f"targets: {', '.join(sc.targets)}"))
        lengths = {k: len(v) for k, v in w.sweep.zip.items()}
        if len(set(lengths.values())) > 1:
            issues.append(lm.issue(path + ("sweep", "zip"), f"zipped lists differ in length: {lengths}",
                                   "zip pairs the n-th values of each list: give them the same length"))
        for axis in ("product", "zip"):
            for k, values in getattr(w.sweep, axis).items():
                if not values:
                    issues.append(lm.issue(path + ("sweep", axis, k), "an empty list sweeps nothing"))
                if k in w.options:
                    issues.append(lm.issue(path + ("sweep", axis, k), f"{k!r} is both an option and swept",
                                           "remove it from options"))
        both = set(w.sweep.product) & set(w.sweep.zip)
        for k in both:
            issues.append(lm.issue(path + ("sweep", "zip", k), f"{k!r} is in both product and zip"))
        if w.sweep.size() > MAX_SWEEP_POINTS:
            issues.append(lm.issue(path + ("sweep",), f"the sweep makes {w.sweep.size():,} points; at most "
                                   f"{MAX_SWEEP_POINTS:,} are allowed", "sweep fewer values, or split it into "
                                   "workloads"))
        else:
            issues.extend(_tool_issues(sc, w, lm))
    issues.extend(_case_count_issues(sc, lm))
    return issues


def _case_count_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """A plan of more than MAX_CASES cases is refused before anything lists them."""
    if any(w.sweep.size() > MAX_SWEEP_POINTS for w in sc.workloads.values()):
        return []  # said already, per workload
    total = sum(len([t for t in (w.targets or sc.targets) if t in sc.targets]) * w.sweep.size()
                * (w.repetitions or sc.settings.repetitions).max for w in sc.workloads.values())
    if total <= MAX_CASES:
        return []
    return [lm.issue(("workloads",), f"the scenario makes {total:,} cases (targets x sweep points x repetitions); "
                                     f"at most {MAX_CASES:,} are allowed",
                     "fewer repetitions or sweep values, or several scenarios")]


def _kind_ports(svc) -> tuple[str, ...]:
    """The free ports a service's kind asks for itself (an HDFS NameNode's HTTP port)."""
    return SERVICE_KINDS.get(svc.kind).plan(svc).ports


def _host_names(sc: Scenario) -> set[str]:
    return set(sc.hosts) | {g for h in sc.hosts.values() for g in h.groups}


def _collector_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """Collectors name existing targets, workloads and hosts, of kinds they apply to; placeholders known."""
    out: list[Issue] = []
    for c in sc.collectors.values():
        path = ("collectors", c.name)
        kind = COLLECTORS.get(c.kind)
        for key, names, known in (("targets", c.targets, sc.targets), ("workloads", c.workloads, sc.workloads)):
            for n in names:
                if n not in known:
                    out.append(lm.issue(path + (key,), f"unknown {key[:-1]} {n!r}", f"{key}: {', '.join(known)}"))
        for h in c.hosts:
            if h not in _host_names(sc):
                out.append(lm.issue(path + ("hosts",), f"unknown host or group {h!r}", f"hosts: {', '.join(sc.hosts)}"))
        for t in c.targets:
            if t in sc.targets and kind.target_kinds and sc.targets[t].kind not in kind.target_kinds:
                works = " or ".join(kind.target_kinds)
                out.append(lm.issue(path + ("targets",), f"a {c.kind} collector works on {works} targets; {t} is a "
                                                         f"{sc.targets[t].kind} target", "leave it out of `targets:`"))
        if not sc.collector_targets(c, kind.target_kinds):
            out.append(lm.issue(path, f"no target a {c.kind} collector applies to "
                                      f"({' or '.join(kind.target_kinds)} targets)"))
        for sub, message, hint in kind.check(c):
            out.append(lm.issue(path + tuple(sub), message, hint))
        allowed = {"target.path", "target.name", "run.id", "run.scratch", "host.name", "case.id", "case.dir",
                   *(f"secrets.{n}" for n in sc.secrets)}
        out.extend(_placeholder_issues(lm, path, [("command", c.command or "")], allowed))
    return out


def _placeholder_issues(lm: LineMap, path: tuple, texts: list[tuple[str, str]], allowed: set[str]) -> list[Issue]:
    out = []
    for key, text in texts:
        for name in placeholders(text or ""):
            if name not in allowed:
                out.append(lm.issue(path + tuple(key.split(".")), f"unknown placeholder ${{{name}}}",
                                    "usable here: " + ", ".join("${" + a + "}" for a in sorted(allowed))))
    return out


def _tool_issues(sc: Scenario, w, lm: LineMap) -> list[Issue]:
    if w.tool not in TOOLS:  # already reported by the schema check
        return []
    tool = TOOLS.get(w.tool)
    targets = [sc.targets[t] for t in (w.targets or sc.targets) if t in sc.targets]
    accepts = tool.accepts
    out: list[Issue] = []
    for t in targets:
        address = KINDS.get(t.kind).address
        if address not in accepts and t.kind not in accepts:
            out.append(lm.issue(("workloads", w.name, "targets" if w.targets else "tool"),
                                f"{w.tool} cannot run on target {t.name}: a {t.kind} target is a {address}, "
                                f"{w.tool} works on a {' or '.join(accepts)}",
                                "restrict the workload with `targets:` to targets it can use"))
    if out:
        return out
    ctx = CheckContext(
        targets=tuple(CheckTarget(t.name, t.path, t.destructive, t.kind) for t in targets),
        allow_commands=w.allow_commands, job_file=w.job_file,
        settings={t.name: t.settings for t in targets},
        target_hosts={t.name: frozenset(_target_host_names(sc, t.hosts)) for t in targets},
        stores={t.name: bool(getattr(KINDS.get(t.kind), "object_store", False)) for t in targets},
        secrets=tuple(sorted(sc.secrets)))
    seen: set[tuple] = set()
    out.extend(_runtime_in_options(w, tool, lm))
    # every point of the sweep is checked (not only the first value of each axis): `bs: [4k, 4q]` is an error
    for point in w.sweep.points() or [{}]:
        for oi in tool.check_options({**w.options, **point}, w.job_file_text, w.jobs, ctx):
            issue = _locate(w, oi, point, lm)
            key = (issue.file, issue.line, issue.path, issue.message)
            if key not in seen:
                seen.add(key)
                out.append(issue)
    return out


def _runtime_in_options(w, tool, lm: LineMap) -> list[Issue]:
    """Run-time placeholders in a tool's options: fsbench passes options to the tool as written, so
    `description: ${secrets.db}` reached fio literally and failed the case. A tool that fills some
    itself names those options in `placeholder_options` (objbench's access_key: ${secrets.NAME})."""
    own = set(declarations(tool).placeholder_options)
    out: list[Issue] = []

    def walk(value, where: tuple) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if str(k) not in own:
                    walk(v, where + (str(k),))
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, where + (i,))
        elif isinstance(value, str) and (found := RUNTIME.search(value)):
            name = found.group(0)
            out.append(lm.issue(("workloads", w.name) + where,
                                f"{name} is not filled in a tool's options: fsbench passes them to {w.tool} as written",
                                "options take scenario variables (${name}, filled when the scenario is read); "
                                "run-time values (${target.*}, ${run.*}, ${secrets.*}) are filled only in commands: "
                                "setup, teardown, services, mounts and collectors"))

    walk(w.options, ("options",))
    walk(w.jobs, ("jobs",))
    for axis in ("product", "zip"):
        walk({k: v for k, v in getattr(w.sweep, axis).items() if k not in own}, ("sweep", axis))
    return out


def _target_host_names(sc: Scenario, hosts: tuple[str, ...]) -> set[str]:
    """Every name a target's hosts go by: scenario names, addresses, and localhost for this machine."""
    out: set[str] = set()
    for h in sc.resolve_hosts(hosts) if sc.hosts else []:
        host = sc.hosts[h]
        out |= {h, host.reach} | ({"localhost", "127.0.0.1"} if host.transport == "local" else set())
    return out


def _locate(w, oi, point: dict, lm: LineMap) -> Issue:
    """An adapter's issue at its place: the job file's line, or the scenario key (sweep value, job, option)."""
    origin = getattr(oi, "origin", None)
    if origin is not None and getattr(origin, "line", None):
        return Issue(origin.file, origin.line, f"workloads.{w.name}.job_file {oi.option}".rstrip(), oi.message,
                     oi.hint)
    # an option whose own name has a dot (mdtest's posix.odirect) is one key, not a path
    whole = oi.path in point or oi.path in w.options
    key = oi.path if whole else oi.path.split(".")[0]
    if key in point:
        axis = "product" if key in w.sweep.product else "zip"
        values = getattr(w.sweep, axis)[key]
        index = next((i for i, v in enumerate(values) if v == point[key]), 0)
        return lm.issue(("workloads", w.name, "sweep", axis, key, index), oi.message, oi.hint)
    where = ("jobs",) if key in w.jobs else ("options",)
    full = ("workloads", w.name) + where + ((oi.path,) if whole else tuple(p for p in oi.path.split(".") if p))
    return lm.issue(full, oi.message, oi.hint)


def _local_client_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """A target on hosts where a service's clients cannot work (the kind says why), refused before any run:
    across hosts every case of it would fail at mount time."""
    out = []
    for t in sc.targets.values():
        for name in t.services:
            svc = sc.services.get(name)
            if svc is None or not all(h in _host_names(sc) for h in (*t.hosts, *svc.hosts)):
                continue
            why = SERVICE_KINDS.get(svc.kind).plan(svc).clients_local_only
            outside = [h for h in sc.resolve_hosts(t.hosts) if h not in sc.resolve_hosts(svc.hosts)]
            if why and outside:
                out.append(lm.issue(("services", name), f"target {t.name!r} runs on {', '.join(outside)}, but "
                                    f"service {name!r} serves clients on its own hosts only: {why}",
                                    f"run the target on {', '.join(sc.resolve_hosts(svc.hosts))}, or change the "
                                    "service's settings as said"))
    return out
