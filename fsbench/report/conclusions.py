"""Written conclusions: sentences a reader can quote, generated from the numbers the views show.

Per table (view), in the seeds' voice (fsbench.report.voice): each target against the baseline, who wins
and by how much, "no clear difference" for the rest, one line of what stands out; then what the tables mean
for the scenario's use case. A difference is said only where it is significant at 95 % (paired by round,
else Welch on the logarithms) and beyond the floors of
`settings.stats` (fsbench.analysis.difference). A single run has no spread: one sentence says so. Per
view: the values against the scenario's thresholds and the functional checks.
"""

from __future__ import annotations

from collections import Counter

from fsbench.analysis.difference import stated
from fsbench.core.stats_settings import Floors
from fsbench.report import voice
from fsbench.report.rows import job_text, metric_text, op_label

MOST_LISTED = 6


def tool_sentences(views: list[dict], baseline: str, floors: Floors | None = None,
                   application: str = "") -> list[tuple[str, list[str]]]:
    """(table title, [its paragraph]) for each view that compares targets, each measurement said once (in
    the first view that shows it): what stands out, then each target against the baseline; then what the
    tables mean for the use case (titled "What it means")."""
    floors = floors or Floors()
    seen: set[tuple] = set()
    out, findings = [], []
    for v in views:
        mine = []
        for m in v.get("measurements") or []:
            if m["key"] not in seen:
                seen.add(m["key"])
                mine.append(m)
        if not mine:
            continue
        measured, left_out = _valid(mine)
        lines = voice.against_baseline(measured, baseline, floors)
        judged = [judge(m, floors) for m in measured]
        said = any(not line.startswith("No clear difference") for line in lines)
        front, back = voice.groups(measured, baseline, floors)
        short = voice.standout(measured, judged, said, front, back)
        if short:
            findings.append((v["title"], *voice.leaders(measured, judged), front, back))
        lines = ([short] if short else []) + lines + ([_left_out_sentence(left_out)] if left_out else [])
        if lines:
            out.append((v["title"], [f"{v['title']}: " + " ".join(lines)]))
    meaning = voice.use_case_sentence(application, findings)
    return out + ([("What it means", [meaning])] if meaning else [])


def single_run_note(views: list[dict]) -> str:
    """One sentence when the compared values have no run-to-run spread (a single run each), else ''."""
    tools: dict[str, bool] = {}
    for v in views:
        for m in v.get("measurements") or []:
            tools[m["tool"]] = tools.get(m["tool"], False) or any(x["n"] > 1 for x in m["values"].values())
    single = [t for t, spread in tools.items() if not spread]
    if not single:
        return ""
    who = "Each value" if len(single) == len(tools) else f"Each value of {voice._join(single)}"
    return (f"{who} comes from a single run, so run-to-run noise cannot be told from a real difference and "
            "no difference between them is stated: repeat the cases (settings: repetitions: 3) to judge them.")


def judge(m: dict, floors: Floors | None = None) -> dict:
    """The best and the last target of one measurement, each counted only where it differs (significant
    and beyond the floors) from the next one in the ranking (`best_sure`, `last_sure`)."""
    floors = floors or Floors()
    ranked = sorted(m["values"].items(), key=lambda kv: kv[1]["mean"], reverse=m["up"])
    (top, tv), (low, lv) = ranked[0], ranked[-1]
    time = voice.is_time(m)
    return {"best": top, "last": low, "significant": stated(tv, lv, floors, time),
            "best_sure": stated(tv, ranked[1][1], floors, time), "last_sure": stated(ranked[-2][1], lv, floors, time)}


def ratio_significant(v: dict, base: dict, floors: Floors | None = None, time: bool = False) -> bool:
    """Whether a value differs from the baseline's enough to say so (fsbench.analysis.difference.stated)."""
    return stated(base, v, floors or Floors(), time)


def label(m: dict, with_workload: bool, with_job: bool) -> str:
    """'write bandwidth (seq-write-1m, numjobs=4)': what was measured, where it must be said."""
    parts = [m["workload"]] if with_workload else []
    parts += [job_text(m["job"])] if with_job and m["job"] else []
    parts += [m["point"]] if m["point"] else []
    text = f"{op_label(m['operation']).lower()} {metric_text(m['metric'])}"
    return text + (f" ({', '.join(parts)})" if parts else "")


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


def _left_out_sentence(left: list[str]) -> str:
    shown = ", ".join(left[:MOST_LISTED]) + (f" and {len(left) - MOST_LISTED} more" if len(left) > MOST_LISTED
                                             else "")
    return f"Left out as flagged by the validity checks (see Validity): {shown}."


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
