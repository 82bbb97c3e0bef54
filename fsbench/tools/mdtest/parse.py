"""Parse mdtest text output (LLNL mdtest 1.8/1.9.x, hpc/ior 3.2.1 to 4.1.0+dev) into tidy rows.

What becomes a row (tool "mdtest", host "", job "", extra columns `tasks`, from the
`N tasks, M files/directories` line before each block (several with -f/-l/-s; the "launched with"
count when there is none), and `iterations`, from "(of N iterations)"):

- every row of a `SUMMARY rate` block: metric "rate" (op/s), stat max/min/mean/stddev from the
  Max / Min / Mean / Std Dev columns; LLNL mdtest 1.x (1.8, 1.9.x, the mdtest-1.9.3 of old IO500
  bundles) prints its one block of rates as `SUMMARY: (of N iterations)`, read the same way;
- every row of a `SUMMARY time` block (-Z, -P): metric "time" in seconds. main (4.1.0+dev) labels
  this block "(in ms/op)", but the numbers are seconds per phase (max over ranks): in
  main-5fcf0ba/print_rate_time_P_i3_np4_ext4, 1200 directories at 80050 op/s take 0.015 s and the
  time block prints 0.015. So the unit label is ignored and nothing is converted.
- `NA` (3.3.0's `File create (stonewall)` row), `nan` or `inf` gives no row for that stat.
- `--showRankStatistics` rows carry 7 numbers: only the last four ("per Iteration" Max/Min/Mean/
  Std Dev) are kept. They are the statistics every other run prints, so results stay comparable;
  the "per Rank" max/min/mean have no place in the stat vocabulary.

Deliberately not rows: `-v` per-iteration lines (rank 0's own view of one iteration; SUMMARY
already aggregates them), `--print-all-procs` blocks (one value per rank, may be `inf`), and the
`--saveRankPerformanceDetails` CSV (a separate file: parse_path refuses it with a clear reason).

IO500 console lines are supported: `[RESULT]  mdtest-easy-write  12.3 kIOPS : time 300.1 seconds`
gives tool "io500", operation `mdtest_easy_write`, metric "rate" (kIOPS x 1000, op/s) and metric
"time" (s); ior phases in GiB/s give metric "bandwidth" (x 2**30, B/s). Extra column `valid` is
False for `[RESULT-invalid]`; the harness's `ERROR INVALID ...` lines become warnings.

Lines of other ranks interleaved anywhere (WARNING, V-1, DUMMY, errors) are skipped. A run cut
short keeps its complete rows and says what is missing in ParseResult.warnings: a `N tasks` line
with no block after it, a table that stops before its `Tree removal` row (always the last one),
a last line cut mid-number, a missing `-- finished at`.

When nothing usable is left (empty, binary, help/usage text, a failed or interrupted run)
ParseError is raised, quoting the error line mdtest (or MPI, from a sibling *.stderr.txt) printed.
No other exception ever escapes parse_text or parse_path. Lines after `-- finished at` that a batch
system appends are read past. parse_path reads the file line by line (a line longer than
tools.common.MAX_LINE keeps only its start), and its stderr too, so memory holds the rows, not
the text; a case's outputs (parse_outputs) are read by parse_path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, measurement, snake, vet
from fsbench.tools.common import path_lines

TOOL = "mdtest"
_STATS = ("max", "min", "mean", "stddev")
_NUMBER = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?$")
# mdtest prints "%14.3f": a line cut mid-number never matches this, so a final line without
# its newline is only trusted when every value has exactly this shape
_PRINTF_3F = re.compile(r"^-?[0-9]+\.[0-9]{3}$|^NA$")
_MISSING = {"na", "nan", "-nan", "+nan", "inf", "-inf", "+inf"}
_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9 ()/_.-]*$")
# `SUMMARY rate: (of 3 iterations)`, `SUMMARY time (in ms/op): ...`, and 1.x's `SUMMARY: (of 3 iterations)`
_SUMMARY = re.compile(
    r"^SUMMARY(?:\s+(rate|time)\b(?:\s*\(in\s+[^)]*\))?\s*:?|\s*:)\s*(?:\(of\s+([0-9]{1,9})\s+iterations?\))?"
)
_TASKS = re.compile(r"^([0-9]{1,9}) tasks?, [0-9]{1,18} (?:files/directories|files?|director(?:y|ies))$")
_LAUNCH = re.compile(
    r"^(mdtest-\S+) was launched with ([0-9]{1,9}) total task\(s\) on ([0-9]{1,9}) node(?:\(s\)|s)?"
)
_ITERATION = re.compile(r"\* iteration ([0-9]{1,9}) \*")
_ERROR = re.compile(
    r"FAILED in |^ERROR[: ]|^Error[ ,:]|^mdtest: |^Invalid options|MPI_ABORT was invoked"
    r"|\*\*\* An error occurred|\*\*\* MPI_ERR|exited on signal|Segmentation fault"
)
_IO500 = re.compile(
    r"^\[RESULT(-invalid)?\]\s+(\S+)\s+(\S+)\s+(GiB/s|kIOPS)\s*:\s*time\s+(\S+)\s+seconds", re.IGNORECASE
)
_IO500_FACTOR = {"gib/s": ("bandwidth", 2.0**30), "kiops": ("rate", 1000.0)}
#: warnings about single lines (and error lines remembered) before they are only counted
MAX_WARNINGS = 20
#: how much of the start of the text is kept to explain an output without results
_HEAD = 8192


@dataclass
class _Block:
    """One SUMMARY table being read."""

    kind: str
    iterations: int | None
    tasks: int | None
    line_no: int
    rows: dict[str, list[float | None]] = field(default_factory=dict)


@dataclass
class _State:
    """Everything seen so far in one output."""

    result: ParseResult = field(default_factory=ParseResult)
    block: _Block | None = None
    blocks_seen: int = 0
    tasks: int | None = None
    tasks_line: str | None = None  # the last "N tasks, M files" line not yet followed by a block
    started: bool = False
    finished: bool = False
    usage: bool = False
    iteration: int = 0
    errors: list[str] = field(default_factory=list)
    io500_last: str | None = None
    line_warnings: int = 0


def parse_path(path: Path, stderr: Path | None = None, *, missing_ok: bool = False) -> ParseResult:
    """Parse an mdtest stdout file read line by line; its stderr (given, or a sibling
    `<case>.stderr.txt`) is only read, also as a stream, to sharpen the reason of a run without results.
    missing_ok: an absent file is an empty output (a case's stdout that was never written)."""
    path = Path(path)
    if stderr is None and path.name.endswith(".stdout.txt"):
        stderr = path.with_name(path.name[: -len(".stdout.txt")] + ".stderr.txt")
    # only "\n" ends a line (as in parse_text); undecodable bytes become U+FFFD
    lines = path_lines(TOOL, path, newline="\n", encoding="utf-8-sig", missing_ok=missing_ok)
    return _guarded(lines, str(path), lambda: _error_lines(stderr))


def parse_text(text: str, source: str = "<string>", *, stderr: str = "") -> ParseResult:
    """Parse mdtest (or IO500 console) output text into tidy rows; raises only ParseError."""
    return _guarded(_text_lines(text), source, lambda: stderr)


def _error_lines(path: Path | None) -> str:
    """The error lines of a stderr file (the first few), read as a stream; '' when it is absent or unreadable:
    a stderr only improves messages."""
    found: list[str] = []
    if path is None:
        return ""
    try:
        for line in path_lines(TOOL, path, newline="\n", missing_ok=True):
            if _ERROR.search(line.strip()):
                found.append(line.strip())
                if len(found) >= MAX_WARNINGS:
                    break
    except ParseError:
        pass
    return "\n".join(found)


def _guarded(lines: Iterable[str], source: str, stderr: Callable[[], str]) -> ParseResult:
    try:
        return _parse(lines, source, stderr)
    except ParseError:
        raise
    except MemoryError:
        raise ParseError(TOOL, source, "the output does not fit in memory") from None
    except Exception as exc:  # the contract is "ParseError or rows", even for a bug of ours
        raise ParseError(TOOL, source, f"internal parser error ({type(exc).__name__}: {exc})") from exc


def _text_lines(text: str) -> Iterator[str]:
    """Lines split on "\\n" only, each with its "\\n" (not splitlines(): it also splits on \\x1c,
    \\x85 and friends), lazily: a huge text is not copied into a list."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end + 1]
        start = end + 1
    if start < len(text):
        yield text[start:]


def _parse(lines: Iterable[str], source: str, stderr: Callable[[], str]) -> ParseResult:
    st = _State()
    head: list[str] = []
    head_len = 0
    blank = True
    for no, raw in enumerate(lines, 1):
        if head_len < _HEAD:
            head.append(raw[: _HEAD - head_len])
            head_len += len(head[-1])
        if blank and raw.strip():
            blank = False
            if head_len >= _HEAD:  # the start was all blank: explain from the first text instead
                head, head_len = [raw[:_HEAD]], min(len(raw), _HEAD)
        cut = not raw.endswith("\n")  # the last line without its newline: maybe cut short
        line = raw[:-1] if not cut else raw
        _line(st, line.rstrip("\r"), no, cut)
    _close(st, at_eof=True)
    res = st.result
    if st.tasks_line is not None and res.rows:
        res.warnings.append(
            f"'{st.tasks_line}' is not followed by a SUMMARY block: mdtest stopped before reporting"
            " that task count (crashed or interrupted); earlier blocks are kept"
        )
    if st.started and not st.finished and any(r["tool"] == TOOL for r in res.rows):
        res.warnings.append("no '-- finished at' line: the run did not end normally (interrupted or crashed)")
    if st.line_warnings > MAX_WARNINGS:
        res.warnings.append(f"{st.line_warnings - MAX_WARNINGS} more warnings about single lines")
    vet(res)
    if not res.rows:
        raise ParseError(TOOL, source, _why_nothing(st, "" if blank else "".join(head), stderr()))
    if st.errors:
        res.warnings.append(f"mdtest printed an error but also results: {st.errors[0]}")
    return res


def _line(st: _State, line: str, no: int, cut: bool) -> None:
    s = line.strip()
    meta = st.result.meta
    if s.startswith("V-"):
        # -v lines (most of a long verbose run): only an error or the iteration marker matters
        if _is_error(s):
            _error(st, s)
        elif "iteration" in s and (m := _ITERATION.search(s)):
            st.iteration = int(m.group(1))
        return
    if m := _SUMMARY.match(s):
        _close(st)
        st.block = _Block(m.group(1) or "rate", int(m.group(2)) if m.group(2) else None, st.tasks, no)
        st.blocks_seen += 1
        st.tasks_line = None
    elif m := _TASKS.match(s):
        _close(st)
        st.tasks, st.tasks_line = int(m.group(1)), s
    elif s.startswith("-- finished at"):
        _close(st)
        st.finished = True
    elif s.startswith("-- started at"):
        _close(st)
        st.started = True
    elif m := _LAUNCH.match(s):
        meta.setdefault("version", m.group(1))
        meta.setdefault("tasks", int(m.group(2)))
        meta.setdefault("nodes", int(m.group(3)))
        if st.tasks is None:
            st.tasks = int(m.group(2))  # fallback when a block has no "N tasks" line before it
    elif s.startswith("Command line used:"):
        meta.setdefault("command_line", s.partition(":")[2].strip())
    elif s.startswith("random seed:"):
        meta.setdefault("random_seed", s.partition(":")[2].strip())
    elif s.startswith("Synopsis mdtest"):
        st.usage = True
    elif s.startswith("IO500 version"):
        meta.setdefault("io500_version", s[len("IO500 version"):].strip())
    elif m := _IO500.match(s):
        _io500(st, m, cut)
    elif s.startswith("ERROR INVALID") and st.io500_last:
        _warn(st, f"{st.io500_last}: {s}")
    elif _is_error(s):
        _error(st, s)
    elif "iteration" in s and (m := _ITERATION.search(s)):
        st.iteration = int(m.group(1))
    elif st.block is not None and line[:1].isspace():
        _row(st, st.block, s, no, cut)


def _is_error(s: str) -> bool:
    # substring tests first: _ERROR is an alternation searched through the whole line
    return (s[:1] in "EIm" or "FAILED" in s or "MPI" in s or "***" in s or "exited" in s
            or "Segmentation" in s) and bool(_ERROR.search(s))


def _error(st: _State, s: str) -> None:
    """Remember an error line (the first few distinct ones: only the first is quoted)."""
    if len(st.errors) < MAX_WARNINGS and s not in st.errors:
        st.errors.append(s)


def _warn(st: _State, text: str) -> None:
    """A warning about one line; past MAX_WARNINGS they are only counted."""
    if st.line_warnings < MAX_WARNINGS:
        st.result.warnings.append(text)
    st.line_warnings += 1


def _row(st: _State, block: _Block, s: str, no: int, cut: bool) -> None:
    tokens = s.split()
    n = 0
    while n < len(tokens) and (_NUMBER.match(tokens[-1 - n]) or tokens[-1 - n].lower() in _MISSING):
        n += 1
    label = " ".join(tokens[: len(tokens) - n]).rstrip(":").strip()
    looks_like_row = bool(tokens) and tokens[0] in ("Directory", "File", "Tree")
    if n not in (4, 7) or not _LABEL.match(label):
        if looks_like_row:
            _warn(st, f"line {no}: incomplete SUMMARY row skipped: {s!r}")
        return
    if cut and not all(_PRINTF_3F.match(t) for t in tokens[-n:]):
        _warn(st, f"line {no}: the output ends in the middle of this row, skipped: {s!r}")
        return
    if label in block.rows:
        _warn(st, f"line {no}: second '{label}' row in one SUMMARY block ignored")
        return
    # with --showRankStatistics the first three numbers are per-rank; the last four match a plain run
    block.rows[label] = [_value(st, t, label, no) for t in tokens[-4:]]


def _value(st: _State, token: str, label: str, no: int) -> float | None:
    if token.upper() == "NA":
        return None  # mdtest's own "not available" (3.3.0 stonewall row): no row, no warning
    x = float(token) if _NUMBER.match(token) else math.nan
    if not math.isfinite(x):
        _warn(st, f"line {no}: '{label}' has a non-finite value {token!r}; no row for it")
        return None
    return x


def _close(st: _State, at_eof: bool = False) -> None:
    block, st.block = st.block, None
    if block is None:
        return
    where = f"SUMMARY {block.kind} block at line {block.line_no}"
    if not block.rows:
        st.result.warnings.append(f"{where} has no rows (output cut short?)")
        return
    if at_eof and not st.finished and list(block.rows)[-1] != "Tree removal":
        # every version prints Tree removal last: a table ending elsewhere at EOF was cut off
        st.result.warnings.append(
            f"the output ends inside the {where}: kept its {len(block.rows)} complete rows,"
            " later rows are missing"
        )
    metric = block.kind  # "rate" (op/s) or "time" (s: the numbers are seconds whatever the label says)
    for label, values in block.rows.items():
        for stat, value in zip(_STATS, values):
            if value is not None:
                st.result.rows.append(
                    measurement(TOOL, snake(label), metric, value, stat=stat,
                                tasks=block.tasks, iterations=block.iterations)
                )


def _io500(st: _State, m: re.Match[str], cut: bool) -> None:
    invalid, phase, value, unit, seconds = m.groups()
    operation = snake(phase)
    st.io500_last = operation
    if cut or not (_NUMBER.match(value) and _NUMBER.match(seconds)):
        st.result.warnings.append(f"IO500 result line for {phase} is incomplete, skipped")
        return
    metric, factor = _IO500_FACTOR[unit.lower()]
    x, t = float(value) * factor, float(seconds)
    if not (math.isfinite(x) and math.isfinite(t)):
        st.result.warnings.append(f"IO500 result line for {phase} has a non-finite value, skipped")
        return
    if any(r.get("operation") == operation and r["tool"] == "io500" for r in st.result.rows):
        st.result.warnings.append(f"more than one IO500 result for {operation} (several runs in one file?)")
    for name, v in ((metric, x), ("time", t)):
        st.result.rows.append(measurement("io500", operation, name, v, valid=invalid is None))


def _why_nothing(st: _State, text: str, stderr: str) -> str:
    """A reason a user understands for an output without a single result row (text: its start,
    empty when the output is blank)."""
    mpi = [s.strip() for s in stderr.split("\n") if _ERROR.search(s.strip())]
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
