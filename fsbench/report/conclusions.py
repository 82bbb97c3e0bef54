"""Written conclusions: sentences a reader can quote, generated from the numbers of the primary views.

Per view: which target is best and which worst on how many measurements, the range of the others'
ratios to the baseline (with where each end is), and the measurements whose differences stay within
the run-to-run spread, which are therefore not significant. A single run has no spread to judge by;
the sentence then says so instead of calling a difference significant.
"""

from __future__ import annotations

from collections import Counter

from fsbench.tidy import HIGHER_IS_BETTER

#: a difference counts when the best beats the worst by more than this many of their spreads (and by 2 %)
SPREAD_FACTOR = 2.0
MIN_DIFFERENCE = 0.02


def view_sentences(view: dict, baseline: str) -> list[str]:
    """Sentences about one view's tables (table, by_value and at views)."""
    out = _verdict_sentences(view) + _check_sentences(view)
    measurements = []  # (label, {target: (value, cv, n, ratio)}, higher_is_better)
    for t in view.get("tables", []):
        if t.get("kind") == "compare":
            for r in t["rows"]:
                if r.get("section") is not None or r.get("resource") or r.get("check"):
                    continue
                vals = _values(t["targets"], r["cells"])
                if len(vals) >= 2:
                    point = f" ({t['title']})" if t.get("title") else ""
                    measurements.append((f"{r['labels'][0].lower()}{point}", vals, r["metric"] in HIGHER_IS_BETTER))
        elif t.get("kind") == "by_value":
            for ci, head in enumerate(t["head"][1:]):
                if head.startswith("client"):
                    continue
                cells = {r["target"]: r["cells"][ci] for r in t["rows"]}
                vals = _values(list(cells), list(cells.values()))
                metric = head.split(" ")[-1]
                up = not any(w in head for w in ("lat", "time"))
                if len(vals) >= 2:
                    point = f" at {t['title']}" if t.get("title") else ""
                    measurements.append((f"{head}{point}", vals, up if metric else True))
    if not measurements:
        return out
    return out + _summarise(view["title"], measurements, baseline)


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
        for r in t["rows"]:
            for target, c in zip(t.get("targets") or [""] * len(r.get("cells", [])), r.get("cells", [])):
                if c.get("verdict"):
                    counts[c["verdict"]] += 1
                    if c["verdict"] == "poor":
                        label = (r.get("labels") or [""])[0].lower()
                        poor.append(f"{label} ({target})" if len(t.get("targets") or []) > 1 else label)
    if not counts:
        return []
    text = ", ".join(f"{counts[v]} {v}" for v in ("good", "fair", "poor") if counts[v])
    sentence = f"{view['title']}: against the thresholds, {text}"
    return [sentence + (f"; poor: {', '.join(poor[:8])}." if poor else ".")]


def _values(targets: list[str], cells: list[dict]) -> dict[str, tuple[float, float, int, float | None]]:
    out = {}
    for t, c in zip(targets, cells):
        if isinstance(c.get("value"), float) and c["value"] > 0:
            out[t] = (c["value"], float(c.get("spread") or 0.0), int(c.get("n") or 1), _ratio(c))
    return out


def _ratio(c: dict) -> float | None:
    text = str(c.get("ratio") or "").strip("()")
    try:
        return float(text)
    except ValueError:
        return None


def _summarise(title: str, measurements: list, baseline: str) -> list[str]:
    best: Counter[str] = Counter()
    worst: Counter[str] = Counter()
    flat, unknown = [], []
    ratios: list[tuple[float, str, str]] = []
    for label, vals, up in measurements:
        ranked = sorted(vals.items(), key=lambda kv: kv[1][0], reverse=up)
        (top, (tv, tcv, tn, _)), (low, (lv, lcv, ln, _)) = ranked[0], ranked[-1]
        spread = max(tcv, lcv) * max(tv, lv)
        apart = abs(tv - lv)
        if tn <= 1 and ln <= 1 and tcv == 0 and lcv == 0:
            unknown.append(label)
        if apart <= max(SPREAD_FACTOR * spread, MIN_DIFFERENCE * max(tv, lv)):
            flat.append(label)
        else:
            best[top] += 1
            worst[low] += 1
        for t, (_, _, _, ratio) in vals.items():
            if t != baseline and ratio is not None:
                ratios.append((ratio, t, label if up else f"{label}, lower is better"))
    n = len(measurements)
    out = []
    if best:
        who, times = best.most_common(1)[0]
        loser, ltimes = worst.most_common(1)[0]
        out.append(f"{title}: {who} is best on {times} of {n} measurements; {loser} is last on {ltimes}.")
    lead = "" if out else f"{title}: "
    if ratios:
        lo, hi = min(ratios), max(ratios)
        if lo == hi:
            out.append(f"{lead}against {baseline}, {lo[1]} is at {lo[0]:.2f}× ({lo[2]}).")
        else:
            out.append(f"{lead}against {baseline}, the others range from {lo[0]:.2f}× ({lo[1]}, {lo[2]}) to "
                       f"{hi[0]:.2f}× ({hi[1]}, {hi[2]}).")
        out[-1] = out[-1][0].upper() + out[-1][1:] if not lead else out[-1]
    if flat:
        shown = ", ".join(flat[:6]) + (f" and {len(flat) - 6} more" if len(flat) > 6 else "")
        out.append(f"Not significant (the targets are within their run-to-run spread, or within 2 %): {shown}.")
    if unknown and len(unknown) == n:
        out.append("Each value comes from a single run: repeat the cases (repetitions: 3) to tell real "
                   "differences from noise.")
    return out
