"""`--case` values: a number is that case's number, anything else one case's id exactly."""

from __future__ import annotations

import difflib

from fsbench.core.units import is_whole_number
from fsbench.scenario.plan import Case


class CaseNotFound(ValueError):
    """A --case value that names no case; the message lists the closest ids."""


def select_cases(cases: list[Case], wanted: list[str] | tuple[str, ...]) -> list[Case]:
    """The cases named by wanted, in plan order (every case when wanted is empty)."""
    if not wanted:
        return list(cases)
    by_index = {c.index: c for c in cases}
    by_id = {c.case_id: c for c in cases}
    chosen: set[str] = set()
    for value in wanted:
        text = value.strip()
        case = by_index.get(int(text)) if is_whole_number(text) else by_id.get(text)
        if case is None:
            raise CaseNotFound(_not_found(text, cases))
        chosen.add(case.case_id)
    return [c for c in cases if c.case_id in chosen]


def _not_found(text: str, cases: list[Case]) -> str:
    if is_whole_number(text):
        return f"there is no case {text}: the plan's cases are numbered 1 to {len(cases)}"
    ids = [c.case_id for c in cases]
    near = [i for i in ids if text and text in i][:5] or difflib.get_close_matches(text, ids, n=5, cutoff=0.4)
    hint = ("; did you mean " + ", ".join(near) + "?") if near else "; `fsbench plan` lists every case"
    return f"no case has the id {text!r} (give a case's number or its whole id){hint}"
