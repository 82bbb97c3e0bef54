"""`fsbench plan --show`: each case's exact command lines and the job or parameter files it will run."""

from __future__ import annotations

import shlex

from fsbench.api.kinds import tree_per_host_reason
from fsbench.api.tools import BuildContext, HostInfo, Invocation, PrepareStep
from fsbench.core.secrets import redact
from fsbench.kinds import KINDS
from fsbench.run.case_context import case_context, host_infos
from fsbench.run.layout_reuse import Cover, dataset_cover, layout_key
from fsbench.run.plan_range import adaptive_range  # noqa: F401 - its callers' old name; it lives there
from fsbench.run.planned import RUN_ID, PlannedSession
from fsbench.run.targets.cache import drop_command
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.tools.placement import COMPACT_FROM, compact_placement, host_ranges, placement

#: what the port looks like in a plan (chosen when the run starts)
PORT = 8765


def case_dir(sc: Scenario, case: Case) -> str:
    """Where the case's files will be on the target (the run id is not known yet)."""
    return PlannedSession(sc, sc.targets[case.target]).test_dir(case)


def plan_context(sc: Scenario, case: Case) -> tuple[BuildContext, str]:
    """The build context and data folder of a case as a plan sees them (run-time values as placeholders):
    derived by the code a run derives them with (fsbench.run.case_context)."""
    return case_context(PlannedSession(sc, sc.targets[case.target]), case, host_infos(sc, case.hosts),
                        HostInfo("controller", "127.0.0.1"), RUN_ID, PORT)


def describe_case(sc: Scenario, case: Case, cases: tuple[Case, ...] = ()) -> str:
    """The case's commands and files as the runner will write them into raw/<case>/<host>/ (cases: the
    plan's, for the one prepare step a dataset's first case runs for its later cases too)."""
    tool = get_tool(case.tool)
    target = sc.targets[case.target]
    kind = KINDS.get(target.kind)
    ctx, folder = plan_context(sc, case)
    lines = [f"== case {case.index}: {case.case_id}",
             f"   target {case.target} · hosts {_hosts(case)} · estimate {case.estimate_s:.0f}s · "
             f"timeout {case.timeout_s:.0f}s · data in {folder}"
             + (" (shared dataset)" if case.dataset and kind.address == "directory" else "")]
    if case.fresh and case.dataset and kind.address == "directory":
        lines.append(f"-- remove the dataset's files ({folder}): this case writes them anew (not timed)")
    if case.prepare and isinstance(tool, PrepareStep):
        prep = tool.prepare(case, folder, ctx)
        cover = _cover(sc, tool, case, prep, cases, ctx, folder) if kind.address == "directory" else None
        if cover is not None:
            lines += _invocation("prepare (laying out the files to read, and the dataset's later cases' files; not "
                                 "timed, not monitored)", cover.prep)
            lines += [f"   {line}" for line in cover.note(case.dataset).splitlines()]
        elif prep is not None and kind.address == "directory":
            lines += _invocation("prepare (laying out the files to read; not timed, not monitored)", prep)
        elif prep is not None:
            lines += _invocation("prepare (writing what the case reads; not timed, not monitored; once per target: "
                                 "a later case that writes the same skips it)", prep)
    if case.drop_caches:
        also = ", dentries and inodes too" if case.drop_level == 3 else ""
        lines.append(f"-- drop the page cache on every involved host{also} "
                     f"({drop_command(case.drop_level).replace(' &&', ';')})")
    if case.drop_client_cache and (kind.client_process or target.client_process):
        lines.append(f"-- empty {target.name}'s client cache folders that lie in the run's scratch space, if its "
                     "client keeps any (guarded unmount, empty, mount again; docs/safety.md)")
    inv = tool.build(case, folder, ctx)
    lines += _invocation("run (timed and monitored)", inv)
    where, warnings = placement(case.tool, dict(case.options), [(h, sc.hosts[h].slots) for h in case.hosts], inv,
                                tree_per_host_reason(kind, target))
    if len(where) >= COMPACT_FROM:  # many hosts: one line per group of hosts that run alike
        lines.append(f"-- placement (which host runs what, {len(where)} hosts):")
        lines += [f"   {hosts}: {what}" for hosts, what in compact_placement(where)]
    elif len(where) > 1:
        lines.append("-- placement (which host runs what):")
        lines += [f"   {host}: {what}" for host, what in where.items()]
    lines += [f"   warning: {w}" for w in warnings]
    # the scenario's secrets were remembered at load: a value given through a variable or --set, a
    # URL's password or a ?password= parameter shows as **** here as in everything a run writes
    return redact("\n".join(lines) + "\n")


def _cover(sc: Scenario, tool: object, case: Case, prep: Invocation | None, cases: tuple[Case, ...],
           ctx: BuildContext, folder: str) -> Cover | None:
    """The step a dataset's first case runs for its later cases too, as the runner will choose it (its first case
    that reads laid-out files on one host, per target; per round where each round's target is set up anew)."""
    if not case.dataset or case.fresh or len(case.hosts) != 1 or prep is None:
        return None
    fresh_rounds = sc.settings.order == "rounds" and sc.settings.fresh != "none"

    def session(c: Case) -> tuple:
        return c.target, c.dataset, c.repetition if fresh_rounds else 0

    first = next((c for c in cases if session(c) == session(case) and c.prepare and not c.fresh
                  and len(c.hosts) == 1), None)
    if first is None or first.case_id != case.case_id:
        return None
    return dataset_cover(tool, case, prep, layout_key(tool, prep), cases, ctx, folder)


def _hosts(case: Case) -> str:
    """The case's hosts: their names, or numbered runs of them joined past a handful (client1-client32)."""
    return host_ranges(list(case.hosts)) if len(case.hosts) >= COMPACT_FROM else ", ".join(case.hosts)


def _invocation(title: str, inv: Invocation) -> list[str]:
    where = "this machine (the controller)" if inv.controller else \
        "every host at once" if inv.per_host else "the case's host"
    out = [f"-- {title}, on {where}:"]
    for host, argv in inv.servers.items():
        out.append(f"   [{host}, in the background] {shlex.join(argv)}")
    if inv.per_host:
        out += [f"   [{host}] $ {shlex.join(argv)}" for host, argv in inv.per_host.items()]
    else:
        out += [f"   $ {shlex.join(argv)}" for argv in (inv.steps or [inv.argv])]
    if inv.env:
        out.append(f"   environment: {', '.join(sorted(inv.env))} (values not shown)")
    for name, text in inv.files.items():
        out.append(f"   --- {name}")
        out += [f"   | {line}" for line in text.rstrip("\n").splitlines()]
    return out
