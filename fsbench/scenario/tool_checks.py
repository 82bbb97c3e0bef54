"""A workload's tool and options: checked at every point of its sweep, each issue at its key or job-file line."""

from __future__ import annotations

from fsbench.api.kinds import is_store_backed, tree_per_host_reason
from fsbench.api.tools import CheckContext, CheckTarget, OptionIssue, declarations
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.core.shell import PLACEHOLDER as RUNTIME
from fsbench.kinds import KINDS
from fsbench.scenario.model import Scenario, Workload
from fsbench.tools import TOOLS


def tool_issues(sc: Scenario, w: Workload, lm: LineMap) -> list[Issue]:
    """A workload's targets are of a kind its tool accepts; its options pass the tool's check at every sweep point."""
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
        stores={t.name: is_store_backed(KINDS.get(t.kind)) for t in targets},
        secrets=tuple(sorted(sc.secrets)),
        host_slots={t.name: tuple((h, sc.hosts[h].slots) for h in (sc.resolve_hosts(t.hosts) if sc.hosts else []))
                    for t in targets},
        own_trees={t.name: tree_per_host_reason(KINDS.get(t.kind), t) for t in targets})
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
    for axis, values in (("product", w.sweep.product), ("zip", w.sweep.zip)):
        walk({k: v for k, v in values.items() if k not in own}, ("sweep", axis))
    return out


def _target_host_names(sc: Scenario, hosts: tuple[str, ...]) -> set[str]:
    """Every name a target's hosts go by: scenario names, addresses, and localhost for this machine."""
    out: set[str] = set()
    for h in sc.resolve_hosts(hosts) if sc.hosts else []:
        host = sc.hosts[h]
        out |= {h, host.reach} | ({"localhost", "127.0.0.1"} if host.transport == "local" else set())
    return out


def _locate(w: Workload, oi: OptionIssue, point: dict, lm: LineMap) -> Issue:
    """An adapter's issue at its place: the job file's line, or the scenario key (sweep value, job, option)."""
    origin = oi.origin
    if origin is not None and origin.line:
        return Issue(origin.file, origin.line, f"workloads.{w.name}.job_file {oi.option}".rstrip(), oi.message,
                     oi.hint)
    # an option whose own name has a dot (mdtest's posix.odirect) is one key, not a path
    whole = oi.path in point or oi.path in w.options
    key = oi.path if whole else oi.path.split(".")[0]
    if key in point:
        axis = "product" if key in w.sweep.product else "zip"
        values = (w.sweep.product if axis == "product" else w.sweep.zip)[key]
        index = next((i for i, v in enumerate(values) if v == point[key]), 0)
        return lm.issue(("workloads", w.name, "sweep", axis, key, index), oi.message, oi.hint)
    where = ("jobs",) if key in w.jobs else ("options",)
    full = ("workloads", w.name) + where + ((oi.path,) if whole else tuple(p for p in oi.path.split(".") if p))
    return lm.issue(full, oi.message, oi.hint)
