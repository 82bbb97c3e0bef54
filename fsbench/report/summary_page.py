"""The one-page summary at the top of a report (and summary.md): the question, the answer per use-case item
with its margin and confidence, what is flagged, what was not run here; and the answer chart's numbers.

The judging is the conclusions' (fsbench.report.conclusions, fsbench.report.voice): this module only picks
and arranges what they decided, so the summary never says more than the conclusions below it.
"""

from __future__ import annotations

import math

from fsbench.analysis.difference import compare, stated
from fsbench.core.stats_settings import Floors
from fsbench.report import voice
from fsbench.report.conclusions import judge, label
from fsbench.report.md_text import cell, code, escape, findings_markdown
from fsbench.report.rows import metric_text

#: the answer chart and table show at most this many measurements (the views below hold every one)
MOST_ANSWERS = 24


def answers(views: list[dict], baseline: str, floors: Floors) -> tuple[list[dict], int]:
    """Each measurement the views compare (said once, in the first view that shows it): every target's ratio
    to the baseline with its 95 % interval, whether the difference is stated (significant and beyond the
    floors) and better; (the first MOST_ANSWERS, how many more)."""
    seen: set[tuple] = set()
    out: list[dict] = []
    for v in views:
        mine = [m for m in v.get("measurements") or [] if m["key"] not in seen]
        seen.update(m["key"] for m in mine)
        with_workload = len({m["workload"] for m in mine}) > 1
        for m in mine:
            base = m["values"].get(baseline)
            if base is None:
                continue
            ratios = []
            for t, val in m["values"].items():
                if t == baseline or not val.get("ratio"):
                    continue
                ratio = float(val["ratio"])
                # the interval of the test that decides (paired by round where both ran the same rounds, else
                # Welch on the logarithms): the one printed must be the one the star stands for
                d = compare(base, val)
                low, high = (d.low, d.high) if math.isfinite(d.low) and math.isfinite(d.high) else (None, None)
                sure = not val.get("flagged") and not base.get("flagged") and stated(
                    base, val, floors, voice.is_time(m))
                shown = d.ratio if low is not None and d.ratio == d.ratio else ratio  # inside its interval
                ratios.append({"target": t, "ratio": shown, "low": low, "high": high, "method": d.method,
                               "stated": sure, "better": (shown > 1) == bool(m["up"]),
                               "flagged": str(val.get("flagged") or base.get("flagged") or "")})
            if ratios:
                out.append({"view": v["title"], "anchor": v.get("anchor", ""),
                            "what": label(m, with_workload, True), "metric": metric_text(m["metric"]),
                            "up": bool(m["up"]), "ratios": ratios})
    return out[:MOST_ANSWERS], max(0, len(out) - MOST_ANSWERS)


def winners(views: list[dict], floors: Floors, baseline: str = "") -> list[dict]:
    """Per view that compares targets (a use-case item): the target clearly first on most of its
    measurements (voice.leaders), by how much over the next one (its range of ratios) and how sure."""
    seen: set[tuple] = set()
    out = []
    for v in views:
        mine = [m for m in v.get("measurements") or []
                if m["key"] not in seen and not any(x.get("flagged") for x in m["values"].values())]
        seen.update(m["key"] for m in v.get("measurements") or [])
        if not mine:
            continue
        judged = [judge(m, floors) for m in mine]
        lead, _ = voice.leaders(mine, judged)
        first = [(m, j) for m, j in zip(mine, judged) if j["best_sure"] and j["best"] == lead] if lead else []
        margins = [_margin(m, lead) for m, _ in first]
        front, back = voice.groups(mine, baseline, floors) if baseline and not lead else ([], [])
        count = f"{len(mine)} measurement{'s' if len(mine) != 1 else ''}"
        if lead:
            confidence = (f"clearly first on {len(first)} of {len(mine)} (95 %, beyond the "
                          f"{floors.min_effect:.0%} floor)")
        elif front and back:
            confidence = (f"no single target first; front group {', '.join(front)}; clearly behind {front[0]} on "
                          f"most of its {count}: {', '.join(back)}")
        else:
            confidence = f"no target clearly first on most of its {count}"
        out.append({"view": v["title"], "anchor": v.get("anchor", ""), "winner": lead,
                    "margin": voice.amount([r for r in margins if r]) if any(margins) else "",
                    "confidence": confidence})
    return out


def _margin(m: dict, lead: str) -> float:
    """The leader's value over the runner-up's, as a factor above 1 (for latencies: the runner-up's over it)."""
    ranked = sorted(m["values"].items(), key=lambda kv: kv[1]["mean"], reverse=m["up"])
    if len(ranked) < 2 or ranked[0][0] != lead:
        return 0.0
    a, b = ranked[0][1]["mean"], ranked[1][1]["mean"]
    return max(a, b) / min(a, b) if min(a, b) > 0 else 0.0


def one_page(ctx: dict) -> dict:
    """What the summary shows, from the report's context (its use case, views, validity and scale)."""
    floors = ctx["floors"]
    items, more = answers(ctx["views"], ctx["baseline"], floors) if len(ctx["targets"]) > 1 else ([], 0)
    use = dict(ctx["use_case"])
    question = use.get("Application") or ctx.get("description") or ctx["title"]
    flagged = []
    validity = ctx.get("validity") or {}
    if validity.get("flagged"):
        flagged.append(f"{validity['flagged']} measurement{'s' if validity['flagged'] != 1 else ''} flagged by "
                       "the validity checks (they measure something else than their label: see Validity)")
    for u in ctx.get("unstable") or []:  # per table what to do, not a count nobody can act on
        flagged.append(f"{u['workload']}: {u['count']} measurement{'s' if u['count'] != 1 else ''} too uncertain "
                       f"(95 % interval wider than ±{ctx['cv_threshold']}); to decide them, {u['fix']}")
    if ctx.get("warnings"):
        flagged.append(f"{len(ctx['warnings'])} warning{'s' if len(ctx['warnings']) != 1 else ''} the run gave "
                       "about its own figures (see Warnings)")
    failed = [c for c in ctx.get("failed") or []]
    if failed:
        flagged.append(f"{len(failed)} case{'s' if len(failed) != 1 else ''} did not succeed")
    return {"question": question, "required": use.get("Required performance", ""), "baseline": ctx["baseline"],
            "winners": winners(ctx["views"], floors, ctx["baseline"]) if len(ctx["targets"]) > 1 else [],
            "answers": items, "more_answers": more, "log": _log_scale(items),
            "flagged": flagged, "not_run": not_run(ctx), "findings": ctx.get("findings") or []}


def not_run(ctx: dict) -> list[str]:
    """What this run is not: a smaller scale than full (each variable that differs), and the scenario's own
    words on what was substituted or left out (report.conclusions, said in full below)."""
    out = []
    scale = ctx.get("scale")
    if scale and scale.get("full") and scale["value"] != scale["full"]:
        differs = ", ".join(f"{n} {ran} (at {scale['full']}: {full})" for n, ran, full in scale["differs"])
        out.append(f"scale {scale['value']}, not {scale['full']}" + (f": {differs}" if differs else ""))
    for para in ctx.get("own_conclusions") or []:
        low = para.lower()
        if any(w in low for w in ("substitut", "instead of", "not run", "stand-in", "stands in", "replac")):
            out.append(para)
    return out


def _log_scale(items: list[dict]) -> bool:
    """Ratios spanning a decade or more read on a log axis (0.1x and 10x an equal step from 1)."""
    values = [r[k] for a in items for r in a["ratios"] for k in ("ratio", "low", "high") if r.get(k)]
    values = [v for v in values if v and v > 0]
    return bool(values) and max(values) / min(values) >= 10


def ratio_text(r: dict) -> str:
    """'2.31× [2.10–2.55]' (the ratio to the baseline and its 95 % interval)."""
    def num(x: float) -> str:
        return f"{x:.3g}" if x < 10 else f"{x:.0f}"
    interval = (f" [{num(r['low'])}–{num(r['high'])}]" if r.get("low") is not None and r.get("high") is not None
                and math.isfinite(r["low"]) and math.isfinite(r["high"]) else "")
    return f"{num(r['ratio'])}×{interval}"


def summary_markdown(ctx: dict) -> str:
    """summary.md: the one-page summary for a chat or a ticket (plain Markdown: every text from the scenario
    or the run shown as written, no HTML or link of its own; fsbench.report.md_text)."""
    s = ctx.get("summary") or one_page(ctx)
    m = ctx["manifest"]
    out = [f"# {escape(ctx['title'])}: summary", "",
           f"Run {code(m.get('run_id', ''))} · {escape(m.get('status', ''))} · {ctx['total_cases']} cases · fsbench "
           f"{escape(m.get('fsbench_version', ''))}", "", f"**Question:** {escape(s['question'])}"]
    if s["required"]:
        out += ["", f"**Required:** {escape(s['required'])}"]
    out += ["", "## Answer", ""]
    if s["winners"]:
        out += [f"- **{escape(w['view'])}**: " + escape(
            f"{w['winner']}, by {w['margin']} over the next, " if w["winner"] and w["margin"] else
            f"{w['winner']}, " if w["winner"] else "") + escape(w["confidence"]) for w in s["winners"]]
    else:
        out.append("- No comparison to draw: one target, or no results.")
    if s["answers"]:
        out += ["", f"Ratio to the baseline ({escape(s['baseline'])}), 95 % interval; * = a stated difference:", "",
                "| measurement | " + " | ".join(cell(t) for t in _targets(s)) + " |",
                "|---|" + "---|" * len(_targets(s))]
        for a in s["answers"]:
            cells = {r["target"]: ratio_text(r) + (" *" if r["stated"] else "") + (" ⚠" if r["flagged"] else "")
                     for r in a["ratios"]}
            out.append(f"| {cell(a['view'])}: {cell(a['what'])} | "
                       + " | ".join(cells.get(t, "") for t in _targets(s)) + " |")  # our own numbers
        if s["more_answers"]:
            out += ["", f"and {s['more_answers']} more in report.html"]
    out += [""] + findings_markdown(s.get("findings") or [], "##")[:-1] if s.get("findings") else []
    out += ["", "## Flagged", ""] + ([f"- {escape(f)}" for f in s["flagged"]] or ["- nothing"])
    out += ["", "## Not run here", ""] + ([f"- {escape(n)}" for n in s["not_run"]]
                                         or ["- nothing: the scenario as written"])
    return "\n".join(out) + "\n"


def _targets(s: dict) -> list[str]:
    return list(dict.fromkeys(r["target"] for a in s["answers"] for r in a["ratios"]))
