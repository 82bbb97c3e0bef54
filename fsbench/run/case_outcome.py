"""How a case ended (CaseOutcome), from the tool's result and its parsed rows, never by raising."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.api.tools import CombinesHosts, ToolAdapter
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.tidy import ParseResult
from fsbench.run.store import STATUS_FAILED, STATUS_INTERRUPTED, STATUS_OK, RunDir
from fsbench.scenario.plan import Case


@dataclass
class CaseOutcome:
    """How a case ended: its status, the reason, and the figures for cases.csv."""

    status: str
    reason: str = ""
    extra: dict = field(default_factory=dict)


def failed(reason: str, start: float, result: CommandResult | None = None) -> CaseOutcome:
    """A case that ended before its rows: interrupted when its last command was, else failed."""
    extra: dict = {"duration_s": round(time.monotonic() - start, 3)}
    if result is not None:
        extra["exit_status"] = result.exit_status
    status = STATUS_INTERRUPTED if result is not None and result.interrupted else STATUS_FAILED
    return CaseOutcome(status, reason, extra)


def unexpected(rd: RunDir, exc: BaseException, folder: Path, during: str = "") -> str:
    """The one-line reason of an error fsbench did not foresee; its traceback kept in folder/fsbench-error.txt."""
    kept = rd.record_error(folder, exc)
    first = (str(exc).strip().splitlines() or [""])[0]
    return (f"unexpected error{' ' + during if during else ''}: {type(exc).__name__}"
            + (f": {first}" if first else "") + (f" (the traceback is in {kept})" if kept else ""))


def parse(tool: ToolAdapter, raw: Path, per_host: dict[str, Path]) -> ParseResult:
    """The tool's rows: of its one output, or of each host's (combined by the tool when it can)."""
    if not per_host:
        return tool.parse_outputs(raw)
    parts = {h: tool.parse_outputs(folder) for h, folder in per_host.items()}
    if isinstance(tool, CombinesHosts):
        return tool.combine_hosts(parts)
    merged = ParseResult()
    for h, part in parts.items():
        merged.rows += [{**r, "host": h} for r in part.rows]
        merged.warnings += [f"{h}: {w}" for w in part.warnings]
    return merged


def ended(case: Case, result: CommandResult, duration: float, parsed: Callable[[], ParseResult], raw: Path,
          lost: dict[str, str] | None = None) -> tuple[CaseOutcome, ParseResult | None]:
    """The outcome of a case whose tool ran, and its parsed output when the tool succeeded and it parsed.

    `lost`: the hosts whose connection was lost while it ran, and how; a failed tool's reason names them first
    (fio --client on the controller says only that it failed, not which of its 32 servers went silent)."""
    common = {"duration_s": duration, "exit_status": result.exit_status, "tool_wall_s": round(result.duration_s, 3)}
    if result.interrupted:
        return CaseOutcome(STATUS_INTERRUPTED, "stopped by the user (Ctrl-C)", common), None
    if not result.ok:
        what = f"timed out after {case.timeout_s:.0f}s" if result.timed_out else "failed"
        hosts = f"{', '.join(sorted(lost))} lost while the case ran ({'; '.join(sorted(set(lost.values())))}): " \
            if lost else ""
        return CaseOutcome(STATUS_FAILED, f"{hosts}{case.tool} {what} {result.describe()}", common), None
    try:
        rows = parsed()
    except FsbenchError as exc:
        return CaseOutcome(STATUS_FAILED, f"unusable output: {exc}", common), None
    except Exception as exc:  # noqa: BLE001 - a parser bug fails this case only; raw/ keeps the output
        return CaseOutcome(STATUS_FAILED, f"unusable output: internal parser error ({type(exc).__name__}: "
                                          f"{exc}); the raw output is in {raw}", common), None
    return CaseOutcome(STATUS_OK, "", common), rows


def row_context(run_id: str, scenario: str, case: Case) -> dict:
    """The columns every row of the case carries."""
    return {"run_id": run_id, "case_id": case.case_id, "scenario": scenario, "target": case.target,
            "workload": case.workload, "repetition": case.repetition}


def case_rows(run_id: str, scenario: str, case: Case, parsed: ParseResult, names: dict[str, str],
              beside: list[ParseResult], alone: str = "") -> tuple[list[dict], list[str]]:
    """The case's rows with their context columns, tools' host addresses named as the scenario names them;
    and the warnings of the tool and of what ran beside it. `alone`: the one host a one-host tool ran on."""
    context = row_context(run_id, scenario, case)
    # a row without a host is the whole case's figure: the host's own on one host (or the one host that
    # ran it), `all` across hosts or beside per-host rows (vdbench totals), so sums never count it twice
    whole = alone or ("all" if len(case.hosts) > 1 or any(r.get("host") for r in parsed.rows) else case.hosts[0])
    rows = [{**context, **r, "host": names.get(str(r.get("host")), r.get("host")) or whole} for r in parsed.rows]
    warnings = list(parsed.warnings)
    # a tool with rows per host that has none from some of the case's hosts (fio, whose server dropped its
    # jobs there, still exits 0): its `all` covers fewer hosts than the case names, which the label hides
    named = {r["host"] for r in rows} & set(case.hosts)
    silent = [h for h in case.hosts if h not in named] if len(case.hosts) > 1 and named and not alone else []
    if silent:
        warnings.append(f"no results from {', '.join(silent)} (see raw/{case.case_id}): the figures of host "
                        f"`all` cover {', '.join(sorted(named))} only")
    for part in beside:
        rows += [{**context, **r} for r in part.rows]
        warnings += part.warnings
    return rows, warnings
