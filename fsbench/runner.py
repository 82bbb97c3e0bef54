"""Run the cases of a scenario: targets set up once, raw output saved before parsing, failures as data."""

from __future__ import annotations

import posixpath
import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from fsbench import facts
from fsbench.errors import CommandResult, FsbenchError
from fsbench.events import Event, Listener, ignore
from fsbench.scenario.model import Scenario, Target
from fsbench.scenario.plan import Case
from fsbench.store import (STATUS_FAILED, STATUS_INTERRUPTED, STATUS_OK, STATUS_PENDING, STATUS_SKIPPED, RunDir,
                           utc_now)
from fsbench.targets.lifecycle import TargetSession
from fsbench.targets.manager import ServiceManager, resolve_hosts
from fsbench.background import Background
from fsbench.targets.services import free_port
from fsbench.tools import get_tool
from fsbench.tools.base import BuildContext, HostInfo
from fsbench.transport.base import Transport
from fsbench.transport.local import LocalTransport


@dataclass
class RunOutcome:
    """How a run ended: its directory and the count of cases per status."""

    run_dir: Path
    counts: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        good = self.counts.get(STATUS_OK, 0) + self.counts.get(STATUS_SKIPPED, 0)
        return 0 if good == sum(self.counts.values()) else 1


class Runner:
    """Executes planned cases into a run directory."""

    def __init__(self, scenario: Scenario, cases: list[Case], run_dir: RunDir, *,
                 listener: Listener = ignore, cancel: threading.Event | None = None,
                 transports: dict[str, Transport] | None = None, host_facts: list[dict] | None = None):
        self.sc, self.cases, self.rd = scenario, cases, run_dir
        self.emit = listener
        self.cancel = cancel or threading.Event()
        self.transports = transports or {h: LocalTransport(h) for h in scenario.hosts}
        self.controller = LocalTransport("controller")
        self.host_facts = host_facts
        self._presence: dict[tuple, bool] = {}
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

            with old.open(newline="") as fh:
                for row in csv.DictReader(fh):
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
        """Run every case that is not already ok; always tear targets down; write tables."""
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
        missing = {(h["host"], tool) for h in hosts for tool in self._tools() if h.get(f"{tool}_version") == "not found"}
        order = [t for t in self.sc.targets if any(c.target == t for c in todo)]
        scratch = posixpath.join(self.sc.settings.scratch, self.rd.run_id)
        services = ServiceManager(self.sc, self.transports, self.rd.run_id, scratch, self.rd.path / "services",
                                  self.emit, order)
        done = 0
        try:
            for name in order:
                if self.cancel.is_set():
                    break
                done = self._run_target(self.sc.targets[name], [c for c in todo if c.target == name], services,
                                        scratch, hosts, missing, done, len(todo))
        finally:
            services.stop_all()
            for name, tr in self.transports.items():
                try:
                    tr.remove_tree(scratch)
                except FsbenchError as exc:
                    self.emit(Event("warning", message=f"could not remove {scratch} on {name}: {exc}"))
        self.rd.write_hosts(hosts)
        return self._close()

    def _run_target(self, target: Target, tcases: list[Case], services: ServiceManager, scratch: str,
                    hosts: list[dict], missing: set, done: int, total: int) -> int:
        values, reason = services.ensure(target.services, self.cancel)
        session = TargetSession(target, self._target_transports(target), self.rd.run_id, self.emit,
                                scratch=scratch, service_values=values,
                                log_dir=self.rd.path / "targets" / target.name)
        try:
            ready = reason or session.setup(self.cancel)
            for h in hosts:
                if h["host"] in session.transports and ready is None:
                    m = facts.mount_of(session.transports[h["host"]], target.path)
                    h[f"mount_{target.name}"] = " ".join(v for v in m.values() if v)
                    if target.fstype and m["fstype"] != target.fstype:
                        ready = (f"{target.path} on {h['host']} is on {m['fstype'] or '?'} ({m['source']}), "
                                 f"the scenario expects {target.fstype}")
            for case in tcases:
                if self.cancel.is_set():
                    break
                done += 1
                self.emit(Event("case_start", case=case, index=done, total=total))
                self.records[case.case_id]["started"] = utc_now()
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
                rec = self.records[case.case_id]
                self.emit(Event("case_end", case=case, index=done, total=total, status=rec["status"],
                                duration_s=float(rec["duration_s"] or 0), message=rec["reason"]))
                if self.sc.settings.cooldown_s and not self.cancel.is_set():
                    self.cancel.wait(self.sc.settings.cooldown_s)
        finally:
            session.teardown()
            services.release(target.name)
        return done

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

    def _close(self) -> RunOutcome:
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
        self.rd.manifest.update(status=status, ended=utc_now())
        self.rd.save_manifest()
        self.rd.write_cases(list(self.records.values()))
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
        return {n: self.transports[n] for n in resolve_hosts(self.sc, target.hosts)}

    def _run_case(self, case: Case, session: TargetSession) -> None:
        rec = self.records[case.case_id]
        rec["started"] = utc_now()
        tool = get_tool(case.tool)
        test_dir = session.case_dir(case.case_id)
        hosts = {h: self.transports[h] for h in case.hosts}
        known = {row.get("host"): row for row in self.host_facts or []}
        ctx = BuildContext({h: HostInfo(h, self.sc.hosts[h].reach, self.sc.hosts[h].slots, self.sc.hosts[h].spec,
                                        known.get(h, {})) for h in case.hosts},
                           port=free_port(), controller=self._controller_info())
        start = time.monotonic()
        monitored: list = []
        try:
            inv = tool.build(case, test_dir, ctx)
            for h, tr in hosts.items():
                tr.makedirs(inv.host_dirs.get(h, test_dir))
            where = "controller" if inv.controller else case.hosts[0]
            transport = self.controller if inv.controller else hosts[where]
            raw = self.rd.raw_dir(case.case_id, where)
            work = transport.workdir(raw)
            for name, text in inv.files.items():
                (raw / name).write_text(text)
                transport.put_text(f"{work}/{name}", text)
            (raw / "command").write_text("".join(shlex.join(a) + "\n" for a in (inv.steps or [inv.argv])))
            involved = self._involved(case)
            dropped = self._drop_caches(case, involved)
            if dropped:
                self._finish_case(case, STATUS_FAILED, dropped, duration_s=round(time.monotonic() - start, 3))
                return
            monitors = self._monitors(case, involved)
            servers = Background(inv.servers, self.transports, lambda h: self.rd.raw_dir(case.case_id, h),
                                 case.timeout_s + 60)
            for m in monitors:
                m.start()
            servers.start()
            try:
                not_listening = servers.wait_ports(inv.wait_ports)
                if not_listening:
                    self._finish_case(case, STATUS_FAILED, f"{case.tool} server did not start: {not_listening}",
                                      duration_s=round(time.monotonic() - start, 3))
                    return
                result = self._execute(case, inv, transport, work, raw, involved)
            finally:
                servers.stop()
                # a long case has its tail sampled already; a short one waits for one more sample
                short = time.monotonic() - start < 3 * self.sc.monitor.interval_s
                monitored = [m.stop(final_sample=short and not self.cancel.is_set()) for m in monitors]
            for name in inv.outputs:
                transport.fetch(f"{work}/{name}", raw / name)
            (raw / "exit_status").write_text(f"{result.exit_status}\n")
            if not isinstance(transport, LocalTransport):
                transport.remove_tree(work)  # raw/ has it now
        except FsbenchError as exc:
            self._finish_case(case, STATUS_FAILED, str(exc), duration_s=round(time.monotonic() - start, 3))
            return
        finally:
            for h, tr in hosts.items():
                try:
                    tr.remove_tree(test_dir)
                except FsbenchError as exc:  # a host lost mid-run must not hide the case's own outcome
                    self.emit(Event("warning", message=f"could not remove {test_dir} on {h}: {exc}"))
        duration = round(time.monotonic() - start, 3)
        names = {info.address: h for h, info in ctx.hosts.items()}
        self._record_result(case, tool, raw, result, duration, monitored, names)

    def _execute(self, case: Case, inv, transport: Transport, work: str, raw: Path, involved: list[str]) -> CommandResult:
        """The tool's command, or its steps in order with cache drops between them (outputs concatenated)."""
        if not inv.steps:
            return transport.run(inv.argv, cwd=work, timeout=case.timeout_s, stdout_path=raw / "stdout",
                                 stderr_path=raw / "stderr", cancel=self.cancel, env=inv.env or None)
        deadline = time.monotonic() + case.timeout_s
        result = None
        with open(raw / "stdout", "wb") as out, open(raw / "stderr", "wb") as err:
            for i, argv in enumerate(inv.steps):
                failed = self._drop_caches(case, involved, f"drop_caches-{i}.json") if i else None
                if failed:
                    raise FsbenchError(failed)  # the case fails with it; its earlier steps' output is kept
                result = transport.run(argv, cwd=work, timeout=max(1.0, deadline - time.monotonic()),
                                       stdout_path=raw / f"stdout.{i}", stderr_path=raw / f"stderr.{i}",
                                       cancel=self.cancel, env=inv.env or None)
                out.write((raw / f"stdout.{i}").read_bytes())
                err.write((raw / f"stderr.{i}").read_bytes())
                if not result.ok:
                    break
        return result

    def _involved(self, case: Case) -> list[str]:
        """Hosts a case touches: its own and those of its target's services."""
        hosts = list(case.hosts)
        for s in self.sc.targets[case.target].services:
            hosts += [h for h in resolve_hosts(self.sc, self.sc.services[s].hosts) if h not in hosts]
        return hosts

    def _drop_caches(self, case: Case, hosts: list[str], record: str = "drop_caches.json") -> str | None:
        """Drop the page cache on every involved host when the workload asks; the proof goes to raw/."""
        if not self.sc.workloads[case.workload].drop_caches:
            return None
        from fsbench.targets.cache import drop_caches

        for h in hosts:
            out = drop_caches(self.transports[h], self.rd.raw_dir(case.case_id, h) / record)
            if not out["ok"]:
                return f"dropping the page cache on {h} failed (the workload asks for it) {out['error']}"
        return None

    def _monitors(self, case: Case, hosts: list[str]) -> list:
        """One sampler per host the case involves."""
        mon = self.sc.monitor
        if not mon.enabled:
            return []
        from fsbench.monitor import MonitorSession

        return [MonitorSession(self.transports[h], h, mon.interval_s, list(mon.processes),
                               self.rd.raw_dir(case.case_id, h) / "monitor.txt", max_s=case.timeout_s + 120)
                for h in hosts]

    def _record_result(self, case: Case, tool, raw: Path, result: CommandResult, duration: float,
                       monitored: list | None = None, names: dict[str, str] | None = None) -> None:
        common = {"duration_s": duration, "exit_status": result.exit_status,
                  "tool_wall_s": round(result.duration_s, 3)}
        if result.interrupted:
            self._finish_case(case, STATUS_INTERRUPTED, "stopped by the user (Ctrl-C)", **common)
            return
        if not result.ok:
            what = f"timed out after {case.timeout_s:.0f}s" if result.timed_out else "failed"
            self._finish_case(case, STATUS_FAILED, f"{case.tool} {what} {result.describe()}", **common)
            return
        try:
            parsed = tool.parse_outputs(raw)
        except FsbenchError as exc:
            self._finish_case(case, STATUS_FAILED, f"unusable output: {exc}", **common)
            return
        context = {"run_id": self.rd.run_id, "case_id": case.case_id, "scenario": self.sc.name,
                   "target": case.target, "workload": case.workload, "repetition": case.repetition}
        names = names or {}
        # tools name hosts by the address they were given; rows use the scenario's host names
        # a row without a host is the whole case's figure: the host's own on one host, `all` across hosts
        # or beside per-host rows (vdbench totals), so sums over hosts never count it twice
        whole = "all" if len(case.hosts) > 1 or any(r.get("host") for r in parsed.rows) else case.hosts[0]
        rows = [{**context, **r, "host": names.get(r.get("host"), r.get("host")) or whole} for r in parsed.rows]
        warnings = list(parsed.warnings)
        for m in monitored or []:
            rows += [{**context, **r} for r in m.rows]
            warnings += m.warnings
        self.rd.set_case_rows(case.case_id, rows)
        self._finish_case(case, STATUS_OK, "", warnings="; ".join(warnings), **common)


def _short(argv: list[str]) -> str:
    """A command for a message: shell probes shown as their first statement."""
    text = argv[-1] if argv[:2] == ["/bin/sh", "-e"] else shlex.join(argv)
    return text.split(";")[0] if len(text) > 80 else text
