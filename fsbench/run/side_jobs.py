"""What runs beside a case's tool (monitors, collectors, background servers, validity watches), behind one
interface and started, told and stopped in one loop."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from fsbench.api.transport import Transport
from fsbench.core.at_once import at_once, each
from fsbench.core.secrets import secret_env
from fsbench.core.tidy import ParseResult
from fsbench.kinds import KINDS
from fsbench.run.background import Background
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.validity.case import CaseValidity

if TYPE_CHECKING:
    from fsbench.api.streams import Streams

#: how long collectors get to open their sources (the access log, a stats file) before the tool starts
COLLECTOR_START_S = 1.0


class SideJob(Protocol):
    """A lifecycle beside the tool: start, the tool's start and end, stop, then what it saw."""

    def start(self) -> str | None:
        """Start it; None when ready, else why the case cannot run (nothing of the tool has run yet)."""
        ...

    def tool_start(self) -> None:
        """The tool starts now."""
        ...

    def tool_end(self) -> None:
        """The tool ended now (also after it failed or was interrupted)."""
        ...

    def stop(self) -> None:
        """Stop what it started (never raises for what it watched)."""
        ...

    def collect(self) -> list[ParseResult]:
        """Its rows and warnings, once stopped."""
        ...

    def lost(self) -> dict[str, str]:
        """The hosts whose connection was lost while it ran, and how, once stopped."""
        ...


class QuietSideJob:
    """A side job's hooks that do nothing: each side job below overrides the ones it needs."""

    def start(self) -> str | None:
        return None

    def tool_start(self) -> None:
        return None

    def tool_end(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def collect(self) -> list[ParseResult]:
        return []

    def lost(self) -> dict[str, str]:
        return {}


class SideJobs:
    """Side jobs in the order they start; stopped at once, whatever happened in between."""

    def __init__(self, jobs: Sequence[SideJob]):
        self.jobs = list(jobs)
        self._started: list[SideJob] = []

    def start(self) -> str | None:
        """Start each in turn; the first refusal ends the starting (stop() undoes what started)."""
        for job in self.jobs:
            self._started.append(job)
            refused = job.start()
            if refused:
                return refused
        return None

    def tool_start(self) -> None:
        for job in self._started:
            job.tool_start()

    def tool_end(self) -> None:
        for job in self._started:
            job.tool_end()

    def stop(self) -> None:
        """Stop them all at once: each stop waits on its own (a last sample, a process's end), so the case
        waits for the slowest instead of for their sum."""
        at_once([job.stop for job in reversed(self._started)])

    def collect(self) -> list[ParseResult]:
        return [part for job in self._started for part in job.collect()]

    def lost(self) -> dict[str, str]:
        """Hosts lost while the case ran, as any side job saw it (a sampler, a server): the case's failure is
        theirs to explain, since a tool on the controller (fio --client) only sees a peer go silent."""
        return {host: how for job in self._started for host, how in job.lost().items()}


class Monitors(QuietSideJob):
    """The /proc samplers of the case's hosts (fsbench.monitor.MonitorSession)."""

    def __init__(self, sessions: list, interval_s: float, cancel: threading.Event):
        self.sessions, self.interval_s, self.cancel = sessions, interval_s, cancel
        self._began = 0.0
        self._streams: Streams | None = None
        self._summaries: list[ParseResult] = []

    def start(self) -> str | None:
        from fsbench.api.streams import Streams

        self._began = time.monotonic()
        # every host's sampler started at once (through relays all from this thread, else a thread each for the
        # whole case), then their first samples (the baselines) waited for
        max_s = max((m.max_s for m in self.sessions), default=0.0)
        streams = Streams([m.prepare() for m in self.sessions], timeout=max_s + 60.0, name="monitor")
        self._streams = streams
        for i, m in enumerate(self.sessions):
            m.attach(streams, i)
        each(self.sessions, lambda m: m.wait_first_sample())
        return None

    def stop(self) -> None:
        # a long case has its tail sampled already; a short one waits for one more sample
        short = time.monotonic() - self._began < 3 * self.interval_s
        final = short and not self.cancel.is_set()
        if self._streams is not None:
            self._streams.stop()  # every host's sampler in one step; each session then reads its own
        self._summaries = [m.stop(final_sample=final) for m in self.sessions]

    def collect(self) -> list[ParseResult]:
        from fsbench.monitor.pace import slower_note

        # each session's interval is the one its sampler ran at (monitors_of paced it for the case's hosts)
        every = max((m.interval_s for m in self.sessions), default=self.interval_s)
        if every <= self.interval_s:
            return self._summaries
        return [*self._summaries, ParseResult(warnings=[slower_note(every, self.interval_s, len(self.sessions))])]

    def lost(self) -> dict[str, str]:
        return {m.host: m.result.extra["lost"] for m in self.sessions if m.result and "lost" in m.result.extra}


class Collectors(QuietSideJob):
    """The scenario's collectors of the case (fsbench.collectors.session), their means over the tool's run."""

    def __init__(self, sessions: list, controller: Transport):
        from fsbench.collectors.session import CollectorSessions

        self.sessions, self.controller = sessions, controller
        self.running = CollectorSessions(sessions)

    def start(self) -> str | None:
        self.running.start()
        if self.sessions:
            time.sleep(COLLECTOR_START_S)
        return None

    def tool_start(self) -> None:
        for c in self.sessions:
            c.mark_tool_start()

    def tool_end(self) -> None:
        for c in self.sessions:
            c.mark_tool_end()

    def stop(self) -> None:
        self.running.stop()

    def collect(self) -> list[ParseResult]:
        out = []
        for c in self.sessions:
            got = c.finish(self.controller)
            out.append(ParseResult(list(got.rows), list(got.warnings)))
        return out


class Servers(QuietSideJob):
    """A tool's background servers (fio --server): started, listening before the tool, stopped after it."""

    def __init__(self, commands: dict[str, list[str]], transports: dict[str, Transport],
                 raw_dir: Callable[[str], Path], timeout_s: float, ports: list[tuple[str, int]],
                 marker: dict[str, str] | None = None):
        self.background = Background(commands, transports, raw_dir, timeout_s, marker=marker)
        self.ports = ports

    def start(self) -> str | None:
        self.background.start()
        return self.background.wait_ports(self.ports)

    def stop(self) -> None:
        self.background.stop()

    def lost(self) -> dict[str, str]:
        return {h: r.extra["lost"] for h, r in self.background.results.items() if "lost" in r.extra}


class Validity(QuietSideJob):
    """The store's counters around the tool (fsbench.validity.CaseValidity); judged once the rows exist. The
    first side job to start: the tool host's page cache is read while the others start (the monitors wait
    for their baseline samples), not after them."""

    def __init__(self, watch: CaseValidity, cancel: threading.Event):
        self.watch, self.cancel = watch, cancel
        self._ended = False

    def start(self) -> str | None:
        self.watch.begin()
        return None

    def tool_start(self) -> None:
        self.watch.tool_start()

    def tool_end(self) -> None:
        self.watch.tool_end()
        self._ended = True

    def stop(self) -> None:
        self.watch.wait_begun()  # no command of the case still runs once it is stopped
        # what the client still uploads after the tool (a write-back), waited for while the samplers and
        # collectors stop beside it, and before the case's files go; not after an interrupted run
        if self._ended and not self.cancel.is_set():
            self.watch.settle()


def _clients(sc: Scenario, case: Case, session: TargetSession, hosts: list[str]) -> dict:
    """The target's client process on each host: its name, and the words of its own command line."""
    from fsbench.monitor import Client

    target = sc.targets[case.target]
    name = target.client_process or KINDS.get(target.kind).client_process
    if not name:
        return {}
    # only the target's hosts run its client: a service's host has no mount of it, so none is looked for there
    return {h: Client(name, session.plan(h).client_match(target.path)) for h in hosts if h in session.transports}


def monitors_of(sc: Scenario, case: Case, session: TargetSession, hosts: list[str],
                transports: dict[str, Transport], raw_of: Callable[[str], Path]) -> list:
    """One /proc sampler per host the case involves (none when the scenario's monitor is off), each sampled
    as often as the controller's budget for samples allows on so many hosts (fsbench.monitor.pace)."""
    mon = sc.monitor
    if not mon.enabled:
        return []
    from fsbench.monitor import MonitorSession
    from fsbench.monitor.pace import pace
    from fsbench.run.monitor_expect import expected_processes

    clients = _clients(sc, case, session, hosts)
    paced = pace(mon.interval_s, len(hosts))
    # never warn about another target's processes, nor about a process on a host where it does not live; the
    # target's services' processes are the run's by their folders too (a title over the marker: redis-server)
    return [MonitorSession(transports[h], h, paced.interval_s, list(mon.processes), raw_of(h) / "monitor.txt",
                           max_s=case.timeout_s + 120, client=clients.get(h),
                           expected=expected_processes(sc, case.target, KINDS, h),
                           folders=session.service_dirs.get(h, ()), first_interval_s=paced.first_interval_s)
            for h in hosts]


def collectors_of(sc: Scenario, case: Case, session: TargetSession, test_dir: str,
                  transports: dict[str, Transport], raw_of: Callable[[str], Path]) -> list:
    """The scenario's collectors that apply to this case, one session per host they run on."""
    from fsbench.collectors import COLLECTORS
    from fsbench.collectors.session import CollectorSession

    out = []
    for c in sc.collectors.values():
        kind = COLLECTORS.get(c.kind)
        if not c.applies(case.target, case.workload, sc.collector_targets(c, kind.target_kinds)):
            continue
        for h in (sc.resolve_hosts(c.hosts) if c.hosts else list(case.hosts)):
            values = {**session.values(h), "case.id": case.case_id, "case.dir": test_dir}
            out.append(CollectorSession(c, kind, h, transports[h], kind.command(c, values), raw_of(h),
                                        case.timeout_s + 120, env=secret_env(values)))
    return out
