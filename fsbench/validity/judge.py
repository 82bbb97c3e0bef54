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
#: how the words of a measurement no check judged begin (its `validity` is empty)
NOT_CHECKED = "not checked"
#: how the words of a collector's figure begin (juicefs stats, juicefs profile, a command's: the client's or the
#: host's own count beside the tool, the evidence, not a measurement of the storage; counted apart)
BESIDE = f"{NOT_CHECKED}: recorded beside "


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
    """Run the checks over the tool's rows and mark each row of an operation they judged, in place; a row
    no check judged gets, in its words, why it is not checked (its `validity` stays empty)."""
    counted = seen is not None and bool(seen.services)
    if seen is None:  # no backend counted anything: only the checks that read the tool's own rows
        checks, seen = [c for c in checks if isinstance(c, RowsCheck)], Evidence.host_only(None)
    own = [r for r in rows if r.get("tool") == tool]
    verdicts = [v for c in checks for v in c.judge(tool, own, seen, limits)]
    _mark(own, [v for v in verdicts if v.ok is not None])
    cannot: dict[str, str] = {}
    for v in verdicts:
        if v.ok is None:
            cannot.setdefault(v.operation, v.detail)
    why = unchecked_reason(tool, checks, seen.services if counted else ())
    for r in own:
        if not r.get(VALIDITY) and not r.get(DETAIL):
            r[DETAIL] = f"{NOT_CHECKED}: {cannot.get(str(r.get('operation')), why)}"
    return [v for v in verdicts if v.ok is not None]


def unchecked_reason(tool: str, checks: list[Check], services: tuple[str, ...]) -> str:
    """Why a measurement got no verdict, in words a reader can act on."""
    if not services:
        return ("no counter of the storage side covers this case (a local file system, a store fsbench does not "
                "run or that counts nothing, such as moto_server)")
    if not checks:
        return f"{tool} declares no check against the counters of {', '.join(services)}"
    return (f"{', '.join(services)} counted the whole case in one window, and no check of {tool} can tell this "
            "operation's share in it")


def _mark(own: list[dict], verdicts: list[Verdict]) -> None:
    """Each verdict into the rows of its operation (flagged wins over ok), its words beside any earlier."""
    for v in verdicts:
        for r in own:
            if r.get("operation") != v.operation:
                continue
            r[VALIDITY] = FLAGGED if not v.ok or r.get(VALIDITY) == FLAGGED else OK
            said = f"{v.check}: {v.detail}" if not v.ok else f"{v.detail} (checked: {v.check})"
            r[DETAIL] = "; ".join(t for t in (r.get(DETAIL), said) if t)
