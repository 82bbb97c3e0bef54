"""The case loop: targets set up once (services around them), each case run by fsbench.run.case_run, records
kept for resume; failures are data, Ctrl-C stops cleanly."""

from __future__ import annotations

import posixpath
import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError, RunDirError
from fsbench.core.events import Event, Listener, ignore
from fsbench.host import facts
from fsbench.run.case_run import CaseRun, unexpected
from fsbench.run.leftovers import NoLeftovers
from fsbench.run.store import STATUS_FAILED, STATUS_OK, STATUS_PENDING, STATUS_SKIPPED, RunDir, out_of_space, utc_now
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.run.targets.manager import ServiceManager
from fsbench.scenario import repetitions as reps
from fsbench.scenario.model import Scenario, Target
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.tools.base import HostInfo
from fsbench.transport.local import LocalTransport

EXIT_OUT_OF_SPACE = 5

@dataclass
class RunOutcome:
    """How a run ended: its directory and the count of cases per status."""

    run_dir: Path
    counts: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    out_of_space: bool = False

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        if self.out_of_space:
            return EXIT_OUT_OF_SPACE
        good = self.counts.get(STATUS_OK, 0) + self.counts.get(STATUS_SKIPPED, 0)
        return 0 if good == sum(self.counts.values()) else 1


class Runner:
    """Executes planned cases into a run directory."""

    def __init__(self, scenario: Scenario, cases: list[Case], run_dir: RunDir, *,
                 listener: Listener = ignore, cancel: threading.Event | None = None,
                 transports: dict[str, Transport] | None = None, host_facts: list[dict] | None = None,
                 leftovers=None, secrets: dict[str, str] | None = None, controller: Transport | None = None):
        self.sc, self.cases, self.rd = scenario, cases, run_dir
        self.emit = listener
        self.cancel = cancel or threading.Event()
        self.transports = transports or {h: LocalTransport(h) for h in scenario.hosts}
        #: where multi-host launchers run (mpirun, fio --client): this machine, unless a test gives a fake
        self.controller = controller or LocalTransport("controller")
        self.host_facts = host_facts
        self._presence: dict[tuple, bool] = {}
        self.leftovers = leftovers or NoLeftovers()
        for tr in [*self.transports.values(), self.controller]:
            if hasattr(tr, "output_cap"):  # (a transport plug-in may keep whole outputs)
                tr.output_cap = scenario.settings.output_cap
        watch = getattr(self.leftovers, "watch_hosts", None)
        if watch is not None:  # a clean-up tried on a host that stopped answering stays for the next run
            watch(self._host_down)
        self.secrets = dict(secrets or {})
        self.full = False  # the run directory's disk filled up
        self._controller: HostInfo | None = None
        self.records: dict[str, dict] = {}

    # -- bookkeeping -------------------------------------------------------------------------
    def _init_records(self) -> None:
        previous = self.rd.manifest.get("cases", {})
        for c in self.cases:
            self.records[c.case_id] = {
                "case_id": c.case_id, "index": c.index, "target": c.target, "workload": c.workload,
                "tool": c.tool, "repetition": c.repetition, "status": previous.get(c.case_id, STATUS_PENDING),
                "reason": "", "exit_status": "", "started": "", "ended": "", "duration_s": "",
                "estimate_s": c.estimate_s, "tool_wall_s": "", "hosts": " ".join(c.hosts), "warnings": "",
                "params": c.params,
            }
        old = self.rd.path / "cases.csv"
        if old.exists():  # keep what earlier attempts recorded about cases that will not rerun
            import csv

            from fsbench.core.csv_cells import unguard_row

            with old.open(newline="") as fh:
                for row in map(unguard_row, csv.DictReader(fh)):  # as written before the spreadsheet guard
                    rec = self.records.get(row["case_id"])
                    if rec and rec["status"] == STATUS_OK:
                        rec.update({k: row.get(k, "") for k in ("reason", "exit_status", "started", "ended",
                                                               "duration_s", "tool_wall_s", "warnings")})

    def _finish_case(self, case: Case, status: str, reason: str = "", **extra: object) -> None:
        rec = self.records[case.case_id]
        rec.update(status=status, reason=reason, ended=utc_now(), **extra)
        self.rd.manifest["cases"][case.case_id] = status
        self.rd.save_manifest()
        self.rd.write_cases(list(self.records.values()))

    # -- the run -------------------------------------------------------------------------------
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
        self._init_records()
        todo = [c for c in self.cases if self.records[c.case_id]["status"] != STATUS_OK]
        self.rd.manifest["status"] = "running"
        self.rd.manifest["cases"] = {cid: r["status"] for cid, r in self.records.items()}
        self.rd.save_manifest()
        self.rd.write_cases(list(self.records.values()))
        self.emit(Event("run_start", total=len(todo),
                        data={"estimate_s": sum(c.estimate_s for c in todo), "run_dir": str(self.rd.path)}))
        hosts = self.host_facts if self.host_facts is not None else self._host_facts()
        self.host_facts = hosts
        missing = {(h["host"], tool) for h in hosts for tool in self._tools()
                   if h.get(f"{tool}_version") == "not found"}
        order = [t for t in self.sc.targets if any(c.target == t for c in todo)]
        rounds = self.sc.settings.order == "rounds"
        if rounds:  # a service stops after the last case of its last target, wherever that falls
            order.sort(key=lambda name: max(i for i, c in enumerate(todo) if c.target == name))
        scratch = posixpath.join(self.sc.settings.scratch, self.rd.run_id)
        cleanups = {name: self.leftovers.add(name, "scratch folders", self._scratch_cleanup(tr, scratch))
                    for name, tr in self.transports.items()}
        services = ServiceManager(self.sc, self.transports, self.rd.run_id, scratch, self.rd.path / "services",
                                  self.emit, order, self.leftovers, self.secrets)
        done = 0
        try:
            if rounds:
                self._run_rounds(todo, services, scratch, hosts, missing)
            for name in order if not rounds else ():
                if self.cancel.is_set() or self.full:
                    break
                done = self._run_target(self.sc.targets[name], [c for c in todo if c.target == name], services,
                                        scratch, hosts, missing, done, len(todo))
        finally:  # a second Ctrl-C here stops the clean-up: the leftovers have the rest for the next run
            services.stop_all()
            for name, tr in self.transports.items():
                try:
                    failed = [r for r in (tr.run(argv, timeout=120) for argv in self._scratch_cleanup(tr, scratch))
                              if not r.ok]
                    if failed:  # kept in leftovers.json: the next run tries again
                        self.emit(Event("warning", message=f"could not remove {scratch} on {name}: "
                                                           f"{failed[0].describe()}"))
                    else:
                        self.leftovers.done(cleanups[name])
                except FsbenchError as exc:
                    self.emit(Event("warning", message=f"could not remove {scratch} on {name}: {exc}"))
        self.rd.write_hosts(hosts)
        return self._close()

    def _host_down(self, host: str) -> str | None:
        """Why a host was given up for this run (it stopped answering), else None."""
        dead = getattr(self.transports.get(host), "dead", None)
        return dead if isinstance(dead, str) else None

    def _stopped_by(self, exc: OSError) -> RunOutcome:
        """The end of a run whose run directory could not be written: out of space (resumable), or else."""
        if out_of_space(exc):
            if not self.full:
                self._disk_full(exc)
            return self._close_full()
        where = exc.filename or self.rd.path
        self.rd.settle("failed", error=f"{where}: {exc.strerror or exc}")
        raise RunDirError(f"{where}: {exc.strerror or exc}: the run stopped; the finished cases are kept in "
                          f"{self.rd.path}: fix that, then resume with  fsbench run SCENARIO --resume "
                          f"{self.rd.path}") from None

    def _disk_full(self, exc: OSError) -> None:
        """The run directory's disk is full: stop after this case, with room for the clean-up's own writes."""
        self.full = True
        self.rd.release_reserve()
        self.emit(Event("warning", message=f"the run directory's disk is full ({exc}): stopping"))

    def _scratch_cleanup(self, tr: Transport, scratch: str) -> list[list[str]]:
        """Removing the run's scratch folder on a host, and on SSH hosts its work folder."""
        out = [["rm", "-rf", "--", scratch]]
        base = getattr(tr, "remote_base", None)
        if isinstance(base, str) and base.startswith("/"):
            out.append(["rm", "-rf", "--", posixpath.join(base, self.rd.run_id)])
        return out

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
                                scratch=scratch, service_values=values,
                                log_dir=self.rd.path / "targets" / target.name, leftovers=self.leftovers,
                                secrets=self.secrets)
        return session, reason

    def _run_target(self, target: Target, tcases: list[Case], services: ServiceManager, scratch: str,
                    hosts: list[dict], missing: set, done: int, total: int) -> int:
        session, reason = self._session(target, services, scratch)
        try:
            ready = reason or self._setup(target, session, hosts)
            last_user = {c.dataset: c.case_id for c in tcases if c.dataset}
            for case in tcases:
                if self.cancel.is_set() or self.full:
                    break
                done += 1
                if not self._step(case, session, ready, missing, last_user.get(case.dataset) == case.case_id,
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

    def _run_rounds(self, todo: list[Case], services: ServiceManager, scratch: str, hosts: list[dict],
                    missing: set) -> None:
        """settings.order: rounds: the cases in plan order, each target set up before its first case and
        torn down after its last, so every target of a round is up at once."""
        last = {c.target: c.case_id for c in todo}
        last_user = {(c.target, c.dataset): c.case_id for c in todo if c.dataset}
        sessions: dict[str, tuple[TargetSession, str | None]] = {}
        applied: dict[str, str] = {}  # service -> the target whose setup commands last ran against it
        done = 0
        try:
            for case in todo:
                if self.cancel.is_set() or self.full:
                    break
                target = self.sc.targets[case.target]
                if case.target not in sessions:
                    session, reason = self._session(target, services, scratch)
                    sessions[case.target] = (session, reason)
                    sessions[case.target] = (session, reason or self._setup(target, session, hosts))
                    applied.update(dict.fromkeys(target.services, case.target))
                session, ready = sessions[case.target]
                if ready is None and any(applied.get(s, case.target) != case.target for s in target.services):
                    # another target's setup commands ran against a service shared with this one since (e.g.
                    # Redis' appendfsync set per target): run this target's again, so the case measures its own
                    ready = session.reapply(self.cancel)
                    applied.update(dict.fromkeys(target.services, case.target))
                done += 1
                if not self._step(case, session, ready, missing,
                                  last_user.get((case.target, case.dataset)) == case.case_id, done, len(todo)):
                    break
                if last[case.target] == case.case_id:
                    sessions.pop(case.target)
                    session.teardown()
                    services.release(case.target)
        except OSError as exc:  # full while setting a target up: the teardowns still get the reserve
            if not out_of_space(exc):
                raise
            self._disk_full(exc)
        finally:
            for name, (session, _) in sessions.items():
                session.teardown()
                services.release(name)

    def _step(self, case: Case, session: TargetSession, ready: str | None, missing: set, frees: bool,
              done: int, total: int) -> bool:
        """One case (or its skip when an adaptive case needs no more repetitions); False: stop the run."""
        decision = self._adaptive(case)
        if decision is not None and not decision.more:  # the case's interval is narrow enough already
            self._finish_case(case, STATUS_SKIPPED, f"{reps.NOT_NEEDED}: {decision.detail}")
            self.emit(Event("case_end", case=case, index=done, total=total, status=STATUS_SKIPPED,
                            duration_s=0.0, message=self.records[case.case_id]["reason"]))
            return True
        self.emit(Event("case_start", case=case, index=done, total=total))
        try:
            self._one_case(case, session, ready, missing)
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
        """Set the target up and note how each host reached it; None when ready, else why not."""
        try:
            ready = session.setup(self.cancel)
            for h in hosts:
                if h["host"] in session.transports and ready is None:
                    m = facts.mount_of(session.transports[h["host"]], target.path)
                    via = session.via(h["host"])  # which client (ceph-fuse, rbd-fuse+loop...) the kind used
                    words = [v for v in m.values() if v] + ([f"via {via}"] if via else [])
                    h[f"mount_{target.name}"] = " ".join(words)
                    h.update(facts.client_of(session.transports[h["host"]], target.name, session.plan(h["host"])))
                    if target.fstype and m["fstype"] != target.fstype:
                        ready = (f"{target.path} on {h['host']} is on {m['fstype'] or '?'} ({m['source']}), "
                                 f"the scenario expects {target.fstype}")
        except FsbenchError as exc:
            return f"target {target.name} could not be set up: {exc}"
        except Exception as exc:  # noqa: BLE001 - a kind plug-in's bug fails this target's cases only
            if isinstance(exc, OSError) and self.rd.is_about(exc):
                raise
            return unexpected(self.rd, exc, self.rd.path / "targets" / target.name, f"while setting up {target.name}")
        return ready

    def _one_case(self, case: Case, session: TargetSession, ready: str | None, missing: set) -> None:
        """Run one case, or record why it cannot run; an unexpected error fails this case only."""
        self.records[case.case_id]["started"] = utc_now()
        try:
            absent = self._absent(case, missing)
            if absent:
                skip = get_tool(case.tool).bring_your_own or self.sc.workloads[case.workload].optional
                self._finish_case(case, STATUS_SKIPPED if skip else STATUS_FAILED,
                                  f"{case.tool} is not installed on {', '.join(absent)} "
                                  f"(`{_short(get_tool(case.tool).version_argv(case.options))}` failed): "
                                  "`fsbench deploy` puts it there, or remove the workload")
            elif ready is not None:
                self._finish_case(case, STATUS_FAILED, ready)
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

    def _absent(self, case: Case, missing: set) -> list[str]:
        """Hosts of the case where its tool (the workload's own binary, if it names one) is not installed."""
        tool = get_tool(case.tool)
        argv = tool.version_argv(case.options)
        if argv == tool.version_argv():
            return [h for h in case.hosts if (h, case.tool) in missing]
        out = []
        for h in case.hosts:
            key = (h, tuple(argv))
            if key not in self._presence:
                self._presence[key] = self.transports[h].run(argv, timeout=30).ok
            if not self._presence[key]:
                out.append(h)
        return out

    def _tools(self) -> set[str]:
        return {w.tool for w in self.sc.workloads.values()}

    def _close_full(self) -> RunOutcome:
        """The end of a run stopped by a full disk: the manifest says so (from the reserve), resumable."""
        self.rd.mark_out_of_space()
        counts: dict[str, int] = {}
        for r in self.records.values():
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        self.emit(Event("run_end", status="out-of-space", data={"counts": counts, "run_dir": str(self.rd.path)}))
        return RunOutcome(self.rd.path, counts, out_of_space=True)

    # -- adaptive repetitions --------------------------------------------------------------------
    def _spec(self, case: Case) -> reps.Repetitions:
        return self.sc.workloads[case.workload].repetitions or self.sc.settings.repetitions

    def _group(self, case: Case) -> list[Case]:
        """The repetitions of the case's target, workload and sweep point, in order."""
        return [c for c in self.cases if (c.target, c.workload, c.params) == (case.target, case.workload, case.params)]

    def _judged(self, group: list[Case], spec: reps.Repetitions) -> reps.Decision:
        """The decision after the group's ok repetitions (from their parsed rows and durations)."""
        ok = [c for c in group if self.records[c.case_id]["status"] == STATUS_OK]
        spent = sum(float(self.records[c.case_id]["duration_s"] or 0) for c in ok)
        primary = tuple(getattr(get_tool(group[0].tool), "primary_metrics", ()) or ())
        values = reps.primary_values([self.rd.case_rows(c.case_id) for c in ok], primary)
        return reps.decide(spec, len(ok), spent, values, self.sc.settings.exclude_warmup)

    def _adaptive(self, case: Case) -> reps.Decision | None:
        """Whether an adaptive repetition beyond the minimum is needed (None: not an adaptive one)."""
        spec = self._spec(case)
        if not spec.adaptive or case.repetition <= spec.min:
            return None
        earlier = [c for c in self._group(case) if c.repetition < case.repetition]
        return self._judged(earlier, spec)

    def _write_repetitions(self) -> None:
        """repetitions.csv: per case point, how many repetitions ran and why they stopped (adaptive runs)."""
        if not any(self._spec(c).adaptive for c in self.cases):
            return
        rows, seen = [], set()
        for c in self.cases:
            key = (c.target, c.workload, tuple(c.params.items()))
            if key in seen:
                continue
            seen.add(key)
            group, spec = self._group(c), self._spec(c)
            d = self._judged(group, spec)
            ok = sum(1 for g in group if self.records[g.case_id]["status"] == STATUS_OK)
            stop = d.stop if not d.more else "incomplete"
            rows.append({"target": c.target, "workload": c.workload,
                         "point": " ".join(f"{k}={v}" for k, v in c.params.items()), "min": spec.min,
                         "max": spec.max, "target_ci": spec.target_ci if spec.adaptive else "", "repetitions": ok,
                         "stop": stop, "ci": "" if d.widest != d.widest else round(d.widest, 6),
                         "detail": d.detail})
        import csv

        from fsbench.core.csv_cells import guard_row

        with (self.rd.path / "repetitions.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, list(rows[0]))
            w.writeheader()
            w.writerows(guard_row(r) for r in rows)

    def _close(self) -> RunOutcome:
        if self.full:
            return self._close_full()
        self._write_repetitions()
        rows = []
        for c in self.cases:
            if self.records[c.case_id]["status"] == STATUS_OK:
                rows.extend(self.rd.case_rows(c.case_id))
        self.rd.write_results(rows)
        counts: dict[str, int] = {}
        for r in self.records.values():
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        interrupted = self.cancel.is_set()
        good = counts.get(STATUS_OK, 0) + counts.get(STATUS_SKIPPED, 0)
        status = "interrupted" if interrupted else "complete" if good == len(self.records) else "failed"
        self.rd.write_cases(list(self.records.values()))
        if not self.rd.settle(status):
            raise RunDirError(f"{self.rd.path / 'manifest.json'}: cannot be written: the run ended ({status}) but "
                              "its manifest still says otherwise")
        self.emit(Event("run_end", status=status, data={"counts": counts, "run_dir": str(self.rd.path)}))
        return RunOutcome(self.rd.path, counts, interrupted)

    def _controller_info(self) -> HostInfo:
        """This machine's facts, once: multi-host launchers (mpirun, fio --client) run here."""
        if self._controller is None:
            self._controller = HostInfo("controller", "127.0.0.1", facts=facts.gather(self.controller, {}))
        return self._controller

    def _host_facts(self) -> list[dict]:
        tools = {name: get_tool(name).version_argv() for name in sorted(self._tools())}
        return [facts.gather(t, tools) for t in self.transports.values()]

    def _target_transports(self, target: Target) -> dict[str, Transport]:
        return {n: self.transports[n] for n in self.sc.resolve_hosts(target.hosts)}

    def _run_case(self, case: Case, session: TargetSession) -> None:
        self.records[case.case_id]["started"] = utc_now()
        known = {row.get("host"): row for row in self.host_facts or []}
        hosts = {h: HostInfo(h, self.sc.hosts[h].reach, self.sc.hosts[h].slots, self.sc.hosts[h].spec,
                             known.get(h, {})) for h in case.hosts}
        outcome = CaseRun(self.sc, case, self.rd, self.transports, self.controller, hosts, self._controller_info(),
                          self.cancel, self.emit).run(session)
        self._finish_case(case, outcome.status, outcome.reason, **outcome.extra)

def _short(argv: list[str]) -> str:
    """A command for a message: shell probes shown as their first statement."""
    text = argv[-1] if argv[:2] == ["/bin/sh", "-e"] else shlex.join(argv)
    return text.split(";")[0] if len(text) > 80 else text
