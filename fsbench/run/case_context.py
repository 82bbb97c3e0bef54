"""What a tool is given to build a case (its folder and BuildContext), one derivation for the run and the plan."""

from __future__ import annotations

from fsbench.api.kind_numbers import CountsMetaRequests
from fsbench.api.tools import BuildContext, HostInfo
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case


def host_infos(sc: Scenario, hosts: tuple[str, ...], facts: list[dict] | None = None) -> dict[str, HostInfo]:
    """The case's hosts as tools see them: address, MPI slots, spec and (when gathered) their facts."""
    known = {row.get("host"): row for row in facts or []}
    return {h: HostInfo(h, sc.hosts[h].reach, sc.hosts[h].slots, sc.hosts[h].spec, known.get(h, {})) for h in hosts}


def case_context(session: TargetSession, case: Case, hosts: dict[str, HostInfo], controller: HostInfo,
                 run_id: str, port: int) -> tuple[BuildContext, str]:
    """The build context of a case on its target's session, and the folder (or path) its tool addresses."""
    kind, first = session.kind, case.hosts[0]
    ctx = BuildContext(dict(hosts), port=port, controller=controller, address=kind.address, target_kind=kind.name,
                       target_settings=session.tool_settings(first), store=session.store(first), run_id=run_id,
                       secrets=session.secrets,
                       meta_counters=kind.meta_counters if isinstance(kind, CountsMetaRequests) else None)
    return ctx, session.test_dir(case)
