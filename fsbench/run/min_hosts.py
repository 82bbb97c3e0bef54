"""`settings.min_hosts`: a campaign of many clients goes on without those that do not answer at preflight.

Without the setting any host that cannot be reached refuses the run (exit 4, its name in the table). With it,
the run goes on without the hosts that did not answer when all of these hold: at least `min_hosts` of the
run's hosts answered, none of those left out runs a service (the targets need them), and every target keeps
a host. The cases are planned again on the hosts that answered (fio's servers, mpirun's hostfile, placement),
and a warning names each host left out with why (kept in run-warnings.csv for the report).
"""

from __future__ import annotations

import dataclasses

from fsbench.api.transport import Transport
from fsbench.run.preflight import Preflight
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case, plan_cases

REACHABLE = "reachable"  # preflight's check name of a host that did not answer


def without_unanswered(sc: Scenario, cases: list[Case], transports: dict[str, Transport],
                       pf: Preflight) -> tuple[Scenario, list[Case], dict[str, Transport], str | None]:
    """(scenario, cases, transports, warning) without the hosts that did not answer, where min_hosts allows it;
    unchanged (warning None) otherwise: preflight's failures then refuse the run as before."""
    floor = sc.settings.min_hosts
    gone = {h: why for h, check, why in pf.failures if check == REACHABLE and h in sc.hosts}
    if floor is None or not gone:
        return sc, cases, transports, None
    kept = [h for h in sc.hosts if h not in gone]
    serving = sorted({h for s in sc.services.values() for h in sc.resolve_hosts(s.hosts)} & set(gone))
    if len(kept) < floor or serving:
        why = (f"{', '.join(serving)} run{'s' if len(serving) == 1 else ''} a service" if serving else
               f"{len(kept)} of {len(sc.hosts)} hosts answered, settings.min_hosts is {floor}")
        pf.failures.append(("(all)", "min_hosts", f"the run cannot go on without {', '.join(gone)}: {why}"))
        return sc, cases, transports, None
    smaller = dataclasses.replace(sc, hosts={h: spec for h, spec in sc.hosts.items() if h in kept})
    empty = [t.name for t in smaller.targets.values() if t.hosts and not smaller.resolve_hosts(t.hosts)]
    if empty:
        pf.failures.append(("(all)", "min_hosts", f"targets {', '.join(empty)} would have no host left without "
                            f"{', '.join(gone)}"))
        return sc, cases, transports, None
    pf.failures = [f for f in pf.failures if not (f[1] == REACHABLE and f[0] in gone)]
    for h in gone:
        try:
            transports[h].close()
        except Exception:  # noqa: BLE001 - a host that never answered has nothing to close
            pass
    listed = "; ".join(f"{h} ({why})" for h, why in gone.items())
    warning = (f"hosts.{','.join(gone)}: left out of the run, not answering at preflight (settings.min_hosts "
               f"{floor}: {len(kept)} of {len(sc.hosts)} answered): {listed}")
    smaller.warnings = [*sc.warnings, warning]
    return smaller, plan_cases(smaller), {h: t for h, t in transports.items() if h in kept}, warning
