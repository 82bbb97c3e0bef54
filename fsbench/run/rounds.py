"""settings.order: rounds: the cases in plan order, every target of a round up at once.

Each target is set up before its first case and torn down after its last; with settings.fresh, before its
first case of each round and after its last of it (`targets`: what its setup formatted is undone, so the next
round's setup makes it anew), and with `fresh: services` the services a round used are stopped once its last
target using them is torn down, to be started anew (a new folder, ports and server) by the next round.
"""

from __future__ import annotations

import threading
from typing import Protocol

from fsbench.api.case import Case
from fsbench.run.presence import ToolPresence
from fsbench.run.store import out_of_space
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.run.targets.manager import ServiceManager
from fsbench.scenario.model import Scenario, Target


class CaseLoop(Protocol):
    """What the rounds need of the run's case loop (fsbench.run.runner.Runner)."""

    sc: Scenario
    cancel: threading.Event
    full: bool

    def _session(self, target: Target, services: ServiceManager, scratch: str) -> tuple[TargetSession, str | None]:
        ...

    def _setup(self, target: Target, session: TargetSession, hosts: list[dict]) -> str | None: ...

    def _step(self, case: Case, session: TargetSession, ready: str | None, presence: ToolPresence, frees: bool,
              done: int, total: int) -> bool: ...

    def _disk_full(self, exc: OSError) -> None: ...


def run_rounds(runner: CaseLoop, todo: list[Case], services: ServiceManager, scratch: str, hosts: list[dict],
               presence: ToolPresence) -> None:
    """Run `todo` (in rounds order) for the runner, setting targets up and down as the rounds need."""
    sc = runner.sc
    fresh = sc.settings.fresh != "none"
    turn = (lambda c: (c.target, c.repetition)) if fresh else (lambda c: (c.target, 0))
    last, last_turn = {c.target: c.case_id for c in todo}, {turn(c): c.case_id for c in todo}
    last_user = {(*turn(c), c.dataset): c.case_id for c in todo if c.dataset}
    # fresh: services: each service's last case of a round, and of the run (where it stops for good)
    round_end = {(s, c.repetition): c.case_id for c in todo for s in sc.targets[c.target].services}
    run_end = {s: c.case_id for c in todo for s in sc.targets[c.target].services}
    sessions: dict[str, tuple[TargetSession, str | None]] = {}
    applied: dict[str, str] = {}  # service -> the target whose setup commands last ran against it
    done = 0
    try:
        for case in todo:
            if runner.cancel.is_set() or runner.full:
                break
            target = sc.targets[case.target]
            if case.target not in sessions:
                session, reason = runner._session(target, services, scratch)
                sessions[case.target] = (session, reason)
                sessions[case.target] = (session, reason or runner._setup(target, session, hosts))
                applied.update(dict.fromkeys(target.services, case.target))
            session, ready = sessions[case.target]
            if ready is None and any(applied.get(s, case.target) != case.target for s in target.services):
                # another target's setup commands ran against a service shared with this one since (e.g.
                # Redis' appendfsync set per target): run this target's again, so the case measures its own
                ready = session.reapply(runner.cancel)
                applied.update(dict.fromkeys(target.services, case.target))
            done += 1
            if not runner._step(case, session, ready, presence,
                                last_user.get((*turn(case), case.dataset)) == case.case_id, done, len(todo)):
                break
            if last_turn[turn(case)] == case.case_id:  # a fresh round's end: its next setup formats anew
                sessions.pop(case.target)
                session.teardown(unformat=last[case.target] != case.case_id)
            if last[case.target] == case.case_id:
                services.release(case.target)
            if sc.settings.fresh == "services":
                for s in target.services:
                    if round_end[(s, case.repetition)] == case.case_id != run_end[s]:
                        services.renew(s)
                        applied.pop(s, None)
    except OSError as exc:  # full while setting a target up: the teardowns still get the reserve
        if not out_of_space(exc):
            raise
        runner._disk_full(exc)
    finally:
        for name, (session, _) in sessions.items():
            session.teardown()
            services.release(name)
