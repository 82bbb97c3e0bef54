"""A comparison as GitHub-flavoured Markdown: summary, what could not be compared, changes, all numbers."""

from __future__ import annotations

from fsbench.compare.model import Comparison
from fsbench.compare.view import build_view
from fsbench.report.markdown import code, escape, table

#: columns: case, operation, metric, reference, this run, change, p · q[, verdict]
_CHANGE_ALIGN = ["l", "l", "l", "r", "r", "r", "r", "l"]


def _value(text: str, spread: str) -> str:
    return f"{text} ({spread})" if spread and text != "–" else text


def _measure(r: dict) -> str:
    return r["metric"] + (f" ({r['stat']})" if r["stat"] else "")


def _verdict(r: dict) -> str:
    return f"{r['mark']} {r['verdict']}"


def _case(r: dict) -> str:
    return escape(" · ".join(s for s in (r["target"], r["workload"], r["point"]) if s))


def render(c: Comparison) -> str:
    """The whole comparison as Markdown."""
    v = build_view(c)
    ref = v["reference"]
    out = [f"# {escape(v['title'])}", ""]
    out.append(f"Reference: {code(ref.label)} (scenario {code(ref.scenario)}, started {ref.started}, "
               f"status {ref.status}).")
    bands = ", ".join(code(f"{k}:{t}") for k, t in v["tolerances"])
    out.append(f"A change counts when it is outside its tolerance band ({bands}), beyond the practical floors "
               f"({v['floors']}) and, where both runs have at least {v['min_repetitions']} repetitions, "
               f"significant by Welch's t-test on the logarithms with the false-discovery rate held at "
               f"α = {v['alpha']} over all the tests of a run (Benjamini-Hochberg q < α). Latencies and times "
               "are better smaller.")
    out.append(f"Metrics compared: {escape(v['metrics'])}.")
    out.append("")
    head = ["run", *(f"{mark} {name}" for name, mark in v["verdicts"])]
    out += table(head, [[code(r["info"].label), *(str(n) for _, _, n in r["counts"])] for r in v["runs"]],
                 ["l", *["r"] * len(v["verdicts"])])
    for r in v["runs"]:
        out += _run_section(r, ref.label)
    out.append("Verdicts: " + "; ".join(f"{mark} {name}: {v['legend'][name]}" for name, mark in v["verdicts"])
               + ".")
    return "\n".join(out) + "\n"


def _run_section(r: dict, ref: str) -> list[str]:
    out = ["", f"## {code(r['info'].label)} vs {code(ref)}", ""]
    if r["tests"]:
        out += [escape(r["tests"]) + ".", ""]
    if r["environment"]:
        out += ["**Environment changes** (context for the numbers, not verdicts):", ""]
        out += table(["what", "reference", "this run"],
                     [[escape(w), escape(a), escape(b)] for w, a, b in r["environment"]])
    if r["case_level"]:
        out += ["**Cases that could not be compared:**", ""]
        out += table(["verdict", "target", "workload", "parameters", "measurements", "why"],
                     [[_verdict(x), escape(x["target"]), escape(x["workload"]), escape(x["point"]),
                       str(x["measurements"]), escape(x["detail"])] for x in r["case_level"]],
                     ["l", "l", "l", "l", "r", "l"])
    if r["changes"]:
        out += ["**Changes outside the tolerance band:**", ""]
        out += table(["case", "operation", "metric", "reference", "this run", "change", "p · q", "verdict",
                      "how sure"],
                     [[_case(x), x["operation"], _measure(x), x["a"], x["b"], x["change"], x["p"], _verdict(x),
                       escape(x["sure"])] for x in r["changes"]], [*_CHANGE_ALIGN, "l"])
    elif not r["case_level"]:
        out += ["No change outside the tolerance bands.", ""]
    if r["unsure"]:
        out += ["**Outside the band and the floors but not significant** (more repetitions would tell):", ""]
        out += table(["case", "operation", "metric", "reference", "this run", "change", "p · q"],
                     [[_case(x), x["operation"], _measure(x), x["a"], x["b"], x["change"], x["p"]]
                      for x in r["unsure"]], _CHANGE_ALIGN[:7])
    out += _conclusions(r["conclusions"])
    out += [f"<details><summary>All {r['measurements']} measurements</summary>", ""]
    for g in r["groups"]:
        out += [f"### {escape(g['title'])} ({escape(g['tool'])})", ""]
        out += table(["operation", "metric", "reference", "this run", "ratio", "change", "p · q", "verdict",
                      "how sure"],
                     [[x["operation"], _measure(x), _value(x["a"], x["a_spread"]), _value(x["b"], x["b_spread"]),
                       x["ratio"], x["change"], x["p"], _verdict(x), escape(x["sure"])] for x in g["rows"]],
                     ["l", "l", "r", "r", "r", "r", "r", "l", "l"])
    out += ["</details>", ""]
    return out


def _conclusions(c: dict) -> list[str]:
    """The reference report's conclusions this run contradicts (a winner that flips, a ratio across 1)."""
    if not c:
        return []
    if c.get("error"):
        return [f"**Conclusions:** not compared ({escape(c['error'])}).", ""]
    bad = c["contradicted"]
    out = [f"**Conclusions of the reference contradicted here: {len(bad)}** of {c['statements']} statements "
           f"({c['confirmed']} confirmed, {c['unconfirmed']} not confirmed: no clear difference here).", ""]
    if bad:
        out += table(["reference said", "this run says"], [[escape(x["a"]), escape(x["b"])] for x in bad])
    return out
