"""Verdicts into the tidy rows: the checks a case's tool and target kind declare, over its rows."""

from __future__ import annotations

from fsbench.api.tools import declarations
from fsbench.validity.checks import Check, RowsCheck, Verdict
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

#: the rows' columns: ok | flagged | empty (not checked), and the checks' words
VALIDITY = "validity"
DETAIL = "validity_detail"
OK, FLAGGED = "ok", "flagged"


def checks_of(*plugins: object) -> list[Check]:
    """The checks the plug-ins declare (`validity_checks`), each once, in order."""
    out: list[Check] = []
    for p in plugins:
        for c in declarations(p).validity_checks:
            if all(c.name != o.name for o in out):
                out.append(c)
    return out


def judge(rows: list[dict], tool: str, checks: list[Check], seen: Evidence | None,
          limits: Thresholds) -> list[Verdict]:
    """Run the checks over the tool's rows and mark each row of an operation they judged, in place."""
    if seen is None:  # no backend counted anything: only the checks that read the tool's own rows
        checks, seen = [c for c in checks if isinstance(c, RowsCheck)], Evidence.host_only(None)
    if not checks:
        return []
    own = [r for r in rows if r.get("tool") == tool]
    verdicts = [v for c in checks for v in c.judge(tool, own, seen, limits)]
    for v in verdicts:
        for r in own:
            if r.get("operation") != v.operation:
                continue
            r[VALIDITY] = FLAGGED if not v.ok or r.get(VALIDITY) == FLAGGED else OK
            said = f"{v.check}: {v.detail}" if not v.ok else f"{v.detail} (checked: {v.check})"
            r[DETAIL] = "; ".join(t for t in (r.get(DETAIL), said) if t)
    return verdicts
