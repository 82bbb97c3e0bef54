"""Checks across the scenario: baseline, references between sections, safety, tool options."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fsbench.api.services import BASE_EXPORTS
from fsbench.collectors import COLLECTORS
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.core.path_safety import unsafe_path_reason
from fsbench.core.shell import PLACEHOLDER as RUNTIME
from fsbench.core.shell import placeholders
from fsbench.kinds import KINDS
from fsbench.scenario.model import MAX_CASES, MAX_SWEEP_POINTS, Scenario, Target, Workload
from fsbench.scenario.tool_checks import tool_issues
from fsbench.services import SERVICE_KINDS

#: one check of the whole scenario: every problem it finds, each located at its key
Check = Callable[[Scenario, LineMap], list[Issue]]


def check_scenario(sc: Scenario, lm: LineMap) -> list[Issue]:
    """Every cross-section problem, each located at its key."""
    return [issue for check in CHECKS for issue in check(sc, lm)]


def _sections_present(sc: Scenario, lm: LineMap) -> list[Issue]:
    """A scenario measures something: at least one target and one workload."""
    out = []
    if not sc.targets:
        out.append(lm.issue(("targets",), "no targets: name at least one system under test"))
    if not sc.workloads:
        out.append(lm.issue(("workloads",), "no workloads: name at least one tool run"))
    return out


def _one_baseline(sc: Scenario, lm: LineMap) -> list[Issue]:
    """At most one target is the baseline the others are compared with."""
    baselines = [t.name for t in sc.targets.values() if t.baseline]
    return [lm.issue(("targets", name, "baseline"), f"a second baseline ({baselines[0]!r} is one)",
                     "mark exactly one target `baseline: true`") for name in baselines[1:]]


def _target_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """Each target: a safe path, known hosts and services, its kind's own checks, known placeholders."""
    out: list[Issue] = []
    for t in sc.targets.values():
        out += _target_path_issues(lm, t)
        out += _unknown_names(lm, ("targets", t.name, "hosts"), t.hosts, _host_names(sc), "host or group",
                              f"hosts: {', '.join(sc.hosts)}")
        out += _unknown_names(lm, ("targets", t.name, "services"), t.services, set(sc.services), "service",
                              f"services: {', '.join(sc.services) or '(none declared)'}")
        out += _target_kind_issues(sc, lm, t)
    return out


def _target_path_issues(lm: LineMap, t: Target) -> list[Issue]:
    """A target's path is known before the run and is not a system folder (unless `destructive`)."""
    out = []
    if RUNTIME.search(t.path):
        out.append(lm.issue(("targets", t.name, "path"), "a target path cannot use run-time placeholders"))
    reason = unsafe_path_reason(t.path) if KINDS.get(t.kind).address != "url" else None
    if reason and not t.destructive:
        out.append(lm.issue(("targets", t.name, "path"), f"{t.path!r} {reason}; fsbench will not write there",
                            "point at a dedicated directory or mount, or set `destructive: true` "
                            "on this target if you really mean it"))
    return out


def _target_kind_issues(sc: Scenario, lm: LineMap, t: Target) -> list[Issue]:
    """What a target's kind refuses, and placeholders its commands and settings cannot fill."""
    path = ("targets", t.name)
    kind = KINDS.get(t.kind)
    out = []
    if t.existing_mount and kind.address != "directory":
        out.append(lm.issue(path + ("existing_mount",),
                            f"`existing_mount` is for a mounted folder; a {kind.name} target's path is a "
                            f"{kind.address}", "remove existing_mount from this target"))
    out += [lm.issue(path + tuple(sub), message, hint) for sub, message, hint in kind.check(t)]
    allowed = {"target.path", "target.name", "run.id", "run.scratch", "host.name",
               *(f"secrets.{n}" for n in sc.secrets)} | {
        f"services.{s}.{k}" for s in t.services if s in sc.services
        for k in (*BASE_EXPORTS, *SERVICE_KINDS.get(sc.services[s].kind).exports,
                  *(f"port_{p}" for p in (*sc.services[s].ports, *_kind_ports(sc.services[s]))))}
    texts = [("setup", c) for c in t.setup] + [("teardown", c) for c in t.teardown]
    texts += [("ready", t.ready)] if t.ready else []
    texts += [(f"{kind.name}.{key}", text) for key, text in kind.texts(t.settings) if text]
    return out + _placeholder_issues(lm, path, texts, allowed)


def _service_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """Each service: known hosts, commands to start it and to probe it, known placeholders."""
    out: list[Issue] = []
    for svc in sc.services.values():
        path = ("services", svc.name)
        out += _unknown_names(lm, path + ("hosts",), svc.hosts, _host_names(sc), "host or group",
                              f"hosts: {', '.join(sc.hosts)}")
        splan = SERVICE_KINDS.get(svc.kind).plan(svc)
        if svc.managed and splan.managed and not splan.start:
            out.append(lm.issue(path, "a managed service needs `start` commands",
                                "or set `managed: false` if it already runs"))
        if not splan.ready:
            out.append(lm.issue(path, "a service needs a `ready` probe (a command that succeeds when it "
                                      "answers)", "e.g. ready: redis-cli -p ${service.port} ping"))
        allowed = {"service.name", "service.port", "service.host", "service.dir", "run.id", "run.scratch",
                   *(f"secrets.{n}" for n in sc.secrets),
                   "host.name", *(f"service.port_{p}" for p in (*svc.ports, *splan.ports))}
        texts = [("start", c) for c in svc.start] + [("stop", c) for c in svc.stop]
        texts += [("ready", svc.ready)] if svc.ready else []
        texts += [(f"files.{n}", body) for n, body in svc.files.items()]
        out += _placeholder_issues(lm, path, texts, allowed)
    return out


def _report_view_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """The report's views name workloads of the scenario."""
    out = []
    for i, view in enumerate(sc.report.views):
        for name in view.get("workloads") or [view.get("workload")]:
            if name and name not in sc.workloads:
                out.append(lm.issue(("report", "views", i), f"unknown workload {name!r}",
                                    f"workloads: {', '.join(sc.workloads)}"))
    return out


def _report_templates_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """report.templates is a folder, found beside the scenario file (else the run would end without a report)."""
    given = sc.report.templates
    if not given or (sc.base_dir / given).is_dir():  # an absolute path stays itself
        return []
    return [lm.issue(("report", "templates"), f"{sc.base_dir / given} is not a folder",
                     "name the folder that holds your report.html.j2, relative to this scenario file "
                     "(docs/report.md, Templates), or leave the key out for fsbench's own templates")]


def _workload_issues(sc: Scenario, lm: LineMap) -> list[Issue]:
    """Each workload: known targets, a sweep that makes sense, then its tool's own checks of its options."""
    out: list[Issue] = []
    for w in sc.workloads.values():
        out += _unknown_names(lm, ("workloads", w.name, "targets"), w.targets, set(sc.targets), "target",
                              f"targets: {', '.join(sc.targets)}")
        out += _sweep_issues(lm, w)
        if w.sweep.size() > MAX_SWEEP_POINTS:
            out.append(lm.issue(("workloads", w.name, "sweep"), f"the sweep makes {w.sweep.size():,} points; at "
                                f"most {MAX_SWEEP_POINTS:,} are allowed", "sweep fewer values, or split it into "
                                "workloads"))
        else:
            out += tool_issues(sc, w, lm)
    return out


def _sweep_issues(lm: LineMap, w: Workload) -> list[Issue]:
    """Zipped lists of one length, no empty list, no key both swept and an option or on both axes."""
    path = ("workloads", w.name, "sweep")
    out = []
    lengths = {k: len(v) for k, v in w.sweep.zip.items()}
    if len(set(lengths.values())) > 1:
        out.append(lm.issue(path + ("zip",), f"zipped lists differ in length: {lengths}",
                            "zip pairs the n-th values of each list: give them the same length"))
    for axis, swept in (("product", w.sweep.product), ("zip", w.sweep.zip)):
        for k, values in swept.items():
            if not values:
                out.append(lm.issue(path + (axis, k), "an empty list sweeps nothing"))
            if k in w.options:
                out.append(lm.issue(path + (axis, k), f"{k!r} is both an option and swept", "remove it from options"))
    for k in set(w.sweep.product) & set(w.sweep.zip):
        out.append(lm.issue(path + ("zip", k), f"{k!r} is in both product and zip"))
    return out


def _unknown_names(lm: LineMap, path: tuple, names: Iterable[str], known: set[str], what: str,
                   hint: str) -> list[Issue]:
    """One issue per name that is not among the known ones."""
    return [lm.issue(path, f"unknown {what} {n!r}", hint) for n in names if n not in known]


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
            out += _unknown_names(lm, path + (key,), names, set(known), key[:-1], f"{key}: {', '.join(known)}")
        out += _unknown_names(lm, path + ("hosts",), c.hosts, _host_names(sc), "host or group",
                              f"hosts: {', '.join(sc.hosts)}")
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


#: the checks, in the order their issues are listed
CHECKS: tuple[Check, ...] = (_sections_present, _one_baseline, _target_issues, _service_issues, _local_client_issues,
                             _collector_issues, _report_view_issues, _report_templates_issues, _workload_issues,
                             _case_count_issues)
