"""Text put into Markdown (report.md, summary.md, the compare page's Markdown) that a renderer shows as written.

Titles, descriptions and conclusions come from a scenario, maybe someone else's: raw HTML in them (`<script>`)
and link syntax (`[x](javascript:…)`, `![x](…)`, `[x]: url`) would otherwise become live in a wiki or a ticket.
Character references are literal text in CommonMark, never structure, so `&#91;` shows a bracket that opens
no link; backslash escapes would not do, as table cells double backslashes.
"""

from __future__ import annotations

import re

_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "&#91;", "]": "&#93;"})


def escape(text: object) -> str:
    """Text that Markdown (and the HTML GitHub allows in it) shows as written: no tag, no link."""
    return str(text).translate(_TEXT)


def cell(text: object) -> str:
    """escape(), for a table cell: a pipe would end the cell, a line break the row."""
    return " ".join(escape(text).replace("|", "&#124;").split())


def code(text: object) -> str:
    """An inline code span that survives backticks inside it."""
    s = str(text)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


#: how a finding's verdict is marked
FINDING_MARKS = {"holds": "✅", "does not hold": "❌", "not decided": "❔"}


def findings_markdown(findings: list[dict], level: str) -> list[str]:
    """The study's findings with their verdict here (fsbench.analysis.findings): a heading and a list."""
    if not findings:
        return []
    counts = {v: sum(1 for f in findings if f["verdict"] == v) for v in FINDING_MARKS}
    out = [f"{level} The study's findings, here", "",
           "Each finding the scenario restates, judged as the conclusions are (95 %, paired by round where "
           "the targets ran in rounds, as a rerun would find it, beyond the floors): " + ", ".join(
               f"{n} {v}" for v, n in counts.items() if n) + ".", ""]
    for f in findings:
        out.append(f"- {FINDING_MARKS.get(f['verdict'], '')} **{escape(f['verdict'])}**: {escape(f['claim'])} "
                   f"— {escape(f['what'])}: {escape(f['reason'])}")
    return out + [""]
