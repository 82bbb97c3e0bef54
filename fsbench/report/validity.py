"""Validity in the report: each number's verdicts (fsbench.validity) beside it, and a summary at the top."""

from __future__ import annotations

import pandas as pd

from fsbench.validity.judge import BESIDE, DETAIL, FLAGGED, NOT_CHECKED, OK, VALIDITY
from fsbench.validity.watch import TOOL as BACKEND

MAX_LISTED = 40


def for_summary(results: pd.DataFrame) -> pd.DataFrame:
    """The rows the report summarises: the backends' own only for the tool's window (the `after` and
    `durable` figures are in the verdicts' words; summed with the tool's window they would mean nothing)."""
    if results.empty or "window" not in results or "tool" not in results:
        return results
    window = results["window"].astype("string").fillna("")
    return results[(results["tool"] != BACKEND) | (window == "tool")]


def with_validity(summary: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """summary with `validity` (flagged when any repetition was) and `validity_detail` (distinct words).

    A row's own warning (a memory peak from too few samples, a count that went backwards) flags its cell
    too, with the warning as its words: a number that may not be what its label says is marked beside it,
    not only listed under Warnings."""
    if summary.empty:
        return summary
    results = _warnings_as_flags(results)
    if VALIDITY not in results or not results[VALIDITY].astype("string").fillna("").ne("").any():
        return summary
    df = results[results[VALIDITY].astype("string").fillna("").ne("")].copy()
    df["job"] = df["job"].astype("string").fillna("").astype(str)
    df["stat"] = df["stat"].fillna("value")
    keys = [c for c in ("target", "workload", "tool", "job", "operation", "metric", "unit", "stat")
            if c in df and c in summary]
    keys += [c for c in summary.columns if c.startswith("param_") and c in df]
    for c in keys:
        if c.startswith("param_"):
            df[c] = df[c].astype("string").fillna("")
            summary = summary.assign(**{c: summary[c].astype("string").fillna("")})
    verdicts = df.groupby(keys, sort=False, dropna=False).agg(
        validity=(VALIDITY, lambda s: FLAGGED if (s == FLAGGED).any() else OK),
        validity_detail=(DETAIL, lambda s: " / ".join(dict.fromkeys(str(x) for x in s if str(x)))),
    ).reset_index()
    return summary.merge(verdicts, on=keys, how="left")


def _warnings_as_flags(results: pd.DataFrame) -> pd.DataFrame:
    """results where a row with its own warnings is flagged, its warnings joined to its verdict's words."""
    if "warnings" not in results:
        return results
    warned = results["warnings"].astype("string").fillna("").str.strip()
    if not warned.ne("").any():
        return results
    out = results.copy()
    verdict = out[VALIDITY].astype("string").fillna("") if VALIDITY in out else pd.Series("", index=out.index)
    detail = out[DETAIL].astype("string").fillna("") if DETAIL in out else pd.Series("", index=out.index)
    has = warned.ne("")
    # plain object columns, as the tables' own: a pandas string column would carry NA into the merge's misses
    out[VALIDITY] = verdict.where(~has, FLAGGED).astype(object)
    judged = detail.where(verdict.ne(""), "")  # a row no check judged says why in its words: not a verdict's
    out[DETAIL] = detail.where(~has, (judged + "; " + warned).str.strip("; ")).astype(object)
    return out


def overview(results: pd.DataFrame) -> dict:
    """N measurements checked (a tool's operation in a case), M flagged, and each flagged one's words."""
    if results.empty or VALIDITY not in results:
        return {"checked": 0, "flagged": 0, "items": [], "more": 0, "unchecked": 0, "why_unchecked": [], "beside": 0,
                "beside_tools": []}
    v = results[VALIDITY].astype("string").fillna("")
    tools = results[(results["tool"] != "monitor") & (results["tool"] != BACKEND)]
    key = ["case_id", "tool", "operation"]
    words = tools[DETAIL].astype("string").fillna("") if DETAIL in tools else pd.Series("", index=tools.index)
    collected = v.loc[tools.index].eq("") & words.str.startswith(BESIDE)
    beside = tools[collected][key].drop_duplicates()
    tools = tools[~collected]  # a collector's figures: the evidence beside the measurements, counted apart
    every = tools[key].drop_duplicates()
    checked = results[v.ne("")].groupby(key, sort=False).agg(
        validity=(VALIDITY, lambda s: FLAGGED if (s == FLAGGED).any() else OK), detail=(DETAIL, "first"),
        target=("target", "first"), workload=("workload", "first")).reset_index()
    flagged = checked[checked["validity"] == FLAGGED]
    items = [{"case": r.case_id, "target": r.target, "workload": r.workload, "operation": r.operation,
              "detail": r.detail} for r in flagged.itertuples(index=False)]
    return {"checked": len(checked), "flagged": len(flagged), "items": items[:MAX_LISTED],
            "more": max(0, len(items) - MAX_LISTED), "unchecked": max(0, len(every) - len(checked)),
            "why_unchecked": _why_unchecked(tools, v), "beside": len(beside),
            "beside_tools": sorted(set(beside["tool"]))}


def _why_unchecked(tools: pd.DataFrame, v: pd.Series) -> list[dict]:
    """The reasons measurements were not checked (their words, fsbench.validity.judge), most frequent first:
    [{why, count, tools}], a measurement being a tool's operation in a case."""
    if DETAIL not in tools or tools.empty:
        return []
    words = tools[DETAIL].astype("string").fillna("")
    unchecked = tools[v.loc[tools.index].eq("") & words.str.startswith(NOT_CHECKED + ": ")]
    if unchecked.empty:
        return []
    one = unchecked.drop_duplicates(["case_id", "tool", "operation"])
    why = one[DETAIL].astype(str).str.slice(len(NOT_CHECKED) + 2)
    grouped = one.assign(why=why).groupby("why", sort=False).agg(count=("operation", "size"),
                                                               tools=("tool", lambda t: sorted(set(t))))
    return [{"why": w, "count": int(r["count"]), "tools": r["tools"]}
            for w, r in grouped.sort_values("count", ascending=False).iterrows()]


def mark_tables(views: list[dict]) -> None:
    """Number each table's flagged cells' words below it (`notes`), each cell marked with its number."""
    for v in views:
        for t in v.get("tables", []):
            notes: list[str] = []
            for r in t.get("rows", []):
                for c in r.get("cells", []):
                    if c.get("validity") == FLAGGED and c.get("validity_detail"):
                        if c["validity_detail"] not in notes:
                            notes.append(c["validity_detail"])
                        c["mark"] = notes.index(c["validity_detail"]) + 1
            t["notes"] = notes
