"""NNBench's NNBench_results.log (one block per run, appended) and fsbench's runner lines -> tidy rows.

A block (Hadoop 3.x, "NameNode Benchmark 0.4") says the operation, maps, files per map, the successful
file operations, the exceptions, the printed TPS and average latencies (ms, rounded or truncated), and
RAW DATA: the latency totals (AL #1, AL #2), the span from the first map's start to the last map's end
("Longest Map Time") and the late maps. Rows are computed from the raw data, so they are not the
printed rounded values:

- rate (op/s): NNBench's TPS, successful operations x 1000 / span; create_write counts create and
  close as two transactions, as NNBench does (its printed TPS is this value truncated);
- latency_mean (s): (AL #1 + AL #2) / successful operations: one file's create+write+close, open (+read),
  rename or delete as the client saw it; the parts as their own operations (create, close, open, read);
- exec_time_mean (s): NNBench's "Avg exec time": the maps' summed time / successful operations;
- ops, exceptions (count); late_maps (count): NNBench's own count, or, from fsbench's runner
  (`fsbench-nnbench run=...` lines on standard output), the maps that did not wait at the start barrier.

Runner lines also say which runs only prepared the next one (`role=setup`: the create_write that
gives delete its files back after rename) and which were done again because maps missed the start
barrier (`late`): their blocks are not measurements.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, measurement, vet
from fsbench.tools.common import path_lines

TOOL = "nnbench"
RESULTS = "NNBench_results.log"
OPERATIONS = ("create_write", "open_read", "rename", "delete")
#: the parts NNBench times separately (AL #1, AL #2) of each operation, as rows of their own
#: (rename and delete are one call each: their one part is the operation itself)
PARTS = {"create_write": ("create", "close"), "open_read": ("open", "read")}
#: NNBench's own metrics (in the tidy table's vocabulary, fsbench/core/tidy.py)
METRICS = {"exceptions": "count", "late_maps": "count", "exec_time_mean": "s"}
COARSE = "under NNBench's 1 ms clock: each operation took less than 1 ms"
_BLOCK_START = "-------------- NNBench -------------- :"
_RUNNER = re.compile(r"^fsbench-nnbench (?P<fields>run=\d+ .*)$")
#: bytes of a results log read at most: a run's block is about 1.5 KB and a case makes a few, so a bigger
#: file is not one case's log (it is refused, not read into memory)
MAX_RESULTS = 16 << 20
#: runner lines kept at most (a case runs each operation a few times)
MAX_RUNS = 10_000


class MissingField(KeyError):
    """A result block without a line the parser needs."""


@dataclass
class Block:
    """One NNBench run as its results log says it."""

    fields: dict[str, str] = field(default_factory=dict)

    def text(self, key: str) -> str:
        if key not in self.fields:
            raise MissingField(key)
        return self.fields[key]

    def number(self, key: str) -> float:
        try:
            value = float(self.text(key))
        except ValueError:
            raise MissingField(f"a number in {key!r}") from None
        if not math.isfinite(value) or abs(value) > 1e18:
            raise MissingField(f"a plausible number in {key!r}")
        return value

    @property
    def operation(self) -> str:
        return self.text("Test Operation")


def blocks(text: str) -> list[Block]:
    """The runs of a results log, in order."""
    out: list[Block] = []
    for chunk in text.split(_BLOCK_START)[1:]:
        block = Block()
        for line in chunk.splitlines():
            key, sep, value = line.rpartition(": ")  # keys hold ': ' themselves (`TPS: Rename`), values never
            if sep and key.strip() and value.strip():
                block.fields[re.sub(r"\s+", " ", key.strip())] = value.strip()
        out.append(block)
    return out


def runner_lines(text: str | Iterable[str], source: str = "stdout") -> list[dict[str, str]]:
    """fsbench's runner lines (in a text, or in its lines as a file gives them): run, operation, role, maps,
    control_ms, barrier_ms, on_time, exit. Only these lines are kept, so a long stdout costs no memory.

    A measured run whose maps did not all wait at the barrier is done again; the runner says so in a
    line of its own (`run=N role=late: ...`), and that run's role becomes `late` (not a measurement).
    """
    runs: list[dict[str, str]] = []
    for line in text.split("\n") if isinstance(text, str) else text:
        if not line.startswith("fsbench-nnbench ") or not (m := _RUNNER.match(line)):
            continue
        if len(runs) >= MAX_RUNS:
            raise ParseError(TOOL, source, f"more than {MAX_RUNS} runner lines (`fsbench-nnbench run=...`): not the "
                                           "output of one case's runner")
        fields = dict(w.split("=", 1) for w in m.group("fields").split() if "=" in w)
        if "operation" in fields:
            runs.append(fields)
        elif fields.get("role", "").startswith("late"):
            for run in runs:
                if run.get("run") == fields.get("run"):
                    run["role"] = "late"
    return runs


def rows_of(block: Block, on_time: int | None = None) -> tuple[list[dict], list[str]]:
    """Tidy rows of one measured run, and what is wrong with it."""
    op = block.operation
    if op not in OPERATIONS:
        raise MissingField(f"a known Test Operation (got {op!r})")
    maps, files = int(block.number("Maps to run")), int(block.number("Number of files"))
    done = block.number("Successful file operations")
    exceptions = block.number("# exceptions")
    span_ms = block.number("RAW DATA: Longest Map Time (ms)")
    al1, al2 = block.number("RAW DATA: AL Total #1"), block.number("RAW DATA: AL Total #2")
    late = block.number("# maps that missed the barrier")
    if on_time is not None:
        late = max(late, float(maps - on_time))
    extra: dict[str, Any] = {"maps": maps, "files_per_map": files}
    rows = [measurement(TOOL, op, "ops", done, **extra),
            measurement(TOOL, op, "exceptions", exceptions, unit="count", **extra),
            measurement(TOOL, op, "late_maps", late, unit="count", **extra)]
    warnings = []
    if done > 0:
        tps = 1000 * done / span_ms if span_ms > 0 else 1000 * done  # NNBench's own rule for a zero span
        rows.append(measurement(TOOL, op, "rate", tps * (2 if op == "create_write" else 1), **extra))
        # NNBench times each operation in whole milliseconds: a total of 0 means every one took less
        coarse = {"warnings": COARSE} if al1 + al2 == 0 else {}
        rows.append(measurement(TOOL, op, "latency_mean", (al1 + al2) / done / 1000, **extra, **coarse))
        exec_ms = block.number("RAW DATA: TPS Total (ms)")
        rows.append(measurement(TOOL, op, "exec_time_mean", (exec_ms / done if exec_ms else done) / 1000, unit="s",
                               **extra))
        if op in PARTS:
            first, second = PARTS[op]
            rows.append(measurement(TOOL, first, "latency_mean", al1 / done / 1000, job=op, **extra))
            if op != "open_read" or al2 > 0:  # open_read reads only with readFileAfterOpen
                rows.append(measurement(TOOL, second, "latency_mean", al2 / done / 1000, job=op, **extra))
    if done < maps * files:
        warnings.append(f"{op}: {done:.0f} of {maps * files} file operations succeeded ({exceptions:.0f} exceptions)")
    if late > 0:
        warnings.append(f"{op}: {late:.0f} of {maps} maps did not wait at the start barrier, so they did not start "
                        "together with the others (raise the workload's barrier_ms)")
    return rows, warnings


def parse_text(results: str, stdout: str | Iterable[str] = "", source: str = RESULTS,
               stdout_source: str = "stdout") -> ParseResult:
    """Rows of every measured run of a results log; stdout (the runner's lines: a text, or the lines of a
    file) says which were measured."""
    found = blocks(results)
    runs = runner_lines(stdout, stdout_source)
    if not found:
        raise ParseError(TOOL, source, "no NNBench result block (`-------------- NNBench --------------`)")
    result = ParseResult()
    # a run that failed before NNBench analysed it left no block: pair blocks with runs that did (exit 0 or -1)
    paired: list[tuple[Block, dict[str, str]]] = []
    if runs:
        analysed = [r for r in runs if r.get("exit") in ("0", "-1")]
        if len(analysed) != len(found):
            raise ParseError(TOOL, source, f"{len(found)} result blocks for {len(analysed)} analysed runs")
        paired = list(zip(found, analysed))
        for r in runs:
            if r.get("exit") not in ("0", "-1"):
                result.warnings.append(f"run {r.get('run')} ({r.get('operation')}) failed before NNBench analysed it")
    else:
        paired = [(b, {}) for b in found]
    try:
        for block, run in paired:
            if run and run.get("operation") != block.operation:
                raise ParseError(TOOL, source, f"run {run.get('run')} was {run.get('operation')} but its block says "
                                               f"{block.operation}")
            if run.get("role") in ("setup", "late"):
                continue
            on_time = int(run["on_time"]) if run.get("on_time", "").lstrip("-").isdigit() else None
            rows, warnings = rows_of(block, on_time)
            result.rows += rows
            result.warnings += warnings
    except MissingField as exc:
        raise ParseError(TOOL, source, f"a result block lacks {exc.args[0]}") from None
    if not result.rows:
        raise ParseError(TOOL, source, "no measured run (only setup runs)")
    result.meta["version"] = found[0].fields.get("Version", "")
    return vet(result)


def parse_dir(raw_dir: Path) -> ParseResult:
    """A case's raw folder: NNBench_results.log and the runner's stdout (read as a stream)."""
    path = raw_dir / RESULTS
    if not path.is_file():
        raise ParseError(TOOL, str(path), "NNBench wrote no results file (did the job run?)")
    out = raw_dir / "stdout"
    return parse_text(read_results(path), path_lines(TOOL, out, missing_ok=True), str(path), str(out))


def parse_path(path: Path) -> ParseResult:
    """An existing results log, or a folder with one (and maybe the runner's stdout)."""
    if path.is_dir():
        return parse_dir(path)
    return parse_text(read_results(path), "", str(path))


def read_results(path: Path) -> str:
    """The text of a results log; ParseError when it cannot be read or is bigger than MAX_RESULTS."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_RESULTS + 1)
    except OSError as exc:
        raise ParseError(TOOL, str(path), f"cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_RESULTS:
        raise ParseError(TOOL, str(path), f"more than {MAX_RESULTS >> 20} MiB: NNBench writes about 1.5 KB per run, "
                                          "so this is not one case's results log; it was not read")
    # universal line ends, as a text file is read
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
