"""The case loop: targets set up once (services around them), each case run by fsbench.run.case_run, records
kept for resume; failures are data, Ctrl-C stops cleanly."""

from __future__ import annotations

import shlex
import threading

from fsbench.api.tools import HostInfo
from fsbench.api.transport import Transport
from fsbench.core.cancel import Cancel
from fsbench.core.errors import FsbenchError, RunDirError
from fsbench.core.events import Event, Listener, ignore
from fsbench.host import facts
from fsbench.run.adaptive import Adaptive
from fsbench.run.case_context import host_infos
from fsbench.run.case_run import CaseEnv, CaseRun, ScopeCache, unexpected
from fsbench.run.leftovers import Leftovers, NoLeftovers
from fsbench.run.presence import ToolPresence, tools_of
from fsbench.run.records import Records, RunOutcome
from fsbench.run.rounds import run_rounds
from fsbench.run.scratch import ScratchFolders
from fsbench.run.store import STATUS_FAILED, STATUS_OK, STATUS_SKIPPED, RunDir, out_of_space, utc_now
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.run.targets.manager import ServiceManager
from fsbench.scenario import repetitions as reps
from fsbench.scenario.model import Scenario, Target
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.transport.local import LocalTransport


class Runner:
    """Executes planned cases into a run directory."""

    def __init__(self, scenario: Scenario, cases: list[Case], run_dir: RunDir, *,
                 listener: Listener = ignore, cancel: threading.Event | None = None,
                 transports: dict[str, Transport] | None = None, host_facts: list[dict] | None = None,
                 leftovers: Leftovers | NoLeftovers | None = None, secrets: dict[str, str] | None = None,
                 controller: Transport | None = None):
        self.sc, self.cases, self.rd, self.emit = scenario, cases, run_dir, listener
        self.cancel = cancel or Cancel()
        self.transports = transports or {h: LocalTransport(h) for h in scenario.hosts}
        #: where multi-host launchers run (mpirun, fio --client): this machine, unless a test gives a fake
        self.controller = controller or LocalTransport("controller")
        self.host_facts = host_facts
        self.leftovers = leftovers or NoLeftovers()
        for tr in [*self.transports.values(), self.controller]:
            tr.cap_output(int(scenario.settings.output_cap))  # sizes are checked as floats
        # a clean-up tried on a host that stopped answering stays for the next run
        self.leftovers.watch_hosts(self._host_down)
        self.secrets = dict(secrets or {})
        self.full = False  # the run directory's disk filled up
        self._controller: HostInfo | None = None
        self.scopes = ScopeCache()  # the backends' scopes (which OSDs and MDSs serve a target), for every case
        self.todo: tuple[Case, ...] = ()  # the cases this run runs (not those ok before a resume)
        self.book = Records(run_dir, cases)
        self.records = self.book.by_id
        self.adaptive = Adaptive(scenario, cases, self.book)

    def _finish_case(self, case: Case, status: str, reason: str = "", **extra: object) -> None:
        self.book.finish(case, status, reason, **extra)

    def run(self) -> RunOutcome:
        """Run every case that is not already ok; always tear targets down; write tables.

        However it ends, the manifest does not stay `running`: a Ctrl-C anywhere (clean-up and tables
        included) leaves it `interrupted`, a full disk `out-of-space` (exit 5), and a run directory that
        cannot be written `failed` with the error (RunDirError); all three are resumable.
        """
        try:
            return self._run()
        except KeyboardInterrupt:  # a second Ctrl-C: what is left is undone by the next run (leftovers)
            self.rd.settle("interrupted")
            raise
        except OSError as exc:
            return self._stopped_by(exc)
        except BaseException as exc:  # a bug: said with its traceback, the run directory still consistent
            self.rd.settle("failed", error=f"{type(exc).__name__}: {exc}")
            raise

    def _run(self) -> RunOutcome:
        self.book.keep_earlier()
        todo = [c for c in self.cases if self.records[c.case_id]["status"] != STATUS_OK]
        self.todo = tuple(todo)
        self.book.begin()
        estimate = sum(c.estimate_s for c in todo)
        self.emit(Event("run_start", total=len(todo), data={"estimate_s": estimate, "run_dir": str(self.rd.path)}))
        self.host_facts = hosts = self.host_facts if self.host_facts is not None else self._host_facts()
        presence = ToolPresence(self.sc, self.transports, hosts)
        order = [t for t in self.sc.targets if any(c.target == t for c in todo)]
        rounds = self.sc.settings.order == "rounds"
        if rounds:  # a service stops after the last case of its last target, wherever that falls
            order.sort(key=lambda name: max(i for i, c in enumerate(todo) if c.target == name))
        folders = ScratchFolders(self.sc.settings.scratch, self.rd.run_id, self.transports, self.leftovers, self.emit)
        folders.record()
        scratch = folders.path
        services = ServiceManager(self.sc, self.transports, self.rd.run_id, scratch, self.rd.path / "services",
                                  self.emit, order, self.leftovers, self.secrets)
        done = 0
        try:
            if rounds:
                run_rounds(self, todo, services, scratch, hosts, presence)
            for name in order if not rounds else ():
                if self.cancel.is_set() or self.full:
                    break
                done = self._run_target(self.sc.targets[name], [c for c in todo if c.target == name], services,
                                        scratch, hosts, presence, done, len(todo))
        finally:  # a second Ctrl-C here stops the clean-up: the leftovers have the rest for the next run
            services.stop_all()
            folders.remove()
        self.rd.write_hosts(hosts)
        return self._close()

    def _host_down(self, host: str) -> str | None:
        """Why a host was given up for this run (it stopped answering), else None."""
        tr = self.transports.get(host)
        return tr.dead if tr is not None else None

    def _stopped_by(self, exc: OSError) -> RunOutcome:
        """The end of a run whose run directory could not be written: out of space (resumable), or else."""
        if out_of_space(exc):
            if not self.full:
                self._disk_full(exc)
            return self.book.close_full(self.emit)
        where = exc.filename or self.rd.path
        self.rd.settle("failed", error=f"{where}: {exc.strerror or exc}")
        raise RunDirError(f"{where}: {exc.strerror or exc}: the run stopped; the finished cases are kept in "
                          f"{self.rd.path}: fix that, then resume with  fsbench run SCENARIO --resume "
                          f"{shlex.quote(str(self.rd.path))}") from None

    def _disk_full(self, exc: OSError) -> None:
        """The run directory's disk is full: stop after this case, with room for the clean-up's own writes."""
        self.full = True
        self.rd.release_reserve()
        self.emit(Event("warning", message=f"the run directory's disk is full ({exc}): stopping"))

    def _session(self, target: Target, services: ServiceManager, scratch: str) -> tuple[TargetSession, str | None]:
        """The target's session with its services started, and why it cannot be set up (None: it can)."""
        try:
            values, reason = services.ensure(target.services, self.cancel)
        except Exception as exc:  # noqa: BLE001 - a service plug-in's bug fails this target's cases only
            if isinstance(exc, OSError) and self.rd.is_about(exc):
                raise
            values, reason = {}, unexpected(self.rd, exc, self.rd.path / "services",
                                            f"while starting the services of {target.name}")
        session = TargetSession(target, self._target_transports(target), self.rd.run_id, self.emit,
                                scratch=scratch, service_values=values, service_dirs=services.dirs(target.services),
                                log_dir=self.rd.path / "targets" / target.name, leftovers=self.leftovers,
                                secrets=self.secrets)
        return session, reason

    def _run_target(self, target: Target, tcases: list[Case], services: ServiceManager, scratch: str,
                    hosts: list[dict], presence: ToolPresence, done: int, total: int) -> int:
        session, reason = self._session(target, services, scratch)
        try:
            ready = reason or self._setup(target, session, hosts)
            last_user = {c.dataset: c.case_id for c in tcases if c.dataset}
            for case in tcases:
                if self.cancel.is_set() or self.full:
                    break
                done += 1
                if not self._step(case, session, ready, presence, last_user.get(case.dataset) == case.case_id,
                                  done, total):
                    break
        except OSError as exc:  # full while setting the target up: its teardown still gets the reserve
            if not out_of_space(exc):
                raise
            self._disk_full(exc)
        finally:
            session.teardown()
            services.release(target.name)
        return done

    def _step(self, case: Case, session: TargetSession, ready: str | None, presence: ToolPresence, frees: bool,
              done: int, total: int) -> bool:
        """One case (or its skip when an adaptive case needs no more repetitions); False: stop the run."""
        decision = self.adaptive.decision(case)
        if decision is not None and not decision.more:  # the case's interval is narrow enough already
            self._finish_case(case, STATUS_SKIPPED, f"{reps.NOT_NEEDED}: {decision.detail}")
            self.emit(Event("case_end", case=case, index=done, total=total, status=STATUS_SKIPPED,
                            duration_s=0.0, message=self.records[case.case_id]["reason"]))
            return True
        self.emit(Event("case_start", case=case, index=done, total=total))
        try:
            self._one_case(case, session, ready, presence)
            if case.dataset and frees:
                session.remove_data(case.dataset, case.hosts)  # no later case reads it: free the space
        except OSError as exc:  # the run directory's disk is full: stop, record it, stay resumable
            if not out_of_space(exc):
                raise
            self._disk_full(exc)
            return False
        rec = self.records[case.case_id]
        self.emit(Event("case_end", case=case, index=done, total=total, status=rec["status"],
                        duration_s=float(rec["duration_s"] or 0), message=rec["reason"]))
        if self.sc.settings.cooldown_s and not self.cancel.is_set():
            self.cancel.wait(self.sc.settings.cooldown_s)
        return True

    def _setup(self, target: Target, session: TargetSession, hosts: list[dict]) -> str | None:
        """Set the target up (noting how each host reached it); None when ready, else why not."""
        try:
            return session.setup(self.cancel, hosts)
        except FsbenchError as exc:
            return f"target {target.name} could not be set up: {exc}"
        except Exception as exc:  # noqa: BLE001 - a kind plug-in's bug fails this target's cases only
            if isinstance(exc, OSError) and self.rd.is_about(exc):
                raise
            return unexpected(self.rd, exc, self.rd.path / "targets" / target.name, f"while setting up {target.name}")

    def _one_case(self, case: Case, session: TargetSession, ready: str | None, presence: ToolPresence) -> None:
        """Run one case, or record why it cannot run; an unexpected error fails this case only."""
        self.records[case.case_id]["started"] = utc_now()
        try:
            absent = presence.absent(case)
            if absent:
                skip, reason = presence.reason(case, absent)
                self._finish_case(case, STATUS_SKIPPED if skip else STATUS_FAILED, reason)
            elif ready is not None or session.fault:  # not ready, or an earlier case saw it fail (target_watch)
                self._finish_case(case, STATUS_FAILED, ready or f"not run: {session.fault}")
            else:
                self._run_case(case, session)
        except OSError as exc:
            if self.rd.is_about(exc):
                raise
            self._finish_case(case, STATUS_FAILED, unexpected(self.rd, exc, self.rd.path / "raw" / case.case_id))
        except FsbenchError as exc:  # a host lost while checking for the tool
            self._finish_case(case, STATUS_FAILED, str(exc))
        except Exception as exc:  # noqa: BLE001 - a plug-in's bug fails its case, the run goes on
            self._finish_case(case, STATUS_FAILED, unexpected(self.rd, exc, self.rd.path / "raw" / case.case_id))

    def _close(self) -> RunOutcome:
        if self.full:
            return self.book.close_full(self.emit)
        self.adaptive.write_csv()
        return self.book.close(self.cancel.is_set(), self.emit)

    def _controller_info(self) -> HostInfo:
        """This machine's facts, once (a local host's, already gathered): multi-host launchers run here."""
        if self._controller is None:
            here = {tr.host for tr in self.transports.values() if isinstance(tr, LocalTransport)}
            row = next((r for r in self.host_facts or () if r.get("host") in here), None)
            if row is None or not isinstance(self.controller, LocalTransport):
                row = facts.gather(self.controller, {})
            self._controller = HostInfo("controller", "127.0.0.1", facts=row)
        return self._controller

    def _host_facts(self) -> list[dict]:
        tools = {name: get_tool(name).version_argv() for name in sorted(tools_of(self.sc))}
        return [facts.gather(t, tools) for t in self.transports.values()]

    def _target_transports(self, target: Target) -> dict[str, Transport]:
        return {n: self.transports[n] for n in self.sc.resolve_hosts(target.hosts)}

    def _run_case(self, case: Case, session: TargetSession) -> None:
        self.records[case.case_id]["started"] = utc_now()
        env = CaseEnv(self.sc, self.rd, self.transports, self.controller, self._controller_info(), self.cancel,
                      self.emit, self.scopes, self.todo)
        outcome = CaseRun(env, case, host_infos(self.sc, case.hosts, self.host_facts)).run(session)
        self._finish_case(case, outcome.status, outcome.reason, **outcome.extra)
