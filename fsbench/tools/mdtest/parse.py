"""Parse mdtest text output (LLNL mdtest 1.8/1.9.x, hpc/ior 3.2.1 to 4.1.0+dev) into tidy rows.

What becomes a row (tool "mdtest", host "", job "", extra columns `tasks`, from the
`N tasks, M files/directories` line before each block (several with -f/-l/-s; the "launched with"
count when there is none), `iterations`, from "(of N iterations)", and `items`: what one iteration of
the phase handled in all, M for the file and directory phases, and for the tree's phases its
directories, from the command line mdtest prints (-b, -z, -u: one tree per task with -u), empty where
it cannot be told):

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

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, vet
from fsbench.tools.common import path_lines
from fsbench.tools.mdtest.failures import error_lines, is_error, remember_error, why_nothing
from fsbench.tools.mdtest.results import (
    MAX_WARNINGS,
    TOOL,
    Block,
    State,
    add_row,
    close_block,
    io500_line,
    tree_dirs,
    warn,
)

# `SUMMARY rate: (of 3 iterations)`, `SUMMARY time (in ms/op): ...`, and 1.x's `SUMMARY: (of 3 iterations)`
_SUMMARY = re.compile(
    r"^SUMMARY(?:\s+(rate|time)\b(?:\s*\(in\s+[^)]*\))?\s*:?|\s*:)\s*(?:\(of\s+([0-9]{1,9})\s+iterations?\))?"
)
_TASKS = re.compile(r"^([0-9]{1,9}) tasks?, ([0-9]{1,18}) (?:files/directories|files?|director(?:y|ies))$")
_LAUNCH = re.compile(
    r"^(mdtest-\S+) was launched with ([0-9]{1,9}) total task\(s\) on ([0-9]{1,9}) node(?:\(s\)|s)?"
)
_ITERATION = re.compile(r"\* iteration ([0-9]{1,9}) \*")
_IO500 = re.compile(
    r"^\[RESULT(-invalid)?\]\s+(\S+)\s+(\S+)\s+(GiB/s|kIOPS)\s*:\s*time\s+(\S+)\s+seconds", re.IGNORECASE
)
#: how much of the start of the text is kept to explain an output without results
_HEAD = 8192


def parse_path(path: Path, stderr: Path | None = None, *, missing_ok: bool = False) -> ParseResult:
    """Parse an mdtest stdout file read line by line; its stderr (given, or a sibling
    `<case>.stderr.txt`) is only read, also as a stream, to sharpen the reason of a run without results.
    missing_ok: an absent file is an empty output (a case's stdout that was never written)."""
    path = Path(path)
    if stderr is None and path.name.endswith(".stdout.txt"):
        stderr = path.with_name(path.name[: -len(".stdout.txt")] + ".stderr.txt")
    # only "\n" ends a line (as in parse_text); undecodable bytes become U+FFFD
    lines = path_lines(TOOL, path, newline="\n", encoding="utf-8-sig", missing_ok=missing_ok)
    return _guarded(lines, str(path), lambda: error_lines(stderr))


def parse_text(text: str, source: str = "<string>", *, stderr: str = "") -> ParseResult:
    """Parse mdtest (or IO500 console) output text into tidy rows; raises only ParseError."""
    return _guarded(_text_lines(text), source, lambda: stderr)


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
    st = State()
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
    close_block(st, at_eof=True)
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
        raise ParseError(TOOL, source, why_nothing(st, "" if blank else "".join(head), stderr()))
    if st.errors:
        res.warnings.append(f"mdtest printed an error but also results: {st.errors[0]}")
    return res


def _line(st: State, line: str, no: int, cut: bool) -> None:
    s = line.strip()
    meta = st.result.meta
    if s.startswith("V-"):
        # -v lines (most of a long verbose run): only an error or the iteration marker matters
        if is_error(s):
            remember_error(st, s)
        elif "iteration" in s and (m := _ITERATION.search(s)):
            st.iteration = int(m.group(1))
        return
    if m := _SUMMARY.match(s):
        close_block(st)
        st.block = Block(m.group(1) or "rate", int(m.group(2)) if m.group(2) else None, st.tasks, no,
                         items=st.items, tree_dirs=tree_dirs(meta.get("command_line", ""), st.tasks))
        st.blocks_seen += 1
        st.tasks_line = None
    elif m := _TASKS.match(s):
        close_block(st)
        st.tasks, st.items, st.tasks_line = int(m.group(1)), int(m.group(2)), s
    elif s.startswith("-- finished at"):
        close_block(st)
        st.finished = True
    elif s.startswith("-- started at"):
        close_block(st)
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
        io500_line(st, m, cut)
    elif s.startswith("ERROR INVALID") and st.io500_last:
        warn(st, f"{st.io500_last}: {s}")
    elif is_error(s):
        remember_error(st, s)
    elif "iteration" in s and (m := _ITERATION.search(s)):
        st.iteration = int(m.group(1))
    elif st.block is not None and line[:1].isspace():
        add_row(st, st.block, s, no, cut)
