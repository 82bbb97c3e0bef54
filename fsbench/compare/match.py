"""Match cases of two runs by what they ran, then give every measurement a verdict."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fsbench.compare import gate
from fsbench.compare.judge import describe, direction, judge
from fsbench.compare.model import COLUMNS, FAILED, MISSING, NEW, NOT_COMPARABLE, Comparison, RunInfo
from fsbench.compare.runs import Point, RunData, load_run
from fsbench.compare.tolerance import parse_metrics, parse_tolerances, tolerance_for
from fsbench.core.stats_settings import Floors
from fsbench.core.tidy import METRIC_UNITS
from fsbench.run.store import STATUS_INTERRUPTED, STATUS_OK, STATUS_PENDING, STATUS_SKIPPED
from fsbench.scenario.repetitions import not_needed

Measure = tuple[str, str, str, str, str]  # (job, operation, metric, stat, unit)
_METRIC_ORDER = {m: i for i, m in enumerate(METRIC_UNITS)}
_SKIPPED_STATS = {"stddev"}  # a tool's own spread is not a performance; the comparison has its own
#: statuses of a case that never ran to its end: the run stopped before it, Ctrl-C, the tool not installed
NOT_RUN = {STATUS_PENDING, STATUS_INTERRUPTED, STATUS_SKIPPED}


@dataclass
class _PointData:
    tool: str
    cases: list[pd.Series] = field(default_factory=list)
    measures: dict[Measure, list[float]] = field(default_factory=dict)


def compare_runs(run_a: str | Path, run_b: str | Path, *more: str | Path,
                 tolerances: Mapping[str, float] | Iterable[str] | str | None = None, alpha: float = 0.05,
                 metrics: Iterable[str] | str | None = None, floors: Floors | None = None) -> Comparison:
    """Compare run_b (and more runs) with run_a, the reference; tolerances as {"bandwidth": 0.05} or specs;
    metrics None = each tool's primary metrics, "all" = every one; floors None = the reference's
    settings.stats."""
    paths = [run_a, run_b, *more]
    runs = [load_run(p) for p in paths]
    seen: dict[str, int] = {}
    for r in runs:  # the same run given twice still needs two names
        seen[r.label] = seen.get(r.label, 0) + 1
        if seen[r.label] > 1:
            r.label = f"{r.label} ({seen[r.label]})"
    result = compare(runs[0], runs[1:], tolerances=tolerances, alpha=alpha, metrics=metrics, floors=floors)
    for path, run in zip(paths[1:], runs[1:]):
        result.conclusions[run.label] = _conclusions(Path(paths[0]), Path(path))
    return result


def _conclusions(a: Path, b: Path) -> dict:
    """The reference's conclusions that run b contradicts; {'error': why} where a report cannot be built."""
    from fsbench.compare.contradict import compare_conclusions

    try:
        return compare_conclusions(a, b)
    except Exception as exc:  # noqa: BLE001 - a run whose report cannot be built still compares by numbers
        return {"error": f"{type(exc).__name__}: {exc}"}


def compare(reference: RunData, others: list[RunData], *,
            tolerances: Mapping[str, float] | Iterable[str] | str | None = None, alpha: float = 0.05,
            metrics: Iterable[str] | str | None = None, floors: Floors | None = None) -> Comparison:
    """Compare runs already in memory with the reference (floors None: the reference's)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
    tol = parse_tolerances(tolerances)
    selection = parse_metrics(metrics)
    floors = floors or reference.floors
    ref_points = _points(reference, selection)
    rows: list[dict] = []
    tests: dict[str, dict] = {}
    for other in others:
        pair = _compare_pair(reference, ref_points, other, _points(other, selection), tol, alpha, floors)
        tests[other.label] = gate.adjust(pair, alpha, floors)  # q over every tested measurement of this run
        rows += pair
    params = sorted({k for r in rows for k in r if k.startswith("param_")})
    frame = pd.DataFrame(rows, columns=COLUMNS + params)
    return Comparison(_info(reference), [_info(o) for o in others], frame, tol, alpha, selection,
                      {o.label: environment_changes(reference, o) for o in others}, floors=floors, tests=tests)


def _points(run: RunData, selection: list[str] | None) -> dict[Point, _PointData]:
    points: dict[Point, _PointData] = {}
    where: dict[str, Point] = {}
    for _, case in run.cases.iterrows():
        key = run.point_of(case)
        points.setdefault(key, _PointData(str(case["tool"]))).cases.append(case)
        where[str(case["case_id"])] = key
    values = run.values
    if not values.empty:
        values = values[~values["stat"].isin(_SKIPPED_STATS)].sort_values("repetition", kind="stable")
    for row in values.to_dict("records"):
        found = where.get(str(row["case_id"]))
        if found is None or not gate.wanted(points[found].tool, str(row.get("tool") or ""), str(row["metric"]),
                                            str(row["stat"]), selection):
            continue  # rows of a case that cases.csv does not know: what ran cannot be told
        # jobs of one case are separate measurements where case_values keeps them apart
        m = (str(row.get("job") or ""), str(row["operation"]), str(row["metric"]), str(row["stat"]), str(row["unit"]))
        points[found].measures.setdefault(m, []).append(float(row["value"]))
    return points


def _compare_pair(a: RunData, pa: dict[Point, _PointData], b: RunData, pb: dict[Point, _PointData],
                  tol: dict[str, float], alpha: float, floors: Floors) -> list[dict]:
    rows: list[dict] = []
    for key in [*pa, *(k for k in pb if k not in pa)]:
        target, workload, params = key
        da, db = pa.get(key), pb.get(key)
        either = db or da
        base = {"run": b.label, "reference": a.label, "target": target, "workload": workload,
                "tool": either.tool if either else "", "point": " ".join(f"{k}={v}" for k, v in params),
                **{f"param_{k}": v for k, v in params}}
        rows += _point_rows(a, da, b, db, base, tol, alpha, floors)
    return rows


def _point_rows(a: RunData, da: _PointData | None, b: RunData, db: _PointData | None, base: dict,
                tol: dict[str, float], alpha: float, floors: Floors) -> list[dict]:
    """Verdicts of one case point: missing / new / failed / not comparable for all its numbers, or one each."""
    measures = _union(da.measures if da else {}, db.measures if db else {})
    if da is None or db is None:
        failed = _failures(db, "this run") if db else []
        # a new point that failed is a failure a CI gate must see, not just something new
        verdict = FAILED if failed else NEW if da is None else MISSING
        detail = "only in this run" if da is None else "not in this run"
        return _plain(base, measures, da, db, verdict, "; ".join([detail, *(failed or _not_run(db, "this run"))]))
    failed = _failures(da, "the reference") + _failures(db, "this run")
    if failed:
        return _plain(base, measures, da, db, FAILED, "; ".join(failed))
    # a side that never ran the point (stopped before it, Ctrl-C, the tool not installed) has nothing to
    # compare: not comparable, and no failure of the system measured
    unrun = [why for p, side in ((da, "the reference"), (db, "this run")) if not _ran(p) for why in _not_run(p, side)]
    if unrun:
        return _plain(base, measures, da, db, NOT_COMPARABLE, "; ".join(unrun))
    differs = differences(a, da, b, db, str(base["workload"]))
    if differs:
        return _plain(base, measures, da, db, NOT_COMPARABLE, "; ".join(differs))
    rows = []
    for m in measures:
        if m not in db.measures or m not in da.measures:
            only_ref = m not in db.measures
            rows += _plain(base, [m], da, db, MISSING if only_ref else NEW,
                           "measured only in the reference" if only_ref else "measured only here")
            continue
        metric = m[2]
        rows.append({**base, **_measure(m, str(base["tool"])),
                     **judge(da.measures[m], db.measures[m], metric, tolerance_for(metric, tol), alpha,
                             str(base["tool"]), floors, m[4])})
    partly = _not_run(da, "the reference") + _not_run(db, "this run")  # judged on the repetitions that ran
    for row in rows if partly else []:
        if "improved" in row:  # judged: gate.adjust writes the detail again, the note with it
            row["note"] = "; ".join(partly)
        row["detail"] = "; ".join([row["detail"], *partly])
    return rows


def _union(ma: dict[Measure, list[float]], mb: dict[Measure, list[float]]) -> list[Measure]:
    keys = list(ma) + [k for k in mb if k not in ma]
    return sorted(keys, key=lambda m: (m[1], m[0], _METRIC_ORDER.get(m[2], len(_METRIC_ORDER)), m[2], m[3]))


def _measure(m: Measure, tool: str) -> dict:
    return {"job": m[0], "operation": m[1], "metric": m[2], "stat": m[3], "unit": m[4],
            "direction": direction(m[2], tool)}


def _plain(base: dict, measures: list[Measure], da: _PointData | None, db: _PointData | None,
           verdict: str, detail: str) -> list[dict]:
    """Rows without a verdict by numbers; a point without any measurement still gets one row."""
    out = []
    each: list[Measure | None] = list(measures) or [None]
    for m in each:
        sa = describe(da.measures.get(m, []) if da and m else [])
        sb = describe(db.measures.get(m, []) if db and m else [])
        ratio = sb["mean"] / sa["mean"] if sa["n"] and sb["n"] and sa["mean"] != 0 else math.nan
        out.append({**base, **(_measure(m, str(base["tool"])) if m else {}), "n_a": sa["n"], "mean_a": sa["mean"],
                    "std_a": sa["std"], "n_b": sb["n"], "mean_b": sb["mean"], "std_b": sb["std"],
                    "ratio": ratio, "change": ratio - 1, "beyond_band": False, "beyond_floors": False,
                    "p_value": math.nan, "q_value": math.nan, "confidence": "", "sure": "", "verdict": verdict,
                    "detail": detail})
    return out


def _failures(p: _PointData, side: str) -> list[str]:
    # adaptive repetitions a point did not need are neither failures nor missing; cases never run, not failures
    bad = [c for c in p.cases if _counts(c) and str(c["status"]) not in NOT_RUN]
    return [f"{_how_many(bad, len(p.cases))} in {side}{_reason(bad)}"] if bad else []


def _not_run(p: _PointData | None, side: str) -> list[str]:
    """Which repetitions of a point never ran (pending, interrupted, skipped), or []."""
    bad = [c for c in p.cases if _counts(c) and str(c["status"]) in NOT_RUN] if p else []
    return [f"not run in {side}: {_how_many(bad, len(p.cases))}{_reason(bad)}"] if p and bad else []


def _ran(p: _PointData) -> bool:
    return any(str(c["status"]) == STATUS_OK for c in p.cases)


def _counts(case: pd.Series) -> bool:
    """Whether a case record is one the verdict must account for (not ok, and not an unneeded repetition)."""
    return str(case["status"]) != STATUS_OK and not not_needed(str(case["status"]), str(case["reason"]))


def _how_many(bad: list[pd.Series], total: int) -> str:
    return f"{len(bad)} of {total} repetitions {', '.join(sorted({str(c['status']) for c in bad}))}"


def _reason(bad: list[pd.Series]) -> str:
    reason = next((str(c["reason"]).strip().splitlines()[0] for c in bad if str(c["reason"]).strip()), "")
    return f": {reason if len(reason) <= 200 else reason[:199] + '…'}" if reason else ""


def differences(a: RunData, da: _PointData, b: RunData, db: _PointData, workload: str) -> list[str]:
    """Why two cases with the same target, workload and parameters did not run the same thing."""
    out = []
    if da.tool != db.tool:
        out.append(f"tool: {da.tool} → {db.tool}")
    fa, fb = _flatten(a.definition(workload)), _flatten(b.definition(workload))
    fa.pop("tool", None)  # compared above, from the cases themselves
    fb.pop("tool", None)
    changed = [k for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
    if changed:
        out.append("options differ: " + "; ".join(f"{k}: {_show(fa.get(k))} → {_show(fb.get(k))}" for k in changed))
    va = set().union(*(a.tool_versions(da.tool, str(c["hosts"])) for c in da.cases))
    vb = set().union(*(b.tool_versions(db.tool, str(c["hosts"])) for c in db.cases))
    if va and vb and va != vb:  # unknown on a side (ingested runs) is not a difference
        out.append(f"{db.tool} version: {', '.join(sorted(va))} → {', '.join(sorted(vb))}")
    return out


def _flatten(spec: object, prefix: str = "") -> dict[str, object]:
    if isinstance(spec, dict):
        out: dict[str, object] = {}
        for k, v in spec.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): spec}


def _show(value: object) -> str:
    if value is None:
        return "–"
    return value if isinstance(value, str) else json.dumps(value)


def environment_changes(a: RunData, b: RunData) -> list[tuple[str, str, str]]:
    """Host facts and versions that differ between two runs (context for a verdict, not a verdict)."""
    out = []
    va, vb = a.manifest.get("fsbench_version", ""), b.manifest.get("fsbench_version", "")
    if va != vb:
        out.append(("fsbench version", str(va), str(vb)))
    fa, fb = a.host_facts(), b.host_facts()
    for host in [*fa, *(h for h in fb if h not in fa)]:
        if host not in fa or host not in fb:
            out.append((f"host {host}", "present" if host in fa else "–", "present" if host in fb else "–"))
            continue
        for k in [*fa[host], *(k for k in fb[host] if k not in fa[host])]:
            if k != "host" and str(fa[host].get(k, "")) != str(fb[host].get(k, "")):
                out.append((f"{host}: {k}", str(fa[host].get(k, "")), str(fb[host].get(k, ""))))
    return out


def _info(run: RunData) -> RunInfo:
    m = run.manifest
    return RunInfo(run.label, str(run.path or ""), str(m.get("scenario", "")), str(m.get("started", "")),
                   str(m.get("status", "")), str(m.get("fsbench_version", "")))
