"""The validity hook of one case: backend counters around its tool, verdicts on its rows (fsbench.case_run)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fsbench.transport.base import Transport
from fsbench.validity.judge import checks_of, judge
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import BackendWatch, sources

if TYPE_CHECKING:
    from fsbench.scenario.model import Scenario
    from fsbench.scenario.plan import Case


class CaseValidity:
    """Snapshots the case's backends at the tool's start, its end and once they went quiet, then judges."""

    def __init__(self, sc: "Scenario", case: "Case", values: dict[str, str], transports: dict[str, Transport],
                 raw: Path, plugins: tuple[object, ...]):
        self.tool, self.plugins = case.tool, plugins
        self.limits = Thresholds.of(getattr(sc.settings, "validity", None))
        services = []
        for name in sc.targets[case.target].services:
            svc = sc.services[name]
            services.append((name, svc.kind, sc.resolve_hosts(svc.hosts)[0]))
        self.watch = BackendWatch(sources(services, values, transports[case.hosts[0]], raw), self.limits)

    def tool_start(self) -> None:
        """Just before the tool starts."""
        self.watch.tool_start()

    def tool_end(self) -> None:
        """Just after the tool ended."""
        self.watch.tool_end()

    def settle(self) -> None:
        """After the tool, while the case's files are still there: until the backends went quiet."""
        self.watch.settle()

    def finish(self, rows: list[dict]) -> list[dict]:
        """Mark the tool's rows with the declared checks' verdicts; the backend rows to add to them."""
        judge(rows, self.tool, checks_of(*self.plugins), self.watch.evidence(), self.limits)
        return self.watch.rows()
