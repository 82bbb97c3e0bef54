"""Tables that fit the page: one with more targets than 1280 px holds is split, the baseline in each part."""

from __future__ import annotations

#: target columns a table holds at 1280 px (six engines side by side: seed 000), and value columns
#: when each target has several (a view with `columns: metrics`)
MOST_TARGETS = 6
MOST_VALUE_COLUMNS = 8


def fits(targets: int, per_target: int) -> bool:
    """Whether a table of this many targets, each with per_target value columns, fits the page whole."""
    return targets <= (MOST_TARGETS if per_target <= 1 else max(2, MOST_VALUE_COLUMNS // per_target))


def split_wide(table: dict, baseline: str = "") -> list[dict]:
    """A table as parts of at most MOST_TARGETS targets (fewer when each has several columns), each part
    with the baseline's column first (the first target's when the baseline is not in the table)."""
    targets = list(table.get("targets") or [])
    per = int(table.get("per_target") or 1)
    most = MOST_TARGETS if per == 1 else max(2, MOST_VALUE_COLUMNS // per)
    if table.get("kind") not in ("compare", "pivot") or fits(len(targets), per):
        return [table]
    anchor = baseline if baseline in targets else targets[0]
    rest = [t for t in targets if t != anchor]
    size = most - 1
    chunks = [rest[i:i + size] for i in range(0, len(rest), size)]
    labels = len(table["head"]) - len(targets) * per  # the label columns before the targets'
    out = []
    for n, chunk in enumerate(chunks, 1):
        shown = [anchor, *chunk]
        idx = [targets.index(t) * per + k for t in shown for k in range(per)]
        rows = [{**r, "cells": [r["cells"][j] for j in idx]} if r.get("cells") else r for r in table["rows"]]
        head = [*table["head"][:labels], *[table["head"][labels + j] for j in idx]]
        title = table.get("title") or ""
        part = f"part {n} of {len(chunks)}"
        out.append({**table, "targets": shown, "head": head, "rows": rows,
                    "groups": shown if table.get("groups") else table.get("groups"),
                    "title": f"{title} · {part}" if title else part.capitalize()})
    return out
