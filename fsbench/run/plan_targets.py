"""`fsbench plan --show`: each target's own commands (setup, mount, ready, unmount, teardown) as they will run."""

from __future__ import annotations

import shlex

from fsbench.core.secrets import redact
from fsbench.core.shell import render
from fsbench.kinds import KINDS
from fsbench.run.planned import PlannedSession
from fsbench.scenario.model import Scenario


def describe_target(sc: Scenario, name: str) -> str:
    """The target's commands on its first host, filled in as the run will fill them."""
    t = sc.targets[name]
    kind = KINDS.get(t.kind)
    hosts = sc.resolve_hosts(t.hosts)
    session = PlannedSession(sc, t)  # the values and kind plan a run's session derives, run-time ones as written
    values = session.values(hosts[0])
    lines = [f"== target {name} ({kind.name}) on {', '.join(hosts)}: its commands on {hosts[0]} (the others' "
             "differ only in ${host.name}); ${...} is known when the run starts; each line runs with /bin/sh -e -c"]
    lines += _block("setup", [render(c, values) for c in t.setup])
    try:
        plan = session.plan(hosts[0])
    except Exception:  # noqa: BLE001 - only a display: a kind that needs the run's real values shows no commands
        plan = None
    if plan is not None:
        mount = plan.prepare + plan.once + plan.mount
        lines += _block(f"{kind.name}: prepare and mount", [shlex.join(a) for a in mount])
    lines += _block("ready check", [render(t.ready, values)] if t.ready else [])
    if plan is not None:
        lines += _block(f"{kind.name}: unmount", [shlex.join(a) for a in plan.unmount + plan.after])
    lines += _block("teardown", [render(c, values) for c in t.teardown])
    if plan is not None and sc.settings.order == "rounds" and sc.settings.fresh != "none":
        lines += _block(f"{kind.name}: after each round but the last (fresh rounds), once every host has unmounted",
                        [shlex.join(a) for a in plan.unformat])
    return redact("\n".join(lines) + "\n")  # secrets masked as in everything a run writes


def _block(title: str, commands: list[str]) -> list[str]:
    return [f"-- {title}:", *(f"   $ {c}" for c in commands)] if commands else []
