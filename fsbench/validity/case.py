"""The validity hook of one case: backend counters around its tool, verdicts on its rows (fsbench.run.case_run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from fsbench.api.case import Case
from fsbench.api.kind_numbers import WritesBack
from fsbench.api.tools import DeclaresWorkingSet, Writes
from fsbench.api.transport import Transport
from fsbench.core.at_once import Pending
from fsbench.validity.backends import ScopeCache, kind_sources
from fsbench.validity.judge import BESIDE, DETAIL, checks_of, judge
from fsbench.validity.namenode import namenode_sources
from fsbench.validity.pagecache import HostCache, host_cache
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import TOOL as BACKEND
from fsbench.validity.watch import BackendWatch, Evidence, sources

#: the resource monitor's rows (fsbench.monitor.parse.TOOL): figures of processes, judged by their own warnings
MONITOR = "monitor"
#: seconds beyond a client's write-back delay before its store's still counters mean it has uploaded
WRITE_BACK_MARGIN_S = 2.0


class ScenarioView(Protocol):
    """What the validity hook reads of a scenario (fsbench.scenario.model.Scenario, a layer above)."""

    @property
    def settings(self) -> Any: ...

    @property
    def targets(self) -> Mapping[str, Any]: ...

    @property
    def services(self) -> Mapping[str, Any]: ...

    def resolve_hosts(self, names: tuple[str, ...] | list[str]) -> list[str]: ...


class CaseValidity:
    """Snapshots the case's backends at the tool's start, its end and once they went quiet, then judges."""

    def __init__(self, sc: ScenarioView, case: Case, values: dict[str, str], transports: dict[str, Transport],
                 raw: Path, plugins: tuple[object, ...], scopes: ScopeCache | None = None) -> None:
        self.tool, self.plugins = case.tool, plugins
        self.limits = Thresholds.of(sc.settings.validity)
        kind, tool = (plugins[1] if len(plugins) > 1 else None), plugins[0]
        writes = not isinstance(tool, Writes) or tool.writes(case.options, case.job_file_text, case.jobs,
                                                              case.job_file)
        self.writes = writes
        if writes and isinstance(kind, WritesBack):  # a client that uploads seconds after close: still that long
            delay = kind.write_back_s(sc.targets[case.target])
            if delay > 0:
                self.limits = replace(self.limits, quiet_s=max(self.limits.quiet_s, delay + WRITE_BACK_MARGIN_S))
        services = []
        for name in sc.targets[case.target].services:
            svc = sc.services[name]
            services.append((name, svc.kind, sc.resolve_hosts(svc.hosts)[0]))
        here = transports[case.hosts[0]]
        self.watch = BackendWatch(sources(services, values, here, raw) + namenode_sources(services, values, here, raw),
                                  self.limits)
        # the target kind's own backend counters (JuiceFS's object requests, Ceph's OSDs), on the case's hosts
        hosts = [(h, transports[h]) for h in case.hosts if h in transports]
        if hosts:
            self.watch.sources += kind_sources(plugins, sc.targets[case.target], values, hosts, raw,
                                               self.watch.notes, scopes)
        self.case, self.transport = case, transports[case.hosts[0]]
        self.path = sc.targets[case.target].path  # a tmpfs there is memory by design: no page-cache flag
        self.host: HostCache | None = None  # the tool host's page cache at the start, for tools that say what they read
        self._host: Pending[HostCache | None] | None = None

    def begin(self) -> None:
        """The case's side jobs start (its page cache dropped already): the tool host's memory and page cache
        are read from now, beside the monitors' baseline samples, and taken at the tool's start. Nothing of
        the case runs between the two but the side jobs' own starts."""
        if self._host is None and isinstance(self.plugins[0], DeclaresWorkingSet):
            tool = self.plugins[0]
            self._host = Pending(lambda: host_cache(self.transport, self.case.drop_caches, tool, self.case, self.path),
                                 "fsbench-page-cache")

    def tool_start(self) -> None:
        """Just before the tool starts."""
        self.begin()
        if self._host is not None:
            self.host = self._host.result()
        self.watch.tool_start()

    def wait_begun(self) -> None:
        """Until what begin() started has ended (a case whose side jobs did not all start)."""
        if self._host is not None:
            self._host.wait()

    def tool_end(self) -> None:
        """Just after the tool ended."""
        self.watch.tool_end()

    def settle(self) -> None:
        """After the tool, while the case's files are still there: until the backends went quiet. A tool that
        writes nothing (a read of files laid out before it) leaves nothing to arrive later: its after window
        stays empty, without the quiet wait (a second a case, read four times on Ceph)."""
        if self.writes:
            self.watch.settle()

    def finish(self, rows: list[dict]) -> list[dict]:
        """Mark the tool's rows with the declared checks' verdicts; the backend rows to add to them."""
        seen = self.watch.evidence()
        if self.host is not None:
            seen = Evidence.host_only(self.host) if seen is None else replace(seen, host=self.host)
        judge(rows, self.tool, checks_of(*self.plugins), seen, self.limits)
        for r in rows:  # a collector's rows beside the tool (juicefs stats, profile, a command's)
            if r.get("tool") not in (self.tool, MONITOR, BACKEND) and not r.get(DETAIL):
                r[DETAIL] = (f"{BESIDE}{self.tool} by a collector, these are what the client or "
                             "the host counted itself: the evidence checks read, not a measurement of the storage")
        return self.watch.rows()
