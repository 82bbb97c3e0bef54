"""metabench as a workload: options from the scenario, run in the case's folder, its JSON parsed.

`mode: calls` times seed 000's metadata operations one system call at a time; `mode: concurrency`
runs seed 002's create_write, open_read, rename and delete on `threads` threads (sweep it). Across
hosts the same command runs on every host at once, each in its own subfolder of the case's folder,
and the rows are per host plus an aggregate (host `all`).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from fsbench.api.tools import BuildContext, CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.config import schema as s
from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult
from fsbench.core.units import parse_duration, parse_size
from fsbench.tools.common import last_lines
from fsbench.tools.metabench import deploy as metabench_deploy
from fsbench.tools.metabench.parse import (
    CALLS,
    CONCURRENCY,
    ENGINE_REQUESTS,
    ENGINE_UNIT,
    MODES,
    OUTPUT,
    TOOL,
    combine_hosts,
    parse_path,
)
from fsbench.validity.engine import OPS_REACHED_ENGINE, SERVED_BY_CLIENT_CACHE
from fsbench.validity.engine_needs import FAR_MORE_REQUESTS

OPTIONS = {
    "mode": "calls (per-call latency, seed 000) or concurrency (create_write, open_read, rename, delete on "
            "threads, seed 002); default calls",
    "operations": "which operations, in this order (default: every one of the mode)",
    "iterations": "calls: timed calls per operation (default 100)",
    "warmup": "calls: untimed calls before them (default 10)",
    "cache_wait": "calls: a pause after laying out the objects of lookup and access, longer than the mount's "
                  "entry cache (JuiceFS: 1s), so that each call reaches the file system (default 0s)",
    "threads": "concurrency: threads, released together by a barrier for each operation (default 1)",
    "files": "concurrency: files per thread (default 100)",
    "bytes": "concurrency: bytes create_write writes and open_read reads per file (default 0)",
    "binary": "the metabench command (default metabench)",
    "engine_counters": "calls: where the target's client counts its metadata-engine requests (JuiceFS' .stats), "
                       "read them around every timed call: each operation's engine_requests, and a call served by "
                       "a cache flagged (default true; false skips the two reads per call)",
}
#: options fsbench owns: the tool writes only into the case's folder and its JSON into the raw folder
OWNED = {"dir": "fsbench sets --dir to the case's own folder on the target: metabench writes only there",
         "output": f"fsbench reads metabench's JSON from {OUTPUT} in the case's raw folder"}
ONLY = {"iterations": "calls", "warmup": "calls", "cache_wait": "calls", "engine_counters": "calls",
        "threads": "concurrency",
        "files": "concurrency", "bytes": "concurrency"}
LIMITS = {"iterations": (1, 100_000_000), "warmup": (0, 100_000_000), "threads": (1, 4096),
          "files": (1, 100_000_000)}
NEWCHUNK = ("newchunk is JuiceFS-internal (a chunk id taken from the metadata engine inside a write): no "
            "system call reaches it through a mount")
#: rough figures for plans: a FUSE metadata call, and the aggregate rate of one thread
ESTIMATE_CALL_S, ESTIMATE_RATE = 0.002, 500.0


class MetabenchAdapter:
    """fsbench's own metadata benchmark (C, fsbench/tools/metabench/metabench.c) on any mounted path."""

    name = TOOL
    bring_your_own = False
    accepts = ("directory",)
    #: latency_* and rate are the tidy table's own; engine_requests_per_call: the metadata-engine requests per timed
    #: call (the client's own count, where the target kind offers one: CountsMetaRequests)
    metrics: dict[str, str] = {ENGINE_REQUESTS: ENGINE_UNIT}
    validity_checks = (SERVED_BY_CLIENT_CACHE, FAR_MORE_REQUESTS, OPS_REACHED_ENGINE)
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("ops", "rate", "latency_mean", "latency_min", "latency_max", "latency_stddev", "latency_p50",
                "latency_p90", "latency_p99", "latency_p99.9", ENGINE_REQUESTS)
    #: seed 000's order with seed 002's four in between, so either mode reads in its own order
    operations = (*CALLS[:CALLS.index("rename")], "create_write", "open_read", "rename", "delete",
                  *CALLS[CALLS.index("rename") + 1:])
    primary_metrics = ("rate", "latency_mean")
    views = ("table",)
    packages: dict[str, list[str]] = {}  # not packaged: provide() uploads this machine's build or compiles it
    deploy_section = s.Struct({
        "method": s.Key(s.one_of(*metabench_deploy.METHODS), default="auto",
                        doc="auto: this machine's build where OS and arch match, else compiled there with gcc"),
    }, what="metabench deploy settings")

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        """Known names, the mode's operations, whole numbers in range, durations and sizes that parse."""
        out = []
        mode = options.get("mode", "calls")
        if mode not in MODES:
            out.append(OptionIssue("mode", f"mode must be calls or concurrency, got {mode!r}"))
            mode = ""
        for key in options:
            if key in OWNED:
                out.append(OptionIssue(key, OWNED[key]))
            elif key not in OPTIONS:
                close = difflib.get_close_matches(key, list(OPTIONS), n=1)
                out.append(OptionIssue(key, f"unknown metabench option {key!r}",
                                       (f"did you mean {close[0]!r}? " if close else "") + "known: "
                                       + ", ".join(OPTIONS)))
            elif mode and ONLY.get(key, mode) != mode:
                out.append(OptionIssue(key, f"{key} belongs to mode {ONLY[key]}, this workload is mode {mode}"))
        for key, (lo, hi) in LIMITS.items():
            v = options.get(key, lo)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                out.append(OptionIssue(key, f"{key} must be a whole number from {lo} to {hi}, got {v!r}"))
        if not isinstance(options.get("engine_counters", True), bool):
            out.append(OptionIssue("engine_counters", "engine_counters must be true or false"))
        out += _checked_value(options, "cache_wait", parse_duration, "a duration, e.g. 1.5s", 3600)
        out += _checked_value(options, "bytes", parse_size, "a size, e.g. 4k", 2**30)
        binary = options.get("binary", "metabench")
        if not isinstance(binary, str) or not binary.strip() or binary.startswith("-"):
            out.append(OptionIssue("binary", f"binary must be a command name or path, got {binary!r}"))
        if mode:
            out += _operation_issues(options.get("operations"), mode)
        if jobs or job_file_text:
            out.append(OptionIssue("", "metabench takes options only (no jobs or job_file)"))
        return out

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """calls: every call, its setup and the cache waits at a FUSE call's pace; concurrency: four phases."""
        if options.get("mode", "calls") == "concurrency":
            threads, files = _int(options.get("threads"), 1), _int(options.get("files"), 100)
            phases = len(_ops(options, CONCURRENCY))
            return round(phases * threads * files / (ESTIMATE_RATE * min(threads, 8)) + 1, 1)
        ops = _ops(options, CALLS)
        per_op = _int(options.get("iterations"), 100) + _int(options.get("warmup"), 10)
        laid_out = sum(per_op for o in ops if o in ("mvdir", "rmdir", "rename", "unlink", "lookup", "access")) \
            + 1000 * ("readdir_1k" in ops)
        wait = _seconds(options.get("cache_wait", 0)) * sum(o in ("lookup", "access") for o in ops)
        return round((len(ops) * per_op * 2 + laid_out) * ESTIMATE_CALL_S + wait + 1, 1)

    def argv(self, options: dict, folder: str, counters: tuple[str, str] | None = None) -> list[str]:
        """The metabench command line for one host (counters: the target's CountsMetaRequests, if any)."""
        mode = str(options.get("mode", "calls"))
        argv = [str(options.get("binary", "metabench")), mode, "--dir", folder, "--output", OUTPUT]
        if options.get("operations"):
            argv += ["--ops", ",".join(_as_list(options["operations"]))]
        keys = ("iterations", "warmup") if mode == "calls" else ("threads", "files")
        argv += [a for k in keys if k in options for a in (f"--{k}", str(options[k]))]
        if mode == "calls" and "cache_wait" in options:
            argv += ["--cache-wait", f"{_seconds(options['cache_wait']):g}"]
        if mode == "calls" and counters and options.get("engine_counters", True) is not False:
            argv += ["--counters", counters[0], "--counters-prefix", counters[1]]
        if mode == "concurrency" and "bytes" in options:
            argv += ["--bytes", str(int(parse_size(options["bytes"])))]
        return argv

    def build(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """metabench in the case's folder; across hosts on every host at once, each in `<folder>/<host>`,
        every operation started together: `metabench barrier` runs on the first host as the case's
        background server (checked to listen first) and each host's metabench waits there."""
        if ctx is None or not ctx.multi():
            return Invocation(argv=self.argv(case.options, test_dir, ctx.meta_counters if ctx else None),
                              outputs=[OUTPUT])
        inv = Invocation(argv=[], outputs=[OUTPUT])
        first, info = next(iter(ctx.hosts.items()))
        where = f"[{info.address}]:{ctx.port}" if ":" in info.address else f"{info.address}:{ctx.port}"
        binary = str(case.options.get("binary", "metabench"))
        inv.servers[first] = [binary, "barrier", "--listen", where, "--parties", str(len(ctx.hosts))]
        inv.wait_ports.append((info.address, ctx.port))
        for name in ctx.hosts:
            folder = f"{test_dir}/{name}"
            inv.per_host[name] = [*self.argv(case.options, folder, ctx.meta_counters), "--barrier", where]
            inv.host_dirs[name] = folder
        return inv

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """metabench.json of one host; without it, why (metabench's own stderr)."""
        out = raw_dir / OUTPUT
        if not out.exists():
            said = last_lines(TOOL, raw_dir / "stderr", 3)
            raise ParseError(TOOL, str(out), "metabench wrote no result" + (f": {' '.join(said)}" if said else
                                                                               " (it stopped before the end)"))
        return parse_path(out)

    def combine_hosts(self, parts: dict[str, ParseResult]) -> ParseResult:
        """Rows of every host, and their aggregate as host `all` (rates added, latencies averaged)."""
        return combine_hosts(parts)

    def parse_file(self, path: Path) -> ParseResult:
        """An existing metabench.json."""
        return parse_path(path)

    def provide(self, t, controller, binary: str, settings) -> str:
        """Put metabench on a host (fsbench deploy): this machine's build, or compiled there."""
        method = settings.tool(self.name).get("method") or "auto"
        return metabench_deploy.provide(t, controller, binary, method=method, install=settings.install)

    def version_argv(self, options: dict | None = None) -> list[str]:
        """`metabench --version` prints e.g. metabench 1.0.0."""
        return [str((options or {}).get("binary", "metabench")), "--version"]


def _operation_issues(value: object, mode: str) -> list[OptionIssue]:
    if value is None:
        return []
    names = _as_list(value)
    if not names or not all(isinstance(n, str) and n for n in names):
        return [OptionIssue("operations", "operations must be a list of names", "e.g. [mkdir, rmdir, lookup]")]
    out = []
    for n in names:
        if n == "newchunk":
            out.append(OptionIssue("operations", NEWCHUNK, "leave it out: docs/scenario.md says how each seed row "
                                                           "maps to a system call"))
        elif n not in MODES[mode]:
            other = next((m for m, ops in MODES.items() if n in ops), "")
            out.append(OptionIssue("operations", f"{n!r} is not a metabench {mode} operation",
                                   f"it is one of mode {other}" if other else "known: " + ", ".join(MODES[mode])))
    if len(set(names)) < len(names):
        out.append(OptionIssue("operations", "an operation is listed twice"))
    order = [CONCURRENCY.index(n) for n in names if n in CONCURRENCY]
    if mode == "concurrency" and order != sorted(order):
        out.append(OptionIssue("operations", "concurrency operations run in the order create_write, open_read, "
                                             "rename, delete"))
    return out


def _checked_value(options: dict, key: str, parse, what: str, most: float) -> list[OptionIssue]:
    if key not in options:
        return []
    value = options[key]
    try:
        number = parse(value) if not isinstance(value, bool) else -1.0
    except (TypeError, ValueError):
        number = -1.0
    if not 0 <= number <= most:
        return [OptionIssue(key, f"{key}={value!r} is not {what} (at most {most:g})")]
    return []


def _as_list(value: object) -> list:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _ops(options: dict, every: tuple[str, ...]) -> list[str]:
    return [str(o) for o in _as_list(options["operations"])] if options.get("operations") else list(every)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _seconds(value: object) -> float:
    try:
        return parse_duration(value)
    except (TypeError, ValueError):
        return 0.0


PLUGIN: ToolAdapter = MetabenchAdapter()
