"""What mdtest and MPI print when a run fails, and why an output gave no rows, in words a user understands."""

from __future__ import annotations

import re
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.tools.common import path_lines
from fsbench.tools.mdtest.results import MAX_WARNINGS, TOOL, State

ERROR = re.compile(
    r"FAILED in |^ERROR[: ]|^Error[ ,:]|^mdtest: |^Invalid options|MPI_ABORT was invoked"
    r"|\*\*\* An error occurred|\*\*\* MPI_ERR|exited on signal|Segmentation fault"
)


def is_error(s: str) -> bool:
    """Whether a line is an error mdtest or MPI printed."""
    # substring tests first: ERROR is an alternation searched through the whole line
    return (s[:1] in "EIm" or "FAILED" in s or "MPI" in s or "***" in s or "exited" in s
            or "Segmentation" in s) and bool(ERROR.search(s))


def remember_error(st: State, s: str) -> None:
    """Remember an error line (the first few distinct ones: only the first is quoted)."""
    if len(st.errors) < MAX_WARNINGS and s not in st.errors:
        st.errors.append(s)


def error_lines(path: Path | None) -> str:
    """The error lines of a stderr file (the first few), read as a stream; '' when it is absent or unreadable:
    a stderr only improves messages."""
    found: list[str] = []
    if path is None:
        return ""
    try:
        for line in path_lines(TOOL, path, newline="\n", missing_ok=True):
            if ERROR.search(line.strip()):
                found.append(line.strip())
                if len(found) >= MAX_WARNINGS:
                    break
    except ParseError:
        pass
    return "\n".join(found)


def why_nothing(st: State, text: str, stderr: str) -> str:
    """A reason a user understands for an output without a single result row (text: its start,
    empty when the output is blank)."""
    mpi = [s.strip() for s in stderr.split("\n") if ERROR.search(s.strip())]
    said = f"; stderr says: {mpi[0]}" if mpi else ""
    if not text.strip():
        return f"the file is empty (mdtest printed nothing){said}"
    if text.lstrip().startswith("rank,items,rate-"):
        return ("this is the per-rank CSV of --saveRankPerformanceDetails, not mdtest's stdout;"
                " parse the stdout file, which holds the SUMMARY")
    sample = text[:8192]
    odd = sum(1 for c in sample if c == "\ufffd" or (ord(c) < 32 and c not in "\t\n\r"))
    if "\x00" in sample or odd > len(sample) * 0.05:
        return "this is not mdtest text output: it holds binary data"
    if st.usage:
        if st.errors:
            return ("mdtest rejected its command line and printed its usage text instead of running: "
                    f"{st.errors[0]}")
        return "this is mdtest's help text (mdtest -h), not a benchmark result"
    if st.errors:
        return f"mdtest failed before printing a SUMMARY block: {st.errors[0]}"
    if st.blocks_seen:
        return "the SUMMARY block has no result rows: the output was cut short"
    if "version" in st.result.meta or st.started or st.tasks_line:
        where = f"during iteration {st.iteration}" if st.iteration else "after its header"
        return f"mdtest output has no SUMMARY block: the run stopped {where}{said or ' (interrupted?)'}"
    return ("this does not look like mdtest output: no 'mdtest-<version> was launched' header"
            " and no SUMMARY block")
