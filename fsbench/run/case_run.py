"""One case's execution: prepare (untimed), cache drops, monitors, the tool, raw output first, then rows.

The case loop (fsbench.run.runner) decides which cases run and keeps their records; this module runs
one of them and says how it ended as a CaseOutcome, never by raising.
"""

from __future__ import annotations

import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core import warmup
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.events import Event, Listener
from fsbench.core.secrets import has_secrets, redact, redact_tree, secret_env
from fsbench.core.tidy import ParseResult
from fsbench.kinds import KINDS
from fsbench.run.background import Background
from fsbench.run.leftovers import CASE_MARKER, stop_case_processes
from fsbench.run.store import STATUS_FAILED, STATUS_INTERRUPTED, STATUS_OK, RunDir
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.run.targets.services import free_port
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.tools.base import BuildContext, HostInfo, Invocation
from fsbench.transport.local import LocalTransport
from fsbench.validity import CaseValidity

PREPARE = "prepare"
#: in raw/<case>/<host>/prepare/: the dataset's files after the prepare step, or as a case found them
LAYOUT = "layout.txt"
#: in raw/<case>/<host>/prepare/: why no prepare step ran (the files an earlier case laid out, unchanged)
REUSED = "reused"
#: how long collectors get to open their sources (the access log, a stats file) before the tool starts
COLLECTOR_START_S = 1.0


@dataclass
class CaseOutcome:
    """How a case ended: its status, the reason, and the figures for cases.csv."""

    status: str
    reason: str = ""
    extra: dict = field(default_factory=dict)


class CaseRun:
    """Runs one case on its hosts, raw output into the run directory before anything parses it."""

    def __init__(self, sc: Scenario, case: Case, rd: RunDir, transports: dict[str, Transport],
                 controller: Transport, ctx_hosts: dict[str, HostInfo], controller_info: HostInfo,
                 cancel: threading.Event, emit: Listener):
        self.sc, self.case, self.rd = sc, case, rd
        self.transports, self.controller = transports, controller
        self.ctx_hosts, self.controller_info = ctx_hosts, controller_info
        self.cancel, self.emit = cancel, emit
        self.tool = get_tool(case.tool)
        self.clients: dict = {}  # host -> monitor Client, once the target is known to be set up
        self.validity: CaseValidity | None = None  # backend counters around the tool, verdicts on its rows
        self.notes: list[str] = []  # warnings of the case itself (output capped, strays stopped)
        self._used: dict[str, Transport] = {}  # hosts the case ran commands on: where its strays may be

    def run(self, session: TargetSession) -> CaseOutcome:
        """Execute the case; failures of any step become the outcome, never an exception.

        The one exception: an OSError of the run directory itself (a full disk) stops the run.
        """
        start = time.monotonic()
        try:
            outcome = self._run(session, start)
        except OSError as exc:
            if self.rd.is_about(exc):
                raise
            outcome = self._failed(unexpected(self.rd, exc, self.rd.path / "raw" / self.case.case_id), start)
        except Exception as exc:  # noqa: BLE001 - a plug-in's bug (build, parse, a monitor) fails its case only
            outcome = self._failed(unexpected(self.rd, exc, self.rd.path / "raw" / self.case.case_id), start)
        if self.notes:
            outcome.extra["warnings"] = "; ".join(w for w in (outcome.extra.get("warnings"), *self.notes) if w)
        return outcome

    def _note_capped(self, result: CommandResult | None) -> None:
        """Say in the case's warnings which output went over the cap (settings.output_cap)."""
        if result is not None:
            self.notes += [f"{result.host}: {n}" for n in result.extra.get("capped", [])]

    def _env(self, env: dict[str, str] | None) -> dict[str, str]:
        """A case command's environment: the tool's own, and the case's marker (fsbench.run.leftovers)."""
        return {**(env or {}), CASE_MARKER: self.case.case_id}

    def _stop_strays(self) -> None:
        """Stop what the case's commands left running (a tool's background child), on every host it used.

        Only processes whose environment carries this run's and this case's markers: the run's services
        and mounts never carry the case's.
        """
        for h, tr in self._used.items():
            try:
                found = stop_case_processes(tr, self.rd.run_id, self.case.case_id)
            except (FsbenchError, OSError) as exc:  # a lost host must not hide the case's own outcome
                self.emit(Event("warning", message=f"could not stop what {self.case.case_id} left running on "
                                                   f"{h}: {exc}"))
                continue
            if found:
                procs = ", ".join(f"{name or '?'} (pid {pid})" for pid, _, name in (f.partition(" ") for f in found))
                self.notes.append(f"stopped what the case left running on {h}: {procs}")

    def _run(self, session: TargetSession, start: float) -> CaseOutcome:
        case = self.case
        folder = session.kind.address == "directory"  # devices and URLs: the tool addresses the path itself
        dataset = bool(case.dataset) and folder
        test_dir = (session.data_dir(case.dataset) if dataset else session.case_dir(case.case_id)) if folder \
            else session.target.path
        hosts = {h: self.transports[h] for h in case.hosts}
        ctx = BuildContext(dict(self.ctx_hosts), port=free_port(), controller=self.controller_info,
                           address=session.kind.address, target_kind=session.kind.name,
                           target_settings=session.tool_settings(case.hosts[0]),
                           store=session.plan(case.hosts[0]).store, run_id=self.rd.run_id, secrets=session.secrets)
        try:
            inv = self.tool.build(case, test_dir, ctx)
            prep = self.tool.prepare(case, test_dir, ctx) if case.prepare and hasattr(self.tool, "prepare") else None
            # without a folder (an RBD image) a prepare step another case of this target ran leaves its data
            # for this one too: written once per target, as cases of one dataset share its files
            shared = "" if prep is None or folder else repr((sorted(prep.files.items()), prep.env))
            if shared in session.prepared:
                prep = None
            layout = self._layout_key(prep) if dataset and not case.fresh and len(hosts) == 1 else ""
            if layout and self._laid_out(session, layout, hosts[case.hosts[0]], test_dir):
                prep = None  # the files an earlier case of this run laid out, proven unchanged
            for h, tr in hosts.items():
                if dataset and case.fresh:  # untimed: a write measures new files, not the ones a case left
                    tr.remove_tree(test_dir)
                if folder:
                    tr.makedirs(inv.host_dirs.get(h, test_dir))
            where = "controller" if inv.controller else case.hosts[0]
            transport = self.controller if inv.controller else hosts[where]
            raw = self.rd.raw_dir(case.case_id, where)
            involved = self._involved()
            if prep is not None:  # before the measured run is staged: on a remote host both use one work folder
                failed, prep_result = self._prepare(prep, transport, raw / PREPARE)
                if failed:
                    return self._failed(failed, start, prep_result)
                if shared:
                    session.prepared.add(shared)
                if layout:
                    self._remember_layout(session, layout, hosts[case.hosts[0]], test_dir)
            work = self._stage(inv, transport, raw) if not inv.per_host else ""
            works = {h: self._stage(Invocation(argv=argv, files=inv.files), hosts[h],
                                    self.rd.raw_dir(case.case_id, h)) for h, argv in inv.per_host.items()}
            warmup.settle()  # fsbench's background imports end before the cache drop and the measurement
            dropped = self._drop_client_caches(session) if case.drop_client_cache else None
            dropped = dropped or (self._drop_caches(involved) if case.drop_caches else None)
            if dropped:
                return self._failed(dropped, start)
            collectors = self._collectors(session, test_dir)
            self.validity = CaseValidity(self.sc, case, session.values(case.hosts[0]), self.transports, raw,
                                         (self.tool, session.kind))
            self.clients = self._clients(session, involved)
            result, monitored, not_listening = self._measure(inv, transport, work, raw, involved, works, collectors)
            if not_listening or result is None:
                return self._failed(f"{case.tool} server did not start: {not_listening}", start)
            ran = {h: (hosts[h], w, self.rd.raw_dir(case.case_id, h)) for h, w in works.items()} or \
                {where: (transport, work, raw)}
            for tr, w, r in ran.values():
                for name in inv.outputs:
                    tr.fetch(f"{w}/{name}", r / name)
                if not isinstance(tr, LocalTransport):
                    tr.remove_tree(w)  # raw/ has it now
            self.validity.settle()  # what the client still uploads after the tool, before the files go
            if not works:  # each host of a per-host run has its own exit status already
                (raw / "exit_status").write_text(f"{result.exit_status}\n")
        except FsbenchError as exc:
            return self._failed(str(exc), start)
        finally:
            self._stop_strays()  # before its folder goes: a stray writer could recreate files in it
            if folder and not dataset:  # a dataset's files stay for the target's next cases, until its teardown
                for h, tr in hosts.items():
                    try:
                        tr.remove_tree(test_dir)
                    except (FsbenchError, OSError) as exc:  # a lost host must not hide the case's own outcome
                        self.emit(Event("warning", message=f"could not remove {test_dir} on {h}: {exc}"))
        if has_secrets():  # a tool that echoed a secret: masked in raw/ before anything reads it
            redact_tree(self.rd.path / "raw" / case.case_id)
        names = {info.address: h for h, info in ctx.hosts.items()}
        return self._record(raw, result, round(time.monotonic() - start, 3), monitored, names, list(works))

    # -- steps ---------------------------------------------------------------------------------
    def _stage(self, inv: Invocation, transport: Transport, raw: Path) -> str:
        """Input files into raw/ and onto the host that runs the tool; the command line(s) next to them."""
        self._used[where_of(transport)] = transport
        work = transport.workdir(raw)
        for name, text in inv.files.items():
            (raw / name).write_text(redact(text))
            transport.put_text(f"{work}/{name}", text)
        (raw / "command").write_text(redact("".join(shlex.join(a) + "\n" for a in (inv.steps or [inv.argv]))))
        return work

    def _layout_key(self, prep: Invocation | None) -> str:
        """What decides the files prep lays out ("" : the tool cannot tell, so its prepare step always runs)."""
        key = getattr(self.tool, "layout_key", None)
        return key(prep) if prep is not None and key is not None and not prep.controller else ""

    def _listing(self, transport: Transport, test_dir: str, out: Path) -> str | None:
        """Every file under test_dir with its size, modification and change times and inode, sorted (None: unreadable).

        The change time moves with any write or metadata change, and no one can set it back."""
        out.parent.mkdir(parents=True, exist_ok=True)
        r = transport.run(["find", test_dir, "-type", "f", "-printf", "%P\t%s\t%T@\t%C@\t%i\n"], timeout=60,
                          stdout_path=out, cancel=self.cancel)
        if not r.ok or not out.exists():
            return None
        text = "".join(sorted(out.read_text().splitlines(keepends=True)))
        out.write_text(text)
        return text

    def _remember_layout(self, session: TargetSession, layout: str, transport: Transport, test_dir: str) -> None:
        """What this case's prepare step left in the dataset folder, for the next case that lays out the same."""
        raw = self.rd.raw_dir(self.case.case_id, where_of(transport)) / PREPARE
        listing = self._listing(transport, test_dir, raw / LAYOUT)
        if listing:
            session.layouts[(self.case.dataset, layout)] = (listing, self.case.case_id)

    def _laid_out(self, session: TargetSession, layout: str, transport: Transport, test_dir: str) -> bool:
        """Whether an earlier prepare step of this run laid out these very files and they are unchanged since
        (names, sizes, modification and change times and inodes as that step left them): then this case reads them
        without starting the tool to check them again. The listing it was proven by is kept in raw/."""
        known = session.layouts.get((self.case.dataset, layout))
        if known is None:
            return False
        raw = self.rd.raw_dir(self.case.case_id, where_of(transport)) / PREPARE
        if self._listing(transport, test_dir, raw / LAYOUT) != known[0]:
            session.layouts.pop((self.case.dataset, layout), None)
            return False
        (raw / REUSED).write_text(f"the files laid out by {known[1]} in this run, unchanged since "
                                  f"({len(known[0].splitlines())} file(s): {LAYOUT} lists them): not laid out again\n")
        return True

    def _prepare(self, prep: Invocation, transport: Transport, raw: Path) -> tuple[str | None, CommandResult | None]:
        """The untimed, unmonitored layout pass, its output kept apart in raw/<case>/<host>/prepare/."""
        raw.mkdir(parents=True, exist_ok=True)
        self.emit(Event("prepare", message=f"{self.case.case_id}: laying out the files it reads (not measured)",
                        case=self.case))
        work = self._stage(prep, transport, raw)
        servers = Background(prep.servers, self.transports, lambda h: self._raw_sub(h, PREPARE),
                             self.case.timeout_s + 60, env=self._env(None))
        self._used.update({h: self.transports[h] for h in prep.servers})
        servers.start()
        try:
            not_listening = servers.wait_ports(prep.wait_ports)
            if not_listening:
                return f"{self.case.tool} server did not start for the prepare step: {not_listening}", None
            r = transport.run(prep.argv, cwd=work, timeout=self.case.timeout_s, stdout_path=raw / "stdout",
                              stderr_path=raw / "stderr", cancel=self.cancel, env=self._env(prep.env))
            self._note_capped(r)
        finally:
            servers.stop()
        for name in prep.outputs:
            transport.fetch(f"{work}/{name}", raw / name)
        (raw / "exit_status").write_text(f"{r.exit_status}\n")
        if not isinstance(transport, LocalTransport):
            transport.remove_tree(work)
        if not r.ok:
            what = "interrupted" if r.interrupted else f"timed out after {self.case.timeout_s:.0f}s" \
                if r.timed_out else "failed"
            return f"the prepare step (laying out the files to read, not measured) {what} {r.describe()}", r
        return None, r

    def _measure(self, inv: Invocation, transport: Transport, work: str, raw: Path, involved: list[str],
                 works: dict[str, str], collectors: list | None = None,
                 ) -> tuple[CommandResult | None, list, str | None]:
        """Monitors, collectors and servers around the tool's run: (result, summaries, server failure)."""
        monitors = self._monitors(involved)
        collectors = collectors or []
        servers = Background(inv.servers, self.transports, lambda h: self.rd.raw_dir(self.case.case_id, h),
                             self.case.timeout_s + 60, env=self._env(None))
        self._used.update({h: self.transports[h] for h in inv.servers})
        start = time.monotonic()
        for m in monitors:
            m.start()
        for c in collectors:
            c.start()
        if collectors:
            time.sleep(COLLECTOR_START_S)
        servers.start()
        result, monitored = None, []
        try:
            not_listening = servers.wait_ports(inv.wait_ports)
            if not_listening:
                return None, [], not_listening
            for c in collectors:
                c.mark_tool_start()  # collectors' means cover the tool's run (fsbench.collectors.session)
            if self.validity:
                self.validity.tool_start()
            result = self._execute_each(inv, works) if works else self._execute(inv, transport, work, raw, involved)
        finally:
            for c in collectors:
                c.mark_tool_end()
            if self.validity:
                self.validity.tool_end()
            servers.stop()
            for c in collectors:
                c.stop()
            # a long case has its tail sampled already; a short one waits for one more sample
            short = time.monotonic() - start < 3 * self.sc.monitor.interval_s
            monitored = [m.stop(final_sample=short and not self.cancel.is_set()) for m in monitors]
            monitored += [c.finish(self.controller) for c in collectors]
        return result, monitored, None

    def _execute(self, inv: Invocation, transport: Transport, work: str, raw: Path,
                 involved: list[str]) -> CommandResult:
        """The tool's command, or its steps in order with cache drops between them (outputs concatenated)."""
        case = self.case
        if not inv.steps:
            result = transport.run(inv.argv, cwd=work, timeout=case.timeout_s, stdout_path=raw / "stdout",
                                   stderr_path=raw / "stderr", cancel=self.cancel, env=self._env(inv.env))
            self._note_capped(result)
            return result
        deadline = time.monotonic() + case.timeout_s
        result = CommandResult(where_of(transport), [], None)  # replaced by the first step's
        with open(raw / "stdout", "wb") as out, open(raw / "stderr", "wb") as err:
            for i, argv in enumerate(inv.steps):
                failed = self._drop_caches(involved, f"drop_caches-{i}.json") if i and case.drop_caches else None
                if failed:
                    raise FsbenchError(failed)  # the case fails with it; its earlier steps' output is kept
                result = transport.run(argv, cwd=work, timeout=max(1.0, deadline - time.monotonic()),
                                       stdout_path=raw / f"stdout.{i}", stderr_path=raw / f"stderr.{i}",
                                       cancel=self.cancel, env=self._env(inv.env))
                self._note_capped(result)
                out.write((raw / f"stdout.{i}").read_bytes())
                err.write((raw / f"stderr.{i}").read_bytes())
                if not result.ok:
                    break
        return result

    def _execute_each(self, inv: Invocation, works: dict[str, str]) -> CommandResult:
        """The tool on every host at once, each in its own raw folder; the first failure (else the
        longest run) stands for the case."""
        results: dict[str, CommandResult] = {}

        def run(host: str) -> None:
            raw = self.rd.raw_dir(self.case.case_id, host)
            r = self.transports[host].run(inv.per_host[host], cwd=works[host], timeout=self.case.timeout_s,
                                          stdout_path=raw / "stdout", stderr_path=raw / "stderr",
                                          cancel=self.cancel, env=self._env(inv.env))
            (raw / "exit_status").write_text(f"{r.exit_status}\n")
            self._note_capped(r)
            results[host] = r

        threads = [threading.Thread(target=run, args=(h,), name=f"fsbench-{h}", daemon=True) for h in works]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done = [results[h] for h in works if h in results]
        if len(done) < len(works):  # a thread that died without a result (a transport bug)
            lost = ", ".join(h for h in works if h not in results)
            raise FsbenchError(f"{self.case.tool} on {lost} ended without a result")
        failed = [r for r in done if not r.ok]
        return failed[0] if failed else max(done, key=lambda r: r.duration_s)

    def _parse(self, raw: Path, per_host: list[str]) -> ParseResult:
        """The tool's rows: of its one output, or of each host's (combined by the tool when it can)."""
        if not per_host:
            return self.tool.parse_outputs(raw)
        parts = {h: self.tool.parse_outputs(self.rd.raw_dir(self.case.case_id, h)) for h in per_host}
        combine = getattr(self.tool, "combine_hosts", None)
        if combine is not None:
            return combine(parts)
        merged = ParseResult()
        for h, part in parts.items():
            merged.rows += [{**r, "host": h} for r in part.rows]
            merged.warnings += [f"{h}: {w}" for w in part.warnings]
        return merged

    def _involved(self) -> list[str]:
        """Hosts a case touches: its own and those of its target's services."""
        hosts = list(self.case.hosts)
        for s in self.sc.targets[self.case.target].services:
            hosts += [h for h in self.sc.resolve_hosts(self.sc.services[s].hosts) if h not in hosts]
        return hosts

    def _drop_caches(self, hosts: list[str], record: str = "drop_caches.json") -> str | None:
        """Drop the page cache on every involved host; the proof goes to raw/."""
        from fsbench.run.targets.cache import drop_caches

        for h in hosts:
            out = drop_caches(self.transports[h], self.rd.raw_dir(self.case.case_id, h) / record,
                              self.case.drop_level)
            if not out["ok"]:
                return f"dropping the page cache on {h} failed {out['error']}"
        return None

    def _drop_client_caches(self, session: TargetSession) -> str | None:
        """Empty the client's own cache folders on the case's hosts (a guarded remount); the proof goes to raw/."""
        from fsbench.run.targets.cache import drop_client_caches

        for h in self.case.hosts:
            out = drop_client_caches(session, h, self.rd.raw_dir(self.case.case_id, h) / "drop_client_cache.json")
            if out and not out["ok"]:
                return f"emptying the cache of {session.target.name}'s client on {h} failed: {out['error']}"
            if out and out["error"]:
                self.notes.append(f"{h}: {out['error']}")
        return None

    def _clients(self, session: TargetSession, hosts: list[str]) -> dict:
        """The target's client process on each host: its name, and the words of its own command line."""
        from fsbench.monitor import Client

        target = self.sc.targets[self.case.target]
        name = target.client_process or getattr(KINDS.get(target.kind), "client_process", "")
        if not name:
            return {}
        # only the target's hosts run its client: a service's host has no mount of it, so none is looked for there
        return {h: Client(name, session.plan(h).client_match(target.path)) for h in hosts if h in session.transports}

    def _monitors(self, hosts: list[str]) -> list:
        """One sampler per host the case involves."""
        mon = self.sc.monitor
        if not mon.enabled:
            return []
        from fsbench.monitor import MonitorSession
        from fsbench.run.monitor_expect import expected_processes

        # never warn about another target's processes, nor about a process on a host where it does not live
        return [MonitorSession(self.transports[h], h, mon.interval_s, list(mon.processes),
                               self.rd.raw_dir(self.case.case_id, h) / "monitor.txt", max_s=self.case.timeout_s + 120,
                               client=self.clients.get(h), expected=expected_processes(self.sc, self.case.target,
                                                                                      KINDS, h))
                for h in hosts]

    def _collectors(self, session: TargetSession, test_dir: str) -> list:
        """The scenario's collectors that apply to this case, one session per host they run on."""
        from fsbench.collectors import COLLECTORS
        from fsbench.collectors.session import CollectorSession

        case, out = self.case, []
        for c in self.sc.collectors.values():
            kind = COLLECTORS.get(c.kind)
            if not c.applies(case.target, case.workload, self.sc.collector_targets(c, kind.target_kinds)):
                continue
            for h in (self.sc.resolve_hosts(c.hosts) if c.hosts else list(case.hosts)):
                values = {**session.values(h), "case.id": case.case_id, "case.dir": test_dir}
                out.append(CollectorSession(c, kind, h, self.transports[h], kind.command(c, values),
                                            self.rd.raw_dir(case.case_id, h), case.timeout_s + 120,
                                            env=secret_env(values)))
        return out

    def _raw_sub(self, host: str, sub: str) -> Path:
        path = self.rd.raw_dir(self.case.case_id, host) / sub
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- outcome -------------------------------------------------------------------------------
    def _failed(self, reason: str, start: float, result: CommandResult | None = None) -> CaseOutcome:
        extra: dict = {"duration_s": round(time.monotonic() - start, 3)}
        if result is not None:
            extra["exit_status"] = result.exit_status
        status = STATUS_INTERRUPTED if result is not None and result.interrupted else STATUS_FAILED
        return CaseOutcome(status, reason, extra)

    def _record(self, raw: Path, result: CommandResult, duration: float, monitored: list,
                names: dict[str, str], per_host: list[str]) -> CaseOutcome:
        case = self.case
        common = {"duration_s": duration, "exit_status": result.exit_status,
                  "tool_wall_s": round(result.duration_s, 3)}
        if result.interrupted:
            return CaseOutcome(STATUS_INTERRUPTED, "stopped by the user (Ctrl-C)", common)
        if not result.ok:
            what = f"timed out after {case.timeout_s:.0f}s" if result.timed_out else "failed"
            return CaseOutcome(STATUS_FAILED, f"{case.tool} {what} {result.describe()}", common)
        try:
            parsed = self._parse(raw, per_host)
        except FsbenchError as exc:
            return CaseOutcome(STATUS_FAILED, f"unusable output: {exc}", common)
        except Exception as exc:  # noqa: BLE001 - a parser bug fails this case only; raw/ keeps the output
            return CaseOutcome(STATUS_FAILED, f"unusable output: internal parser error ({type(exc).__name__}: "
                                              f"{exc}); the raw output is in {raw}", common)
        context = {"run_id": self.rd.run_id, "case_id": case.case_id, "scenario": self.sc.name,
                   "target": case.target, "workload": case.workload, "repetition": case.repetition}
        # tools name hosts by the address they were given; rows use the scenario's host names
        # a row without a host is the whole case's figure: the host's own on one host, `all` across hosts
        # or beside per-host rows (vdbench totals), so sums over hosts never count it twice
        whole = "all" if len(case.hosts) > 1 or any(r.get("host") for r in parsed.rows) else case.hosts[0]
        rows = [{**context, **r, "host": names.get(str(r.get("host")), r.get("host")) or whole} for r in parsed.rows]
        warnings = list(parsed.warnings)
        for m in monitored or []:
            rows += [{**context, **r} for r in m.rows]
            warnings += m.warnings
        if self.validity:  # verdicts on the tool's rows (fsbench.validity), and the backends' own rows
            rows += [{**context, **r} for r in self.validity.finish(rows)]
        self.rd.set_case_rows(case.case_id, rows)
        return CaseOutcome(STATUS_OK, "", {**common, "warnings": "; ".join(warnings)})


def unexpected(rd: RunDir, exc: BaseException, folder: Path, during: str = "") -> str:
    """The one-line reason of an error fsbench did not foresee; its traceback kept in folder/fsbench-error.txt."""
    kept = rd.record_error(folder, exc)
    first = (str(exc).strip().splitlines() or [""])[0]
    return (f"unexpected error{' ' + during if during else ''}: {type(exc).__name__}"
            + (f": {first}" if first else "") + (f" (the traceback is in {kept})" if kept else ""))


def where_of(transport: Transport) -> str:
    """The host name a transport reaches."""
    return str(getattr(transport, "host", "controller"))
