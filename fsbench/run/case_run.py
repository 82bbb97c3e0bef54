"""One case's execution: prepare (untimed), cache drops, side jobs, the tool, raw output first, then rows.

The case loop (fsbench.run.runner) decides which cases run and keeps their records; this module runs
one of them and says how it ended as a CaseOutcome, never by raising. Its steps live beside it: staging
and the tool's commands (tool_run), what runs beside the tool (side_jobs), dataset reuse (layout_reuse),
cache drops (case_caches), the outcome and rows (case_outcome).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.api.tools import HostInfo, Invocation
from fsbench.api.transport import Transport, work_name
from fsbench.core import warmup
from fsbench.core.at_once import Pending, each
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.events import Event, Listener, ignore
from fsbench.core.secrets import has_secrets, redact_tree
from fsbench.run import side_jobs
from fsbench.run.case_caches import drop_client_cache, drop_page_caches
from fsbench.run.case_context import case_context
from fsbench.run.case_hosts import clean_up, make_folders
from fsbench.run.case_outcome import CaseOutcome, case_rows, ended, failed, parse, row_context, unexpected
from fsbench.run.case_phases import CasePhases
from fsbench.run.layout_reuse import case_layout
from fsbench.run.run_processes import CASE_MARKER
from fsbench.run.store import RunDir
from fsbench.run.target_watch import TargetWatch, watch_of
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.run.targets.services import free_port
from fsbench.run.tool_run import ToolRun, fetch, stage, where_of
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.validity.backends import ScopeCache
from fsbench.validity.case import CaseValidity

__all__ = ["CaseEnv", "CaseOutcome", "CaseRun", "unexpected"]

PREPARE = "prepare"


@dataclass
class CaseEnv:
    """What every case of a run shares: the scenario, the run directory, the hosts, Ctrl-C and the listener."""

    sc: Scenario
    rd: RunDir
    transports: dict[str, Transport]
    controller: Transport  # where multi-host launchers run (mpirun, fio --client)
    controller_info: HostInfo
    cancel: threading.Event = field(default_factory=threading.Event)
    emit: Listener = ignore
    #: the backends' scopes read by earlier cases of the run (which OSDs and MDSs serve a target), reused a few
    #: minutes: the runner's, shared by all its cases
    scopes: ScopeCache = field(default_factory=ScopeCache)
    coming: tuple[Case, ...] = ()  # the run's cases (a dataset's first layout holds what its later ones read)


class CaseRun:
    """Runs one case on its hosts, raw output into the run directory before anything parses it."""

    def __init__(self, env: CaseEnv, case: Case, hosts: dict[str, HostInfo]):
        self.env, self.case, self.hosts = env, case, hosts
        self.sc, self.rd, self.transports, self.cancel, self.emit = env.sc, env.rd, env.transports, env.cancel, env.emit
        self.tool = get_tool(case.tool)
        self.validity: CaseValidity | None = None  # backend counters around the tool, verdicts on its rows
        self.notes: list[str] = []  # warnings of the case itself (output capped, strays stopped)
        self._used: dict[str, Transport] = {}  # hosts the case ran commands on: where its strays may be
        self.watch: TargetWatch | None = None  # the mount's watch while the tool runs (a fault ends the case)
        self.phases = CasePhases()  # fsbench's own steps of the case, timed (raw/<case>/phases.json)

    def run(self, session: TargetSession) -> CaseOutcome:
        """Execute the case; failures of any step become the outcome, never an exception.

        The one exception: an OSError of the run directory itself (a full disk) stops the run.
        """
        start = time.monotonic()
        self.phases.restart()
        try:
            outcome = self._run(session, start)
        except OSError as exc:
            if self.rd.is_about(exc):
                raise
            outcome = failed(unexpected(self.rd, exc, self.rd.path / "raw" / self.case.case_id), start)
        except Exception as exc:  # noqa: BLE001 - a plug-in's bug (build, parse, a monitor) fails its case only
            outcome = failed(unexpected(self.rd, exc, self.rd.path / "raw" / self.case.case_id), start)
        if self.notes:
            outcome.extra["warnings"] = "; ".join(w for w in (outcome.extra.get("warnings"), *self.notes) if w)
        self._phase("parse and record")
        try:
            self.phases.write(self.rd.path / "raw" / self.case.case_id)
        except OSError as exc:
            if self.rd.is_about(exc):
                raise
        return outcome

    def _phase(self, step: str) -> None:
        self.phases.end(step)

    # -- helpers the steps share ------------------------------------------------------------------
    def _raw(self, host: str) -> Path:
        return self.rd.raw_dir(self.case.case_id, host)

    def _note_capped(self, result: CommandResult | None) -> None:
        """Say in the case's warnings which output went over the cap (settings.output_cap)."""
        if result is not None:
            self.notes += [f"{result.host}: {n}" for n in result.extra.get("capped", [])]

    def _tool_run(self, env: dict[str, str] | None) -> ToolRun:
        """The case's commands: its timeout and Ctrl-C, the tool's environment and the case's marker
        (fsbench.run.leftovers), which tells its strays from the run's long-lived processes."""
        cancel = self.watch.tool_cancel if self.watch is not None else self.cancel  # the watch passes Ctrl-C on
        return ToolRun(self.case, cancel, {**(env or {}), CASE_MARKER: self.case.case_id}, self._note_capped)

    def _stage(self, inv: Invocation, transport: Transport, raw: Path) -> str:
        self._used[where_of(transport)] = transport
        return stage(inv, transport, raw, work_name(self.rd.run_id, self.case.case_id, where_of(transport)))

    def _servers(self, inv: Invocation, raw_of: Callable[[str], Path]) -> side_jobs.Servers:
        self._used.update({h: self.transports[h] for h in inv.servers})
        return side_jobs.Servers(inv.servers, self.transports, raw_of, self.case.timeout_s + 60, inv.wait_ports,
                                 marker={CASE_MARKER: self.case.case_id})

    def _clean_up(self, hosts: dict[str, Transport], path: str | None) -> None:
        """Stop what the case's commands left running on every host it used, then remove its folder (path; None:
        it stays) on its hosts (fsbench.run.case_hosts)."""
        self.notes += clean_up(self._used, hosts, path, self.rd.run_id, self.case.case_id, self.emit)

    # -- the steps ----------------------------------------------------------------------------------
    def _run(self, session: TargetSession, start: float) -> CaseOutcome:
        case = self.case
        folder = session.kind.address == "directory"  # devices and URLs: the tool addresses the path itself
        dataset = bool(case.dataset) and folder
        hosts = {h: self.transports[h] for h in case.hosts}
        validity: Pending[CaseValidity] | None = None
        ctx, test_dir = case_context(session, case, self.hosts, self.env.controller_info, self.rd.run_id,
                                     free_port())
        try:
            inv = self.tool.build(case, test_dir, ctx)
            layout = case_layout(self.tool, case, session, ctx, test_dir, folder, self.transports[case.hosts[0]],
                                 self._raw(case.hosts[0]) / PREPARE, self.cancel, self.env.coming)
            make_folders(hosts, inv.host_dirs, test_dir, folder, dataset and case.fresh)
            self._phase("build and folders")
            where = "controller" if inv.controller else case.hosts[0]
            transport = self.env.controller if inv.controller else hosts[where]
            raw = self._raw(where)
            # the backends' scope (which OSDs serve the target: monitor queries) is found while the case
            # lays out its files, stages and drops caches; it has ended before anything is measured
            validity = Pending(lambda: CaseValidity(self.sc, case, session.values(case.hosts[0]), self.transports,
                                                    raw, (self.tool, session.kind), self.env.scopes),
                                "fsbench-validity-scope")
            if layout.prep is not None:  # before the measured run is staged: on a remote host both use one folder
                reason, prep_result = self._prepare(layout.prep, transport, raw / PREPARE)
                if reason:
                    return failed(reason, start, prep_result)
                layout.done(case, test_dir)
                self._phase("prepare")
            work = self._stage(inv, transport, raw) if not inv.per_host else ""
            staged = each(list(inv.per_host), lambda h: self._stage(Invocation(argv=inv.per_host[h], files=inv.files),
                                                                    hosts[h], self._raw(h)))
            works = dict(zip(inv.per_host, staged, strict=True))
            self._phase("stage")
            involved = self._involved()
            dropped = self._drops(session, involved)
            if dropped:
                return failed(dropped, start)
            warmup.settle()  # fsbench's background imports end before the measurement (the drop runs beside them)
            self._phase("cache drops")
            self.validity = validity.result()
            self._phase("validity scope")
            jobs = self._side_jobs(session, inv, involved, test_dir, self.validity)
            result, beside, not_listening = self._measure(inv, transport, work, raw, involved, works, jobs)
            lost = jobs.lost()
            if self.watch is not None and self.watch.fault:  # the system under test failed under the tool
                return failed(self.watch.fault, start)
            if not_listening or result is None:
                return failed(f"{case.tool} server did not start: {not_listening}", start)
            ran = {h: (hosts[h], w, self._raw(h)) for h, w in works.items()} or {where: (transport, work, raw)}
            self._phase("side jobs stop and collect")
            each(list(ran.values()), lambda one: fetch(inv.outputs, *one))
            self._phase("fetch")
            if not works:  # each host of a per-host run has its own exit status already
                (raw / "exit_status").write_text(f"{result.exit_status}\n")
        except FsbenchError as exc:
            return failed(str(exc), start)
        finally:
            if validity is not None:  # a case that failed before its measurement: the scope's commands end first
                validity.wait()
            # strays stopped before its folder goes (a stray writer could recreate files in it); a dataset's files
            # stay for the target's next cases; a faulted mount would hang the removal for ever
            self._clean_up(hosts, test_dir if folder and not dataset and not session.fault else None)
            self._phase("clean-up")
        if has_secrets():  # a tool that echoed a secret: masked in raw/ before anything reads it
            redact_tree(self.rd.path / "raw" / case.case_id)
        names = {info.address: h for h, info in ctx.hosts.items()}
        # a one-host tool on a case of several hosts (juicefs bench): its figures are that host's, not `all`
        alone = where if len(case.hosts) > 1 and not (inv.controller or inv.per_host or inv.servers) else ""
        return self._record(raw, result, round(time.monotonic() - start, 3), beside, names, list(works), alone, lost)

    def _drops(self, session: TargetSession, involved: list[str]) -> str | None:
        """The client's cache emptied, then the page cache dropped, as the case asks; why not, or None."""
        case = self.case
        dropped = drop_client_cache(session, case.hosts, self._raw, self.notes) if case.drop_client_cache else None
        return dropped or (self._drop(involved) if case.drop_caches else None)

    def _side_jobs(self, session: TargetSession, inv: Invocation, involved: list[str], test_dir: str,
                   validity: CaseValidity) -> side_jobs.SideJobs:
        """What runs beside the tool, in the order it starts: validity watches (reading the page cache while the
        others start), monitors, collectors, servers, the target's fault watch."""
        sc, case = self.sc, self.case
        monitors = side_jobs.monitors_of(sc, case, session, involved, self.transports, self._raw)
        collectors = side_jobs.collectors_of(sc, case, session, test_dir, self.transports, self._raw)
        self.watch = watch_of(session, list(case.hosts), self.transports, self.cancel, sc.settings)
        return side_jobs.SideJobs([side_jobs.Validity(validity, self._tool_run(None).cancel),  # none if faulted
                                   side_jobs.Monitors(monitors, sc.monitor.interval_s, self.cancel),
                                   side_jobs.Collectors(collectors, self.env.controller),
                                   self._servers(inv, self._raw),
                                   *([self.watch] if self.watch else [])])

    def _drop(self, hosts: list[str], record: str = "drop_caches.json") -> str | None:
        """Drop the page cache on every involved host; the proof goes to raw/."""
        return drop_page_caches(self.transports, hosts, self._raw, self.case.drop_level, record)

    def _prepare(self, prep: Invocation, transport: Transport, raw: Path) -> tuple[str | None, CommandResult | None]:
        """The untimed, unmonitored layout pass, its output kept apart in raw/<case>/<host>/prepare/."""
        raw.mkdir(parents=True, exist_ok=True)
        self.emit(Event("prepare", message=f"{self.case.case_id}: laying out the files it reads (not measured)",
                        case=self.case))
        work = self._stage(prep, transport, raw)

        def raw_of(h: str) -> Path:
            path = self._raw(h) / PREPARE
            path.mkdir(parents=True, exist_ok=True)
            return path

        servers = side_jobs.SideJobs([self._servers(prep, raw_of)])
        try:
            not_listening = servers.start()
            if not_listening:
                return f"{self.case.tool} server did not start for the prepare step: {not_listening}", None
            r = self._tool_run(prep.env).one(prep.argv, transport, work, raw)
        finally:
            servers.stop()
        (raw / "exit_status").write_text(f"{r.exit_status}\n")
        fetch(prep.outputs, transport, work, raw)
        if not r.ok:
            what = "interrupted" if r.interrupted else f"timed out after {self.case.timeout_s:.0f}s" \
                if r.timed_out else "failed"
            return f"the prepare step (laying out the files to read, not measured) {what} {r.describe()}", r
        return None, r

    def _measure(self, inv: Invocation, transport: Transport, work: str, raw: Path, involved: list[str],
                 works: dict[str, str], jobs: side_jobs.SideJobs,
                 ) -> tuple[CommandResult | None, list, str | None]:
        """The side jobs around the tool's run: (result, what they saw, why one could not start)."""
        result = None
        try:
            not_listening = jobs.start()
            self._phase("side jobs start")
            if not_listening:
                return None, [], not_listening
            jobs.tool_start()
            commands = self._tool_run(inv.env)
            if works:
                result = commands.each(inv.per_host, self.transports, works, self._raw)
            else:
                result = commands.steps(inv, transport, work, raw, lambda i: self._drop(
                    involved, f"drop_caches-{i}.json") if self.case.drop_caches else None)
        finally:
            self._phase("tool")
            jobs.tool_end()
            jobs.stop()
        return result, jobs.collect(), None

    def _involved(self) -> list[str]:
        """Hosts a case touches: its own and those of its target's services."""
        hosts = list(self.case.hosts)
        for s in self.sc.targets[self.case.target].services:
            hosts += [h for h in self.sc.resolve_hosts(self.sc.services[s].hosts) if h not in hosts]
        return hosts

    def _record(self, raw: Path, result: CommandResult, duration: float, beside: list,
                names: dict[str, str], per_host: list[str], alone: str, lost: dict[str, str]) -> CaseOutcome:
        outcome, parsed = ended(self.case, result, duration,
                                lambda: parse(self.tool, raw, {h: self._raw(h) for h in per_host}), raw, lost)
        if parsed is None:
            return outcome
        rows, warnings = case_rows(self.rd.run_id, self.sc.name, self.case, parsed, names, beside, alone)
        if self.validity:  # verdicts on the tool's rows (fsbench.validity), and the backends' own rows
            rows += [{**row_context(self.rd.run_id, self.sc.name, self.case), **r} for r in self.validity.finish(rows)]
        self.rd.set_case_rows(self.case.case_id, rows)
        outcome.extra["warnings"] = "; ".join(warnings)
        return outcome
