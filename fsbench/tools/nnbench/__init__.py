"""Hadoop's NNBench (org.apache.hadoop.hdfs.NNBench, in the jobclient tests jar) on a Hadoop file system
target (hdfs, s3a, jfs): create_write, open_read, rename and delete at a concurrency of `maps`.

One case runs its operations in one JVM, through fsbench's runner (fsbench/hadoop/java): NNBench's own
steps one after the other, in local MapReduce mode with one thread per map (the seed's multi-threaded
NNBench is one process with many threads too), every map allowed to run at once
(mapreduce.local.map.tasks.maximum = maps) with a 1 MiB sort buffer instead of 100 MiB each. The start
barrier is set after the control files exist, so that every map starts together; the maps that did not
wait at it are counted (late_maps). The order is fsbench's, whatever the workload lists: NNBench's
delete removes the files create_write made, but rename has moved them, so after a rename a
create_write runs again (not measured) before delete.

Across client hosts (a target with several hosts, e.g. the inventory's `clients` group) `maps` is the
concurrency of the whole load, spread over the hosts (100 maps on 3 hosts: 34, 33, 33; a host left
without a map does not run). The runner runs on those hosts at once, each with its own base folder
`<case>/<host>` (Hadoop 3.3.6's NNBench names its files file_<map number>_<i> under the base folder, so
hosts sharing one would collide), and each waits at one `metabench barrier` on the first host (the
case's background server) before every run's start time: each operation starts together on every host.
Each host starts its maps the same fixed delay after the barrier lets it go, by its own clock, so clocks
that disagree shift only the printed start times, not the start. Rows are per host plus their sum (host
`all`, fsbench.tools.nnbench.hosts).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from fsbench import hadoop
from fsbench.api.tools import BuildContext, CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.core.errors import FsbenchError
from fsbench.core.tidy import ParseResult
from fsbench.host import packages as hostpkg
from fsbench.tools.common import unknown_options
from fsbench.tools.nnbench.hosts import combine_hosts
from fsbench.tools.nnbench.parse import METRICS, OPERATIONS, RESULTS, TOOL, parse_dir, parse_path
from fsbench.validity.namenode import REACHED_NAMENODE

OPTIONS = {
    "maps": "concurrent clients: NNBench maps, each a thread of one JVM (sweep it); across hosts the total, "
            "spread over them",
    "files_per_map": "files each map creates, opens, renames and deletes (NNBench -numberOfFiles)",
    "operations": f"which of {', '.join(OPERATIONS)} are measured (default: all, always in that order)",
    "bytes_to_write": "bytes written into each file (default 0: metadata only)",
    "block_size": "the files' block size in bytes (default 1048576)",
    "replication": "the files' replication factor (default 1)",
    "read_after_open": "open_read also reads each file (default false)",
    "barrier_ms": "the least time between the control files' creation and the maps' start (default 1500)",
    "first_barrier_ms": "the same for the first run (default: as barrier_ms; an untimed job on the local file "
                        "system loads MapReduce's classes before it, and the first barrier is at least as long as "
                        "that job took); maps that miss a barrier make the run be done again with twice as long "
                        "a one",
    "heap": "the JVM's heap, e.g. 1g (default: 1g, 2g above 50 maps)",
}
#: the barrier server across hosts (metabench's: one byte each way per round), on the case's first host; a
#: metabench workload's `fsbench deploy` (or install.sh) puts it there, as seed 002's scenario does on client1
BARRIER_BINARY = "metabench"

HEAP_RULE = re.compile(r"^[1-9][0-9]*[kmgKMG]$")
BYTES_PER_CHECKSUM = 512
#: rough figures for plans, from seed 002's runs here (docs/benchmarks.md, session 21): a JVM's start with the
#: runner's warm-up job, one NNBench run's own time beside its start barrier, file operations per second
JVM_START_S, RUN_OVERHEAD_S, OPS_PER_S = 3.0, 0.7, 150.0
#: the runner's start barrier grows by this much per map (NNBenchRuns.PER_MAP_MS)
BARRIER_PER_MAP_MS = 20


def sequence(measured: list[str]) -> list[str]:
    """The NNBench runs, in order, that measure these operations: `OP` measured, `OP:setup` only prepares.

    open_read, rename and delete need the files create_write makes; delete removes the original names,
    which rename has moved away, so after a rename the files are created again (not measured) first.
    """
    want = [op for op in OPERATIONS if op in measured]
    runs = ["create_write" if "create_write" in want else "create_write:setup"]
    if "open_read" in want:
        runs.append("open_read")
    if "rename" in want:
        runs.append("rename")
    if "delete" in want:
        if "rename" in want:
            runs.append("create_write:setup")
        runs.append("delete")
    return runs


def share(maps: int, hosts: list[str]) -> dict[str, int]:
    """The maps of each host that gets any: `maps` spread as evenly as it goes, the first hosts one more."""
    each, extra = divmod(maps, len(hosts))
    spread = {h: each + (i < extra) for i, h in enumerate(hosts)}
    return {h: n for h, n in spread.items() if n > 0}


def _whole(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


class NNBenchAdapter:
    """NNBench through fsbench's runner, on a target whose settings answer fsbench.hadoop.HadoopFileSystem."""

    name = TOOL
    bring_your_own = False
    accepts = ("url",)
    metrics = dict(METRICS)
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("exceptions", "exec_time_mean", "late_maps", "latency_mean", "ops", "rate")
    operations = OPERATIONS
    primary_metrics = ("rate", "latency_mean")
    #: each operation against the NameNode's own count of it (JMX NameNodeActivity), where fsbench runs HDFS
    validity_checks = (REACHED_NAMENODE,)
    #: its workloads sweep `maps`: the report's default for one swept parameter (by_value, chart) fits
    views = ("table",)
    packages = {"apt-get": ["openjdk-17-jre-headless"], "dnf": ["java-17-openjdk-headless"],
                "zypper": ["java-17-openjdk-headless"]}

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        """Known options, whole numbers where NNBench wants them, known operations."""
        issues = unknown_options(options, OPTIONS, TOOL)
        for key, least in (("maps", 1), ("files_per_map", 1), ("bytes_to_write", 0), ("replication", 1),
                           ("barrier_ms", 0), ("first_barrier_ms", 0)):
            if key in options and not _whole(options[key], least):
                issues.append(OptionIssue(key, f"{key} must be a whole number of at least {least}, "
                                               f"got {options[key]!r}"))
        block = options.get("block_size", 1048576)
        if not _whole(block, 1) or block % BYTES_PER_CHECKSUM:
            issues.append(OptionIssue("block_size", f"block_size must be a multiple of {BYTES_PER_CHECKSUM} bytes, "
                                                    f"got {block!r}", "e.g. 1048576"))
        ops = options.get("operations", list(OPERATIONS))
        ops = ops if isinstance(ops, list) else [ops]
        unknown = [op for op in ops if op not in OPERATIONS]
        if unknown or not ops:
            issues.append(OptionIssue("operations", f"unknown NNBench operation(s) {unknown}" if unknown
                                      else "no operation", f"choose from {', '.join(OPERATIONS)}"))
        if "read_after_open" in options and not isinstance(options["read_after_open"], bool):
            issues.append(OptionIssue("read_after_open", "read_after_open is true or false"))
        if "heap" in options and not HEAP_RULE.match(str(options["heap"])):
            issues.append(OptionIssue("heap", f"heap {options['heap']!r} is not a JVM heap size", "e.g. 1g or 512m"))
        if jobs or job_file_text:
            issues.append(OptionIssue("", "nnbench takes options only (no jobs or job_file)"))
        return issues

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """A JVM's start, then per run its start barrier (most of a small run), its overhead and its file
        operations. Across hosts each host's barrier counts its own share of the maps: this is the most."""
        ops = options.get("operations", list(OPERATIONS))
        runs = sequence(ops if isinstance(ops, list) else [ops])
        maps = int(options.get("maps", 1))
        files = maps * int(options.get("files_per_map", 10))
        barrier = (int(options.get("barrier_ms", 1500)) + BARRIER_PER_MAP_MS * maps) / 1000
        first = int(options["first_barrier_ms"]) / 1000 if "first_barrier_ms" in options else barrier
        return round(JVM_START_S + first - barrier + len(runs) * (barrier + RUN_OVERHEAD_S + files / OPS_PER_S), 1)

    def build(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """fsbench.NNBenchRuns: the target's client configuration in core-site.xml, local MapReduce in
        mapred-site.xml (both in the case's folder, first on the classpath), secrets in the environment.
        Across hosts: the same on every host at once, each in its own base folder, every run started
        together at `metabench barrier` on the first host."""
        fs = ctx.target_settings if ctx is not None else None
        if not isinstance(fs, hadoop.HadoopFileSystem):
            raise FsbenchError(f"nnbench needs a Hadoop file system target (kind hdfs, s3a or jfs), "
                               f"not a {ctx.target_kind if ctx is not None else 'directory'} target")
        o = case.options
        spread = share(int(o.get("maps", 1)), list(ctx.hosts) if ctx is not None and ctx.multi() else [""])
        maps = max(spread.values())
        run_id = ctx.run_id if ctx is not None and ctx.run_id else "run"
        base = f"{fs.url(test_dir).rstrip('/')}/fsbench-{run_id}/{case.case_id}"
        # MapReduce's own settings in mapred-site.xml: mapred-default.xml is read after core-site.xml
        # the job client looks whether its job ended every 100 ms instead of every second: each of a case's NNBench
        # jobs ended up to a second later than it did (NNBench's figures come from its maps' own clocks)
        mapred = {"mapreduce.framework.name": "local", "mapreduce.local.map.tasks.maximum": str(maps),
                  "mapreduce.task.io.sort.mb": "1", "mapreduce.client.progressmonitor.pollinterval": "100"}
        files_in = {"core-site.xml": hadoop.site_xml(fs.client_conf(maps), f"written by fsbench for {case.case_id}"),
                    "mapred-site.xml": hadoop.site_xml(mapred, f"written by fsbench for {case.case_id}"),
                    "log4j.properties": hadoop.log4j_properties("WARN", ("org.apache.hadoop.hdfs.NNBench",))}
        if ctx is None or not ctx.multi():
            return Invocation(argv=self.argv(o, base, fs.jars), files=files_in, outputs=[RESULTS],
                              env=fs.client_env())
        inv = Invocation(argv=[], files=files_in, outputs=[RESULTS], env=fs.client_env())
        first = next(iter(spread))
        info = ctx.hosts[first]
        where = f"[{info.address}]:{ctx.port}" if ":" in info.address else f"{info.address}:{ctx.port}"
        if len(spread) > 1:  # one host alone has nobody to wait for
            inv.servers[first] = [BARRIER_BINARY, "barrier", "--listen", where, "--parties", str(len(spread))]
            inv.wait_ports.append((info.address, ctx.port))
        for name, own in spread.items():
            inv.per_host[name] = self.argv({**o, "maps": own}, f"{base}/{name}", fs.jars,
                                           barrier=where if len(spread) > 1 else "", barrier_maps=maps)
        return inv

    def argv(self, options: dict, base: str, jars: str = "", barrier: str = "", barrier_maps: int = 0) -> list[str]:
        """The runner's command line for one host: its NNBench runs on the base folder `base`. Across hosts
        (`barrier`) every host sizes its start barrier for `barrier_maps` (the largest share), so that all of
        them set the same start time."""
        o = options
        maps, files = int(o.get("maps", 1)), int(o.get("files_per_map", 10))
        ops = o.get("operations", list(OPERATIONS))
        args = ["-runs", ",".join(sequence(ops if isinstance(ops, list) else [ops])),
                "-barrierMs", str(int(o.get("barrier_ms", 1500))),
                *(["-barrier", barrier, "-barrierMaps", str(barrier_maps or maps)] if barrier else []),
                *(["-firstBarrierMs", str(int(o["first_barrier_ms"]))] if "first_barrier_ms" in o else []),
                "-cleanup", "-baseDir", base, "-maps", str(maps), "-reduces", "1", "-numberOfFiles", str(files),
                "-bytesToWrite", str(int(o.get("bytes_to_write", 0))),
                "-blockSize", str(int(o.get("block_size", 1048576))), "-bytesPerChecksum", str(BYTES_PER_CHECKSUM),
                "-replicationFactorPerFile", str(int(o.get("replication", 1))),
                "-readFileAfterOpen", "true" if o.get("read_after_open") else "false"]
        heap = str(o.get("heap", "2g" if maps > 50 else "1g"))
        return hadoop.java(hadoop.NNBENCH_RUNS, args, jars=hadoop.home(jars), heap=heap, conf_dirs=(".",))

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """NNBench_results.log, the runs told apart by the runner's lines on stdout."""
        return parse_dir(raw_dir)

    def combine_hosts(self, parts: dict[str, ParseResult]) -> ParseResult:
        """Rows of every host, and their sum across hosts as host `all` (rates added, latencies weighted)."""
        return combine_hosts(parts)

    def parse_file(self, path: Path) -> ParseResult:
        """An existing NNBench_results.log (every block a measurement), or a case's folder."""
        return parse_path(path)

    def provide(self, t, controller, binary: str, settings) -> str:
        """Put NNBench on a host (fsbench deploy): Java from its packages, this machine's jar cache uploaded."""
        return provide(t, settings)

    def version_argv(self, options: dict | None = None) -> list[str]:
        """Hadoop's version from the jar cache (`Hadoop 3.3.6`); fails where Java or the jars are missing."""
        return hadoop.java(hadoop.VERSION_INFO, [], jars=hadoop.home(), heap="64m", brief=True)


def provide(t, settings) -> str:
    """Java (the host's package manager, with deploy.install) and the jar cache (uploaded to the same path)."""
    steps = []
    if not hostpkg.succeeds(t, "java -version >/dev/null 2>&1").ok:
        ok, what = hostpkg.install(t, "java", bool(settings.install))
        steps.append(what if ok else f"nnbench needs Java 11 or newer: {what}")
        if not ok:
            return "; ".join(steps)
    jars = hadoop.home()
    if not hostpkg.succeeds(t, f"test -f {shlex.quote(jars)}/fsbench-hadoop.jar && test -d {shlex.quote(jars)}/lib").ok:
        local = Path(jars)
        if not (local / "fsbench-hadoop.jar").is_file():
            return "; ".join(steps + [hadoop.MISSING.format(home=jars) + " (on this machine first, then deploy)"])
        count = hostpkg.upload_tree(t, local, jars)
        steps.append(f"uploaded the jar cache {jars} ({count} files)")
    return "; ".join(steps) or "present"


PLUGIN: ToolAdapter = NNBenchAdapter()
