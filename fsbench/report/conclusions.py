"""Written conclusions: sentences a reader can quote, generated from the numbers the views show.

Per tool, over what its views measured (each thing measured once, by the first metric a view shows of
it, so a run's IOPS and bandwidth are one measurement): which target is best and which last on how
many measurements; the range of the others' ratios to the baseline, higher-is-better metrics apart
from lower-is-better ones, with where each end is; and the measurements whose differences stay
within the run-to-run spread (or within 2 %), which are therefore not significant. A single run has
no spread to judge by: one sentence says so for the whole report. Per view: the values against the
scenario's thresholds and the functional checks.
"""

from __future__ import annotations

from collections import Counter

from fsbench.analysis.stats import LogSummary, log_ratio
from fsbench.report.rows import job_text, metric_text, op_label

#: a difference counts when the best beats the last by more than this many of their spreads (and by 2 %)
SPREAD_FACTOR = 2.0
MIN_DIFFERENCE = 0.02
MOST_LISTED = 6
ALPHA = 0.05  # the significance level of every difference stated (95 % intervals)


def tool_sentences(views: list[dict], baseline: str) -> list[tuple[str, list[str]]]:
    """(tool, sentences) for each tool the views compare targets with, in the views' order."""
    by_tool: dict[str, dict[tuple, dict]] = {}
    for v in views:
        for m in v.get("measurements") or []:
            by_tool.setdefault(m["tool"], {}).setdefault(m["key"], m)  # the first view's figure of it
    out = []
    for tool, measured in by_tool.items():
        lines = summarise(tool, list(measured.values()), baseline)
        if lines:
            out.append((tool, lines))
    return out


def single_run_note(views: list[dict]) -> str:
    """One sentence when the compared values have no run-to-run spread (a single run each), else ''."""
    tools: dict[str, bool] = {}
    for v in views:
        for m in v.get("measurements") or []:
            tools[m["tool"]] = tools.get(m["tool"], False) or any(x["n"] > 1 for x in m["values"].values())
    single = [t for t, spread in tools.items() if not spread]
    if not single:
        return ""
    who = "Each value" if len(single) == len(tools) else f"Each value of {_join(single)}"
    return (f"{who} comes from a single run, so run-to-run noise cannot be told from a real difference "
            f"(only differences within {MIN_DIFFERENCE:.0%} are called not significant): repeat the cases "
            "(settings: repetitions: 3) to judge them.")


def judge(m: dict) -> dict:
    """The best and the last target of one measurement, each counted only where it differs significantly
    from the next one in the ranking (`best_sure`, `last_sure`): a winner by noise flips on a rerun."""
    ranked = sorted(m["values"].items(), key=lambda kv: kv[1]["mean"], reverse=m["up"])
    (top, tv), (low, lv) = ranked[0], ranked[-1]
    best_sure = differs(tv, ranked[1][1])
    last_sure = differs(ranked[-2][1], lv)
    return {"best": top, "last": low, "significant": differs(tv, lv), "best_sure": best_sure,
            "last_sure": last_sure}


def differs(a: dict, b: dict) -> bool:
    """Whether two targets' values differ: Welch's t on the logarithms of their repetitions (p < ALPHA)
    and by more than MIN_DIFFERENCE; with fewer than two repetitions, by more than SPREAD_FACTOR spreads."""
    apart = abs(a["mean"] - b["mean"])
    floor = MIN_DIFFERENCE * max(a["mean"], b["mean"])
    if apart <= floor:
        return False
    if a.get("n", 1) >= 2 and b.get("n", 1) >= 2 and "log_mean" in a and "log_mean" in b:
        r = log_ratio(LogSummary(int(a["n"]), a["log_mean"], a["log_var"]),
                      LogSummary(int(b["n"]), b["log_mean"], b["log_var"]))
        return r.significant(ALPHA)
    return apart > SPREAD_FACTOR * max(a["std"], b["std"])


def ratio_significant(v: dict, base: dict) -> bool:
    """Whether a ratio to the baseline differs from 1: by its interval (the test), else as `differs` says."""
    p = v.get("ratio_p")
    if p is not None:
        return bool(p < ALPHA) and abs(v["ratio"] - 1) > MIN_DIFFERENCE
    return differs(v, base)


def label(m: dict, with_workload: bool, with_job: bool) -> str:
    """'write bandwidth (seq-write-1m, numjobs=4)': what was measured, where it must be said."""
    parts = [m["workload"]] if with_workload else []
    parts += [job_text(m["job"])] if with_job and m["job"] else []
    parts += [m["point"]] if m["point"] else []
    text = f"{op_label(m['operation']).lower()} {metric_text(m['metric'])}"
    return text + (f" ({', '.join(parts)})" if parts else "")


def summarise(tool: str, measured: list[dict], baseline: str) -> list[str]:
    """The sentences about one tool's measurements; values the validity checks flagged are left out
    (a number that does not measure what its label says ranks nothing), and one sentence names them."""
    measured, left_out = _valid(measured)
    if not measured:
        return [_left_out_sentence(tool, left_out)] if left_out else []
    with_workload = len({m["workload"] for m in measured}) > 1
    with_job = len({(m["workload"], m["job"]) for m in measured}) > len({m["workload"] for m in measured})
    best: Counter[str] = Counter()
    last: Counter[str] = Counter()
    flat = []
    for m in measured:
        j = judge(m)
        if j["best_sure"]:
            best[j["best"]] += 1
        if j["last_sure"]:
            last[j["last"]] += 1
        if not (j["best_sure"] or j["last_sure"]):
            flat.append(label(m, with_workload, with_job))
    n = len(measured)
    noun = "measurement" if n == 1 else "measurements"
    out = []
    if best or last:
        order = list(dict.fromkeys(t for m in measured for t in m["values"]))  # the scenario's order
        parts = []
        if best:
            parts.append(f"{_leaders(best, order)} best on {best.most_common(1)[0][1]} of {n} {noun}")
        if last:
            parts.append(f"{_leaders(last, order)} last on {last.most_common(1)[0][1]}" if best else
                         f"{_leaders(last, order)} last on {last.most_common(1)[0][1]} of {n} {noun}")
        out.append(f"{tool}: {'; '.join(parts)}.")
    else:
        out.append(f"{tool}: no target stands out: {'the' if n == 1 else f'all {n}'} {noun} "
                   f"{'is' if n == 1 else 'are'} within the run-to-run spread (or {MIN_DIFFERENCE:.0%}).")
    for up in (True, False):
        ends = [(v["ratio"], t, label(m, with_workload, with_job)) for m in measured if m["up"] is up
                for t, v in m["values"].items() if t != baseline and v["ratio"] is not None
                and baseline in m["values"] and ratio_significant(v, m["values"][baseline])]
        if not ends:
            continue
        way = "higher is better" if up else "lower is better"
        lo, hi = min(ends), max(ends)
        others = sorted({t for _, t, _ in ends})
        who = f"{others[0]} is" if len(others) == 1 else "the others are"
        if len(ends) == 1:
            out.append(f"Against {baseline} ({way}), {who} at {lo[0]:.2f}× ({lo[2]}).")
        elif f"{lo[0]:.2f}" == f"{hi[0]:.2f}":
            out.append(f"Against {baseline} ({way}), {who} at {lo[0]:.2f}× on each of these {len(ends)} values.")
        else:
            out.append(f"Against {baseline} ({way}), the others range from {lo[0]:.2f}× ({lo[1]}, {lo[2]}) "
                       f"to {hi[0]:.2f}× ({hi[1]}, {hi[2]}).")
    if flat and (best or last):
        shown = ", ".join(flat[:MOST_LISTED]) + (f" and {len(flat) - MOST_LISTED} more"
                                                 if len(flat) > MOST_LISTED else "")
        out.append(f"No clear difference (not significant at {1 - ALPHA:.0%}, or within {MIN_DIFFERENCE:.0%}): "
                   f"{shown}.")
    if left_out:
        out.append(_left_out_sentence(tool, left_out))
    return out


def _valid(measured: list[dict]) -> tuple[list[dict], list[str]]:
    """The measurements without their flagged values (those left with fewer than two targets dropped),
    and 'what (target: the check)' of each value left out."""
    kept, left = [], []
    with_workload = len({m["workload"] for m in measured}) > 1
    for m in measured:
        flagged = {t: v["flagged"] for t, v in m["values"].items() if v.get("flagged")}
        what = label(m, with_workload, False)
        left += [f"{what} of {t} ({detail.split(':', 1)[0]})" for t, detail in flagged.items()]
        values = {t: v for t, v in m["values"].items() if t not in flagged}
        if len(values) >= 2:
            kept.append({**m, "values": values})
    return kept, left


def _left_out_sentence(tool: str, left: list[str]) -> str:
    shown = ", ".join(left[:MOST_LISTED]) + (f" and {len(left) - MOST_LISTED} more" if len(left) > MOST_LISTED
                                             else "")
    return f"{tool}: left out as flagged by the validity checks (see Validity): {shown}."


def _leaders(counts: Counter, order: list[str]) -> str:
    top = counts.most_common(1)[0][1]
    names = sorted((t for t, c in counts.items() if c == top), key=order.index)
    return f"{_join(names)} {'is' if len(names) == 1 else 'are'}"


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# -- per view: thresholds and functional checks -------------------------------------------------------

def view_sentences(view: dict) -> list[str]:
    """Sentences about one view's values against the thresholds and its functional checks."""
    return _verdict_sentences(view) + _check_sentences(view)


def _check_sentences(view: dict) -> list[str]:
    """Functional checks: per target how many pass, and which failed or are not supported."""
    out = []
    for t in view.get("tables", []):
        checks = [r for r in t["rows"] if r.get("check")]
        for i, target in enumerate(t.get("targets") or []):
            outcome: dict[str, list[str]] = {}
            for r in checks:
                outcome.setdefault(r["cells"][i]["text"], []).append(r["labels"][0].lower())
            if not outcome:
                continue
            who = f" on {target}" if len(t["targets"]) > 1 else ""
            text = f"{view['title']}{who}: {len(outcome.get('pass', []))} of {len(checks)} checks pass"
            for word in ("failed", "not supported", "varies"):
                if outcome.get(word):
                    text += f"; {word}: {', '.join(outcome[word])}"
            out.append(text + ".")
    return out


def _verdict_sentences(view: dict) -> list[str]:
    """Against the scenario's thresholds: how many values are good, fair and poor, and which are poor."""
    counts: Counter = Counter()
    poor = []
    for t in view.get("tables", []):
        targets = t.get("targets") or []
        per = int(t.get("per_target") or 1)
        for r in t["rows"]:
            for i, c in enumerate(r.get("cells", [])):
                if c.get("verdict"):
                    counts[c["verdict"]] += 1
                    if c["verdict"] == "poor":
                        what = (r.get("labels") or [""])[0].lower()
                        target = targets[i // per] if i // per < len(targets) else ""
                        poor.append(f"{what} ({target})" if len(targets) > 1 else what)
    if not counts:
        return []
    text = ", ".join(f"{counts[v]} {v}" for v in ("good", "fair", "poor") if counts[v])
    sentence = f"{view['title']}: against the thresholds, {text}"
    return [sentence + (f"; poor: {', '.join(poor[:8])}." if poor else ".")]
