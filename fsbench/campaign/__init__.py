"""The library entry points the CLI wraps: plan, run, resume, report."""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable
from pathlib import Path

from fsbench.core.errors import Issue, PreflightError, RunDirError, ScenarioError
from fsbench.core.events import Event, Listener, ignore
from fsbench.run.leftovers import (
    MARKER,
    STATE_ENV,
    Leftovers,
    dead_runs,
    recover,
    register_run,
    state_path,
    unregister_run,
)
from fsbench.run.min_hosts import without_unanswered
from fsbench.run.preflight import run_preflight
from fsbench.run.run_index import claim_run_id
from fsbench.run.runner import Runner, RunOutcome
from fsbench.run.store import RunDir, out_of_space, scenario_hash
from fsbench.run.transports import close_all, make_transports
from fsbench.scenario import Scenario, load_scenario, plan_cases
from fsbench.scenario.inputs import changed_inputs, input_digests
from fsbench.transport.local import LocalTransport


def run_scenario(path: str | Path, *, sets: list[str] | None = None, output_root: str | Path | None = None,
                 resume: str | Path | None = None, listener: Listener = ignore,
                 cancel: threading.Event | None = None, report: bool = True,
                 inventory: str | Path | None = None, warm_up: Callable[[], None] | None = None) -> RunOutcome:
    """Validate, plan, preflight and run a scenario (or resume an earlier run of it); writes the report.

    `warm_up` is called once the scenario is loaded and planned, before the run first waits on commands
    (the CLI's background imports of the end's libraries: started earlier, they only slowed the loading,
    which is Python's own work, and held the first case back).

    Raises ScenarioError (nothing ran) or PreflightError (nothing ran) before touching a target.
    """
    sc = load_scenario(path, sets, inventory)
    cases = plan_cases(sc)
    if warm_up is not None:
        warm_up()
    transports = make_transports(sc)
    listener = _redacting(listener)
    for warning in sc.warnings:  # a literal secret in the file: masked, but better as a reference
        listener(Event("warning", message=warning))
    rd = None
    try:
        _recover_dead_runs(transports, listener)
        if sc.deploy.before_run:
            from fsbench.run.deploy import deploy

            for row in deploy(sc, cases, transports):
                if row.action != "none":
                    listener(Event("warning", message=f"deploy {row.tool} on {row.host}: {row.action}"))
        secrets = _resolve_secrets(sc)
        pf = run_preflight(sc, cases, transports)
        sc, cases, transports, left_out = without_unanswered(sc, cases, transports, pf)  # settings.min_hosts
        pf.raise_if_failed()
        if left_out:
            listener(Event("warning", message=left_out))
        for w in pf.warnings:
            listener(Event("warning", message=w))
        rd = _run_dir(sc, cases, path, output_root, resume)
        from fsbench.run.notes import write_run_notes

        for w in write_run_notes(sc, cases, rd.path):  # which host runs what: a workload on fewer hosts than named
            listener(Event("warning", message=w))
        for tr in transports.values():
            tr.mark({MARKER: rd.run_id})
        try:
            registered = _register(rd, listener)
            outcome = registered or Runner(sc, cases, rd, listener=listener, cancel=cancel, transports=transports,
                                           host_facts=pf.hosts, leftovers=Leftovers(rd.path / "leftovers.json"),
                                           secrets=secrets).run()
        except KeyboardInterrupt:  # a second Ctrl-C: the manifest says interrupted; leftovers wait for the next run
            if rd.manifest.get("status") == "running":  # stopped before the runner could say so
                rd.settle("interrupted")
            return RunOutcome(rd.path, {}, interrupted=True)
        if not Leftovers(rd.path / "leftovers.json").actions:
            unregister_run(rd.run_id)
    finally:
        close_all(transports)
        if rd is not None:
            rd.unlock()
    if report and not outcome.out_of_space:
        from fsbench.report import write_report

        try:
            write_report(rd.path, templates=(sc.resolved.get("report") or {}).get("templates") or None)
        except Exception as exc:  # noqa: BLE001 - a report bug must not hide a finished run
            (rd.path / "report-error.txt").write_text(f"{type(exc).__name__}: {exc}\n")
            raise
    return outcome


def _register(rd: RunDir, listener: Listener) -> RunOutcome | None:
    """Index the run for recovery after a kill; a full disk ends it as one (exit 5), other errors say where."""
    try:
        register_run(rd.path, rd.run_id)
        return None
    except OSError as exc:
        where = exc.filename or state_path()
        if out_of_space(exc):
            listener(Event("warning", message=f"cannot index the run in {where}: {exc.strerror}: stopping"))
            rd.mark_out_of_space()
            return RunOutcome(rd.path, {}, out_of_space=True)
        rd.settle("failed", error=f"{where}: {exc.strerror or exc}")
        raise PreflightError([("(controller)", "state folder", f"cannot index the run in {where} "
                               f"({exc.strerror or exc}): fix that, or set {STATE_ENV} to a folder of yours; "
                               f"then resume with --resume {shlex.quote(str(rd.path))}")]) from None


def _redacting(listener: Listener) -> Listener:
    """The listener, given every message with secrets and URL passwords masked."""
    import dataclasses

    from fsbench.core.secrets import redact

    def emit(ev: Event) -> None:
        listener(dataclasses.replace(ev, message=redact(ev.message)) if ev.message else ev)

    return emit


def _resolve_secrets(sc: Scenario) -> dict[str, str]:
    """Every secret's value, from the environment or its file; a missing one stops the run (exit 4)."""
    values, missing = {}, []
    for name, ref in sc.secrets.items():
        try:
            values[name] = ref.resolve()
        except LookupError as exc:
            missing.append(("(controller)", f"secret {name}", f"{exc}: export it (or write the file) first"))
    if missing:
        raise PreflightError(missing)
    return values


def _recover_dead_runs(transports: dict, listener: Listener) -> None:
    """Before anything starts: clean up after runs that were killed; refuse when that is not possible."""
    local = LocalTransport("controller")
    problems = []
    for run_id, run_dir in dead_runs(listener):
        problems += recover(run_id, run_dir, transports, local, listener)
    if problems:
        raise PreflightError([("(leftovers)", "dead run", p) for p in problems]
                             + [("(leftovers)", "what to do", "resume that run with the scenario and inventory "
                                 "that reach its hosts, or clean by hand and delete its entry in "
                                 f"{state_path()}")])


def _run_dir(sc: Scenario, cases: list, path: str | Path, output_root, resume) -> RunDir:
    if resume:
        if not Path(resume).is_dir():
            raise RunDirError(f"{resume}: no such run directory; give the folder `fsbench run` printed")
        rd = RunDir.open(Path(resume))
        rd.check_cases()  # what it reads; results and hosts tables are written anew from raw/
        if rd.manifest.get("scenario_hash") != scenario_hash(sc.resolved):
            raise ScenarioError([Issue(str(path), None, "", f"this scenario (with these --set values) differs "
                                       f"from the one that made {resume}",
                                       "resume with the same file and --set values, or start a new run")])
        _check_inputs(rd, sc, path)
        rd.lock()
        rd.keep_reserve()
        rd.manifest["attempts"] = rd.manifest.get("attempts", 1) + 1
        _set_aside_unfinished(rd, cases)
        return rd
    root = Path(output_root) if output_root else _default_root(sc)
    rd = RunDir.create(root, sc.name, sc.resolved, input_digests(sc), claim=claim_run_id)
    rd.lock()
    return rd


def _check_inputs(rd: RunDir, sc: Scenario, path: str | Path) -> None:
    """Refuse a resume after a job file, an include or the inventory changed: cases would mix two workloads."""
    recorded = rd.manifest.get("inputs")
    if not isinstance(recorded, dict):  # a run directory from before inputs were recorded
        return
    changed = changed_inputs(recorded, input_digests(sc))
    if changed:
        where = {n: str(sc.base_dir / n) if n != "inventory" else f"the inventory {sc.inventory_file}".rstrip()
                 for n in changed}
        raise ScenarioError([Issue(where[n], None, "", f"changed since {rd.path} started (or is gone): its "
                                   "finished cases ran with the old content",
                                   "restore the file as it was to resume, or start a new run (without --resume)")
                             for n in changed])


def _default_root(sc: Scenario) -> Path:
    root = Path(sc.settings.output_root)
    return root if root.is_absolute() else Path.cwd() / root


def _set_aside_unfinished(rd: RunDir, cases: list) -> None:
    """Keep the raw output of failed attempts under raw/_attempts/ instead of overwriting it."""
    done = rd.manifest.get("cases", {})
    attempt = rd.manifest["attempts"] - 1
    for c in cases:
        if done.get(c.case_id) == "ok":
            continue
        src = rd.path / "raw" / c.case_id
        if src.exists():
            dst = rd.path / "raw" / "_attempts" / f"{c.case_id}.attempt-{attempt}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            src.rename(dst)


def describe_plan(path: str | Path, sets: list[str] | None = None,
                  inventory: str | Path | None = None) -> tuple[Scenario, list]:
    """The scenario and its cases, for `fsbench plan`."""
    sc = load_scenario(path, sets, inventory)
    return sc, plan_cases(sc)


def deploy_tools(path: str | Path, sets: list[str] | None = None, inventory: str | Path | None = None,
                 overrides: dict | None = None) -> list:
    """`fsbench deploy`: the tools of every case put on its hosts; one row per (host, tool).

    overrides replace the scenario's deploy settings: `install`, or `TOOL.KEY` of a tool's own section
    (`mdtest.source`, `vdbench.zip`); paths in them are as given on the command line.
    """
    import dataclasses
    import os

    from fsbench.run.deploy import deploy

    sc = load_scenario(path, sets, inventory)
    tools = {k: dict(v) for k, v in sc.deploy.tools.items()}
    plain = {}
    for key, value in (overrides or {}).items():
        tool, dot, sub = key.partition(".")
        if dot:
            tools.setdefault(tool, {})[sub] = os.path.abspath(value) if sub in ("source", "zip") and \
                "://" not in str(value) else value
        else:
            plain[key] = value
    settings = dataclasses.replace(sc.deploy, tools=tools, **plain)
    transports = make_transports(sc)
    try:
        return deploy(sc, plan_cases(sc), transports, settings)
    finally:
        close_all(transports)


def open_run(path: str | Path) -> RunDir:
    """An existing run directory (raises RunDirError with what to do)."""
    p = Path(path)
    if not p.is_dir():
        raise RunDirError(f"{p}: no such run directory; give the folder `fsbench run` printed")
    rd = RunDir.open(p)
    rd.check_files()  # a damaged table is named here, not met as a traceback deep in the report
    return rd
