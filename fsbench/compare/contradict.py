"""Conclusions of one run that a rerun contradicts: a winner that flips, a ratio that crosses 1.

A run's statements are those its report's conclusions make (fsbench.report.conclusions): per thing
measured, the best and the last target where each differs significantly from the next in the ranking,
and each ratio to the baseline whose 95 % interval excludes 1 (values the validity checks flagged left
out). Another run of the same scenario contradicts a statement when it states the opposite just as
firmly: another best or last target, a ratio significantly on the other side of 1. A statement the other
run cannot confirm (no clear difference there) is unconfirmed, not contradicted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fsbench.report import conclusions as concl
from fsbench.report import voice

BEST, LAST, RATIO = "best", "last", "ratio"


@dataclass
class Statements:
    """What one run states: (kind, tool, measurement, target-or-'') -> the claim."""

    baseline: str
    claims: dict[tuple, str] = field(default_factory=dict)
    labels: dict[tuple, str] = field(default_factory=dict)
    #: what the run's plain means say of every statement it could make, stated or not: the same keys, the
    #: mean-best and mean-last target, each ratio's side of 1 (the numbers a reader of its tables sees)
    plain: dict[tuple, str] = field(default_factory=dict)


def statements(run: Path, baseline: str | None = None) -> Statements:
    """The statements of a run's report conclusions."""
    from fsbench.report.context import build_context

    ctx = build_context(Path(run), baseline)
    out = Statements(str(ctx["baseline"]))
    floors = ctx["floors"]
    measured: dict[tuple, dict] = {}
    for v in ctx["views"]:
        for m in v.get("measurements") or []:
            measured.setdefault((m["key"], m["metric"]), m)
    for key, m in measured.items():
        kept, _ = concl._valid([m])
        if not kept:
            continue
        m = kept[0]
        text = concl.label(m, True, bool(m["job"]))
        j = concl.judge(m, floors)
        out.plain[(BEST, key, "")], out.plain[(LAST, key, "")] = j["best"], j["last"]
        if j["best_sure"]:
            out.claims[(BEST, key, "")] = j["best"]
            out.labels[(BEST, key, "")] = f"{m['tool']} {text}: best is {j['best']}"
        if j["last_sure"]:
            out.claims[(LAST, key, "")] = j["last"]
            out.labels[(LAST, key, "")] = f"{m['tool']} {text}: last is {j['last']}"
        base = m["values"].get(out.baseline)
        for t, val in m["values"].items():
            if base is None or t == out.baseline or val.get("ratio") is None:
                continue
            if val["ratio"] != 1:
                out.plain[(RATIO, key, t)] = "above 1" if val["ratio"] > 1 else "below 1"
            if concl.ratio_significant(val, base, floors, voice.is_time(m)):
                side = "above 1" if val["ratio"] > 1 else "below 1"
                out.claims[(RATIO, key, t)] = side
                out.labels[(RATIO, key, t)] = f"{m['tool']} {text}: {t} at {val['ratio']:.2f}× {out.baseline}"
    return out


def contradictions(a: Statements, b: Statements) -> dict:
    """Run a's statements judged by run b: counts and the contradicted ones (a's words, then b's)."""
    confirmed = unconfirmed = 0
    contradicted: list[dict] = []
    for key, claim in a.claims.items():
        other = b.claims.get(key)
        if other is None:
            unconfirmed += 1
        elif other == claim:
            confirmed += 1
        else:
            contradicted.append({"kind": key[0], "a": a.labels[key], "b": b.labels[key]})
    # the stricter count: b's plain means (its tables' numbers, significant or not) saying otherwise
    reversed_ = [{"kind": key[0], "a": a.labels[key], "b_plain": b.plain[key]} for key, claim in a.claims.items()
                 if key in b.plain and b.plain[key] != claim]
    return {"statements": len(a.claims), "confirmed": confirmed, "unconfirmed": unconfirmed,
            "contradicted": contradicted, "reversed_by_plain_numbers": reversed_}


def compare_conclusions(run_a: Path, run_b: Path) -> dict:
    """The contradictions of run_a's conclusions by run_b (both judged against run_a's baseline)."""
    sa = statements(run_a)
    return contradictions(sa, statements(run_b, sa.baseline))
