"""Conclusions in the seeds' voice: per table who wins and by how much ("mariadb is 2.1-4.3× slower than
redis-always on 20 of 23"), one line of what stands out, and what it means for the scenario's use case.

Generated from the measurements the views compare; a difference is said only where it is significant and
beyond the practical floors (fsbench.analysis.difference), everything else is "no clear difference".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from fsbench.analysis.difference import stated
from fsbench.core.stats_settings import Floors
from fsbench.report.rows import job_text, op_label

#: at most this many names after "on" or "except"
MOST_NAMED = 3
#: below this factor a difference reads better in % ("12-30 % slower"), above it as a factor ("2.1-4.3×")
AS_FACTOR = 1.5


def is_time(m: dict) -> bool:
    """Whether the measurement is a time (a latency), for the time floor."""
    return m.get("unit") == "s" or "latency" in str(m.get("metric")) or str(m.get("metric")).startswith("clat")


def _speed(m: dict) -> bool:
    unit = str(m.get("unit") or "")
    return is_time(m) or unit.endswith("/s") or m.get("metric") in ("bandwidth", "iops", "rate", "throughput")


def what(m: dict, with_workload: bool) -> str:
    """'mkdir' or 'read bandwidth (seq-read)': the thing measured, as short as the table allows."""
    parts = [m["workload"]] if with_workload else []
    parts += [job_text(m["job"])] if m.get("job") else []
    parts += [m["point"]] if m.get("point") else []
    text = op_label(m["operation"]).lower()
    return text + (f" ({', '.join(parts)})" if parts else "")


def amount(ratios: Sequence[float]) -> str:
    """'12-30 %' or '8 %' (how much the value changed) where every change is under AS_FACTOR, else as
    factors: '2.1-4.3×' or '3.0×' (a halved bandwidth is 2.0×, as a doubled latency)."""
    factors = [max(r, 1 / r) for r in ratios]
    if max(factors) < AS_FACTOR:
        pcts = sorted(round(abs(r - 1) * 100) for r in ratios)
        return f"{pcts[0]} %" if pcts[0] == pcts[-1] else f"{pcts[0]}-{pcts[-1]} %"
    lo, hi = min(factors), max(factors)
    return f"{lo:.1f}×" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}×"


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:MOST_NAMED])
    return shown + (f" and {len(items) - MOST_NAMED} more" if len(items) > MOST_NAMED else "")


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def against_baseline(measured: list[dict], baseline: str, floors: Floors) -> list[str]:
    """Per target, how it compares with the baseline over the table's measurements, in words."""
    if not measured or not any(baseline in m["values"] for m in measured):
        return []
    with_workload = len({m["workload"] for m in measured}) > 1
    n = len(measured)
    targets = list(dict.fromkeys(t for m in measured for t in m["values"] if t != baseline))
    out, alike = [], []
    for t in targets:
        ahead: list[tuple[float, str]] = []
        behind: list[tuple[float, str]] = []
        same = 0
        for m in measured:
            a, b = m["values"].get(baseline), m["values"].get(t)
            if a is None or b is None:
                continue
            if not stated(a, b, floors, is_time(m)):
                same += 1
                continue
            r = b["mean"] / a["mean"]
            better = r > 1 if m["up"] else r < 1
            (ahead if better else behind).append((r, what(m, with_workload)))
        if not ahead and not behind:
            alike.append(t)
            continue
        up_word, down_word = ("faster", "slower") if all(_speed(m) for m in measured) else ("better", "worse")
        parts: list[str] = []
        for found, word in ((behind, down_word), (ahead, up_word)):
            if found:
                where = (f"on {len(found)} of {n}" if len(found) > MOST_NAMED
                         else f"on {_join([w for _, w in found])}")
                parts.append(f"{amount([f for f, _ in found])} {word}" + (f" than {baseline}" if not parts else "")
                             + f" {where}")
        tail = f"; no clear difference on the other {same}" if same else ""
        out.append(f"{t} is {', and '.join(parts)}{tail}.")
    if alike and not out:  # nobody differs from the baseline
        return [f"No clear difference between the targets on {'it' if n == 1 else f'any of the {n}'} (none "
                f"differs from {baseline} significantly at 95 % and by more than {floors.min_effect:.0%})."]
    if alike:
        who = _join(alike)
        out.append(f"No clear difference between {who} and {baseline} on {'it' if n == 1 else f'any of the {n}'} "
                   f"(none significant at 95 % and beyond {floors.min_effect:.0%}).")
    return out


def groups(measured: list[dict], baseline: str, floors: Floors) -> tuple[list[str], list[str]]:
    """(ahead, behind): where no single target leads, the targets clearly worse than the baseline on most of
    the measurements (behind), and the baseline with the others, none of them worse on most (ahead); both
    empty unless each side has a member. Judged against the baseline only, by the stated-difference rule."""
    n = len(measured)
    targets = list(dict.fromkeys(t for m in measured for t in m["values"]))
    if baseline not in targets or n == 0:
        return [], []
    behind: list[str] = []
    ahead = [baseline]
    for t in targets:
        if t == baseline:
            continue
        worse = better = 0
        for m in measured:
            a, b = m["values"].get(baseline), m["values"].get(t)
            if a is None or b is None or not stated(a, b, floors, is_time(m)):
                continue
            r = b["mean"] / a["mean"]
            if (r > 1) == bool(m["up"]):
                better += 1
            else:
                worse += 1
        (behind if worse * 2 > n else ahead).append(t)
    return (ahead, behind) if behind else ([], [])


def leaders(measured: list[dict], judged: list[dict]) -> tuple[str, str]:
    """The target clearly first on most of the measurements, and the one clearly last ('' where none)."""
    n = len(measured)
    firsts = Counter(j["best"] for j in judged if j["best_sure"])
    lasts = Counter(j["last"] for j in judged if j["last_sure"])
    lead = next((t for t, c in firsts.items() if c * 2 > n), "")
    trail = next((t for t, c in lasts.items() if c * 2 > n), "")
    if lead and len({t for m in measured for t in m["values"]}) == 2:
        trail = ""  # of two, the other one trails: said once
    return lead, trail


def standout(measured: list[dict], judged: list[dict], said: bool,
             front: Sequence[str] = (), back: Sequence[str] = ()) -> str:
    """'redis-everysec leads (clearly first on 12 of 23); etcd trails (...).', or, where none does, the front
    group and the targets behind it (`groups`), or that none stands out (said: some target was found to
    differ from the baseline)."""
    front, back = list(front), list(back)
    n = len(measured)
    if not n:
        return ""
    lead, trail = leaders(measured, judged)
    firsts = Counter(j["best"] for j in judged if j["best_sure"])
    lasts = Counter(j["last"] for j in judged if j["last_sure"])
    words = ([f"{lead} leads (clearly first on {firsts[lead]} of {n})"] if lead else []) + \
            ([f"{trail} trails (clearly last on {lasts[trail]} of {n})"] if trail else [])
    if not lead and front and back:  # no single winner, but a clear split: who is in front, who is behind
        words += [f"{'n' if words else 'N'}o single target leads: {_join(back)} {'is' if len(back) == 1 else 'are'} "
                  f"clearly behind {front[0]} on most of these, {_join(front)} "
                  f"{'is' if len(front) == 1 else 'are'} the front group"]
    if words:
        return "; ".join(words) + "."
    if not said and not firsts and not lasts:  # against_baseline said there is no clear difference
        return ""
    return "No target is clearly first or last on most of these."


def use_case_sentence(application: str, findings: Sequence[tuple]) -> str:
    """What the tables mean for the scenario's use case: per table (title, leader, trailer) who to pick or
    avoid; the tables that do not decide between the targets named once."""
    if not application or not findings:
        return ""
    parts, undecided = [], []
    for title, lead, trail, *grouped in findings:
        front, back = (grouped + [[], []])[:2] if grouped else ([], [])
        words = ([f"{lead} is the pick"] if lead else []) + ([f"avoid {trail}"] if trail else [])
        if not lead and front and back:  # the front group to choose from, all behind it to avoid
            words = [f"pick among {_join(list(front))}", f"avoid {_join(list(back))}"]
        if words:
            parts.append(f"on {title}, {' and '.join(words)}")
        else:
            undecided.append(title)
    if not parts:
        return (f"For the use case ({application}): none of these tables decides between the targets at this "
                "run's precision.")
    rest = f"; {_join(undecided)} {'does' if len(undecided) == 1 else 'do'} not decide between them" \
        if undecided else ""
    return f"For the use case ({application}): " + "; ".join(parts) + rest + "."
