"""Benchmark: parsing 100 MB tool outputs takes linear time and memory well below the file size.

Generates each output from the shared fixtures and the golden inputs (read in place), in the shapes
that make real outputs that big: fio --status-interval streams (JSON and normal text, cumulative
reports of which only the last counts), one fio JSON document with thousands of jobs, fio normal
text with thousands of distinct jobs, a verbose (`-v`) mdtest run, a long vdbench run (interval=1
for days: summary.html, flatfile.html and logfile.html with one row per interval), and runaway
outputs of the others: juicefs bench and objbench stdout full of progress bars or retried log lines
before their tables, a 100 MB metabench.json (not a metabench document: refused) and a 100 MB
metabench stderr without it, a 100 MB NNBench stdout of Hadoop log lines around the runner's lines,
and 100 MB of `juicefs stats` samples and of JuiceFS access log (the collectors).

Each output is parsed in a fresh Python process by both paths a result takes: `fsbench ingest`'s
(`fsbench.ingest.parser_for(tool)`, the plug-in's parse_file) and a run's (the plug-in's
parse_outputs on a raw folder holding the output under the name the tool gives it; for collectors
CollectorSession.finish, what a run calls). Each reports the wall time and its peak resident memory
above what the interpreter held after its imports.

    python bench/parse_large.py [--mb 100] [--only fio-json-stream,...] [--keep DIR]
    PYTHONPATH=/path/to/other/checkout python bench/parse_large.py   # the same inputs, other code
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
FIO = FIXTURES / "fio"
VDB = FIXTURES / "public" / "vdbench" / "masakioui-vdb_nvme" / "50407_fs_1host_read"


def _fill(path: Path, size: int, head: str, piece: Callable[[int], str], tail: str = "") -> None:
    """head, then piece(0), piece(1), ... until the file reaches size bytes, then tail."""
    with path.open("w") as f:
        f.write(head)
        i = 0
        while f.tell() < size:
            f.write("".join(piece(i + k) for k in range(100)))
            i += 100
        f.write(tail)


def fio_json_stream(out: Path, size: int) -> Path:
    """--status-interval: the same run reported again and again, runtime growing."""
    text = (FIO / "json_status_interval_timebased_randread.json").read_text()
    last = text[text.rindex("\n{\n") + 1:]
    path = out / "fio-status-interval.json"
    _fill(path, size, "", lambda i: last.replace('"job_runtime" : 3000', f'"job_runtime" : {3000 + i}'))
    return path


def fio_json_jobs(out: Path, size: int) -> Path:
    """One document, numjobs=N without group_reporting: N entries in jobs[]."""
    doc = json.loads((FIO / "json_numjobs4_nogroup_randrw70_4k_libaio.json").read_text())
    job = doc["jobs"][0]
    per_job = len(json.dumps(job, indent=2))
    doc["jobs"] = [dict(job, jobname=f"job{i}") for i in range(size // per_job)]
    path = out / "fio-many-jobs.json"
    path.write_text(json.dumps(doc, indent=2, separators=(",", " : ")) + "\n")
    return path


def _normal_parts() -> tuple[str, str, str]:
    text = (FIO / "normal_single_randrw70_4k_psync.txt").read_text()
    start = text.index("randrw70-psync: (groupid=0")
    end = text.index("Run status group")
    return text[:start], text[start:end], text[end:]


def fio_normal_stream(out: Path, size: int) -> Path:
    """--status-interval in normal format: the job block repeated (same pid), cumulative."""
    head, block, tail = _normal_parts()
    path = out / "fio-status-interval.txt"
    _fill(path, size, head, lambda i: block, tail)
    return path


def fio_normal_jobs(out: Path, size: int) -> Path:
    """numjobs=N without group_reporting in normal format: N job blocks, each its own pid."""
    head, block, tail = _normal_parts()
    pid = re.search(r"\bpid=\d+", block).group(0)
    path = out / "fio-many-jobs.txt"
    _fill(path, size, head, lambda i: block.replace(pid, f"pid={100000 + i}"), tail)
    return path


def mdtest_verbose(out: Path, size: int) -> Path:
    """mdtest -v over many iterations: per-iteration V-1 lines, one SUMMARY at the end."""
    text = (FIXTURES / "mdtest" / "main-5fcf0ba" / "verbose_v_i2_np2_tmpfs.stdout.txt").read_text()
    first = text.index("main: * iteration 1 *")
    first = text.rindex("\n", 0, first) + 1
    summary = text.index("\nSUMMARY rate")
    iteration = text[first:summary + 1]
    path = out / "mdtest-verbose.txt"
    _fill(path, size, text[:first], lambda i: iteration.replace("* iteration 1 *", f"* iteration {i + 1} *"),
          text[summary + 1:])
    return path


def _vdbench_rows() -> tuple[str, list[str], str, list[str], str]:
    """(flatfile head, flatfile interval rows, summary head, summary interval rows, summary start)."""
    flat = (VDB / "flatfile.html").read_text().splitlines(keepends=True)
    data = [line for line in flat if re.match(r"\d\d:\d\d:\d\d\.\d+ ", line)]
    flat_rows = [line for line in data if " avg_" not in line]
    flat_head = "".join(line for line in flat if line not in data)
    summary = (VDB / "summary.html").read_text().splitlines(keepends=True)
    rows = [line for line in summary if re.match(r"\d\d:\d\d:\d\d\.\d+ +\d+ ", line)]
    head = "".join(summary[: summary.index(rows[0])])
    return flat_head, flat_rows, head, rows, "".join(line for line in summary if "avg_" in line)


def vdbench_long_run(out: Path, size: int) -> Path:
    """interval=1 for days: flatfile.html, summary.html and logfile.html with a row per interval."""
    flat_head, flat_rows, sum_head, sum_rows, avg = _vdbench_rows()
    run = out / "vdbench-long-run"
    run.mkdir()

    def flat_row(i: int) -> str:
        row = flat_rows[i % len(flat_rows)]
        return re.sub(r"^(\S+ \S+ rd1) \d+ ", lambda m: f"{m.group(1)} {i + 1} ", row)

    def sum_row(i: int) -> str:
        row = sum_rows[i % len(sum_rows)]
        return re.sub(r"^(\S+) +\d+ ", lambda m: f"{m.group(1)} {i + 1:>12} ", row)

    _fill(run / "flatfile.html", size, flat_head, flat_row)
    n = sum(1 for _ in open(run / "flatfile.html")) - flat_head.count("\n")
    avg_flat = flat_rows[0].split(" rd1 1 ", 1)
    with (run / "flatfile.html").open("a") as f:
        f.write(f"{avg_flat[0]} rd1 avg_2-{n} {avg_flat[1]}")
    avg = re.sub(r"avg_2-\d+", f"avg_2-{n}", avg)
    for name in ("summary.html", "logfile.html"):
        head = sum_head if name == "summary.html" else "<pre>\nVdbench distribution: vdbench50407\n" + sum_head
        with (run / name).open("w") as f:
            f.write(head)
            for i in range(0, n, 100):
                f.write("".join(sum_row(k) for k in range(i, min(n, i + 100))))
            f.write(avg + "\nVdbench execution completed successfully\n")
    (run / "totals.html").write_text((VDB / "totals.html").read_text())
    return run


GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"


def juicefs_bench_progress(out: Path, size: int) -> Path:
    """juicefs bench under a pseudo-terminal: progress bars redrawn with \r (and colours), then the table."""
    table = (GOLDEN / "juicefs-bench" / "inputs" / "juicefs-1.4.2_bench_p2_pty_colours.txt").read_text()
    path = out / "juicefs-bench-progress.txt"
    _fill(path, size, "", lambda i: (f"\r\x1b[1A\x1b[J  Write big blocks: {i % 1024}/1024 [\x1b[32m{'=' * (i % 50)}"
                                     f">{' ' * (50 - i % 50)}\x1b[0m] {i % 100}%" + ("\n" if i % 1000 == 999 else "")),
          "\n" + table)
    return path


def objbench_retries(out: Path, size: int) -> Path:
    """juicefs objbench against a flaky store: a log line per retried request, then its two tables."""
    tables = (GOLDEN / "objbench" / "inputs" / "juicefs-1.4.2_objbench_fsbench-s3_p2.txt").read_text()
    path = out / "objbench-retries.txt"
    _fill(path, size, "", lambda i: f"2026/11/23 10:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:06d} juicefs[4242] "
                                    f"<WARNING>: Upload chunks/0/{i % 997}/{i}_0_4194304: RequestTimeout, "
                                    f"retry {i % 5 + 1} [cached_store.go:{i % 900}]\n", tables)
    return path


def metabench_json(out: Path, size: int) -> Path:
    """metabench.json grown to 100 MB (a real document with a huge extra field): not one metabench writes."""
    doc = (GOLDEN / "metabench" / "inputs" / "calls_tmpfs_200_iterations.json").read_text()
    head, rest = doc.split('"operations": [', 1)
    path = out / "metabench.json"
    _fill(path, size, head + '"padding": [', lambda i: f'{{"i": {i}, "x": "{"y" * 40}"}}, ',
          '{}],\n  "operations": [' + rest)
    return path


def metabench_stderr(out: Path, size: int) -> Path:
    """No metabench.json, and a stderr of 100 MB (a loop of warnings before it died)."""
    path = out / "metabench-stderr.txt"
    _fill(path, size, "", lambda i: f"metabench: warning: getxattr on f{i} took {i % 97} ms\n",
          "metabench: cannot make its working folder /x/metabench.1: Read-only file system\n")
    return path


def nnbench_stdout(out: Path, size: int) -> Path:
    """A case folder of NNBench: its real results log, and a stdout of 100 MB of Hadoop's log lines with the
    runner's lines among them."""
    real = GOLDEN / "nnbench" / "inputs" / "s3a__maps-20"
    folder = out / "nnbench-case"
    folder.mkdir()
    (folder / "NNBench_results.log").write_text((real / "NNBench_results.log").read_text())
    runner = (real / "stdout").read_text().splitlines(keepends=True)
    step = max(1, size // 150 // len(runner))

    def piece(i: int) -> str:
        line = (f"2026-11-23 10:00:{i % 60:02d},{i % 1000:03d} WARN impl.MetricsConfig: Cannot locate "
                f"configuration: tried hadoop-metrics2-s3a-file-system.properties ({i})\n")
        k = i // step
        return line + (runner[k] if i % step == step - 1 and k < len(runner) else "")

    _fill(folder / "stdout", size, "", piece)
    with (folder / "stdout").open("a") as f:  # the runner lines the size ran out before
        f.write("".join(runner[min(len(runner), _count_lines(folder / "stdout", "fsbench-nnbench ")):]))
    return folder


def _count_lines(path: Path, prefix: str) -> int:
    with path.open() as f:
        return sum(1 for line in f if line.startswith(prefix))


def juicefs_stats(out: Path, size: int) -> Path:
    """`juicefs stats` at 1 s for about 8 days: a sample line per second."""
    text = (GOLDEN / "collectors" / "inputs" / "juicefs-1.4.2_stats_verbosity1.txt").read_text().splitlines(True)
    path = out / "juicefs-stats.txt"
    _fill(path, size, "".join(text[:2]), lambda i: text[2 + i % (len(text) - 2)])
    return path


def juicefs_accesslog(out: Path, size: int) -> Path:
    """The access log of a busy mount, recorded by the juicefs-profile collector."""
    lines = (GOLDEN / "collectors" / "inputs" / "juicefs-1.4.2_accesslog_bench_p1.txt").read_text().splitlines(True)
    path = out / "juicefs-accesslog.txt"
    _fill(path, size, "", lambda i: lines[i % len(lines)])
    return path


@dataclass(frozen=True)
class Kind:
    """An output: the tool (or collector kind) that reads it, its name, how it is made, where a run keeps it
    (name in the case's raw folder; "" for a folder given whole), and whether `fsbench ingest` reads it."""

    tool: str
    name: str
    make: Callable[[Path, int], Path]
    raw_name: str
    ingest: bool = True
    collector: bool = False


KINDS: dict[str, Kind] = {
    "fio-json-stream": Kind("fio", "fio-status-interval.json", fio_json_stream, "fio.json"),
    "fio-json-jobs": Kind("fio", "fio-many-jobs.json", fio_json_jobs, "fio.json"),
    "fio-normal-stream": Kind("fio", "fio-status-interval.txt", fio_normal_stream, "stdout"),
    "fio-normal-jobs": Kind("fio", "fio-many-jobs.txt", fio_normal_jobs, "stdout"),
    "mdtest-verbose": Kind("mdtest", "mdtest-verbose.txt", mdtest_verbose, "stdout"),
    "vdbench-long-run": Kind("vdbench", "vdbench-long-run", vdbench_long_run, "output"),
    "juicefs-bench-progress": Kind("juicefs-bench", "juicefs-bench-progress.txt", juicefs_bench_progress, "stdout"),
    "objbench-retries": Kind("juicefs-objbench", "objbench-retries.txt", objbench_retries, "stdout"),
    "metabench-json": Kind("metabench", "metabench.json", metabench_json, "metabench.json"),
    "metabench-stderr": Kind("metabench", "metabench-stderr.txt", metabench_stderr, "stderr", ingest=False),
    "nnbench-stdout": Kind("nnbench", "nnbench-case", nnbench_stdout, ""),
    "juicefs-stats": Kind("juicefs-stats", "juicefs-stats.txt", juicefs_stats, "", ingest=False, collector=True),
    "juicefs-profile": Kind("juicefs-profile", "juicefs-accesslog.txt", juicefs_accesslog, "", ingest=False,
                            collector=True),
}

# peak memory from VmHWM, the high-water mark of this process image: getrusage's ru_maxrss would
# start at the parent's size (Linux keeps it across fork and exec)
CHILD = textwrap.dedent("""
    import json, re, sys, tempfile, time
    from pathlib import Path
    from types import SimpleNamespace
    from fsbench.core.errors import FsbenchError, ParseError
    from fsbench.ingest import parser_for
    from fsbench.tools import TOOLS
    from fsbench.collectors import COLLECTORS
    from fsbench.collectors.session import CollectorSession

    def hwm():
        return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

    class NoController:  # the after step (juicefs profile's replay) cannot run: the log itself is counted
        def run(self, *args, **kwargs):
            raise FsbenchError("no juicefs on this controller")

    mode, tool, target = sys.argv[1:4]
    scratch = tempfile.mkdtemp()
    if mode == "collector":
        kind = COLLECTORS.get(tool)
        collector = SimpleNamespace(name="c", interval_s=1.0, options={})
        session = CollectorSession(collector, kind, "h1", None, ["true"], Path(scratch), 60.0)
        session.output.unlink(missing_ok=True)
        session.output.symlink_to(target)
        parse = lambda: session.finish(NoController())
    elif mode == "run":
        parse = lambda: TOOLS.get(tool).parse_outputs(Path(target))
    else:
        parse = lambda: parser_for(tool)(Path(target))
    before = hwm()
    start = time.perf_counter()
    try:
        got = parse()
        rows, error = len(got.rows), ""
        if mode == "collector" and not rows:
            error = "; ".join(got.warnings)[:200]
    except ParseError as exc:
        rows, error = 0, exc.reason
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_kib": hwm() - before, "rows": rows, "error": error}))
""")


def measure(mode: str, tool: str, target: Path, timeout: float, limit_mib: int) -> dict:
    """Parse in a fresh interpreter (so peaks do not add up); its time and peak memory. The interpreter may
    use at most limit_mib of address space: a parser that would take the machine's memory stops early."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mib << 20, limit_mib << 20))

    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, mode, tool, str(target)], capture_output=True,
                              text=True, timeout=timeout, env={**os.environ}, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return {"seconds": float("nan"), "peak_kib": 0, "rows": 0, "error": f"over {timeout:.0f} s"}
    if proc.returncode:
        said = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        if "MemoryError" in said[0]:
            said = [f"MemoryError: more than its {limit_mib} MiB of address space"]
        return {"seconds": float("nan"), "peak_kib": 0, "rows": 0, "error": said[0][-200:]}
    return json.loads(proc.stdout)


def raw_folder(kind: Kind, path: Path, scratch: Path) -> Path:
    """A case's raw folder holding the output where the tool leaves it (a link: nothing is copied)."""
    if not kind.raw_name:
        return path  # the output is a case folder already
    raw = scratch / "raw"
    subprocess.run(["rm", "-rf", str(raw)], check=True)
    raw.mkdir()
    (raw / kind.raw_name).symlink_to(path)
    return raw


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def _best(runs: list[dict]) -> dict:
    r = dict(min(runs, key=lambda x: x["seconds"] if x["seconds"] == x["seconds"] else float("inf")))
    r["peak_kib"] = max(x["peak_kib"] for x in runs)
    return r


def _cell(r: dict | None) -> str:
    if r is None:
        return f"{'-':>21}"
    return f"{r['seconds']:7.1f} s {r['peak_kib'] / 1024:7.0f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="size of each output (MiB)")
    ap.add_argument("--only", default="", help="comma-separated kinds: " + ", ".join(KINDS))
    ap.add_argument("--keep", help="write the outputs here and keep them (outputs already there are reused)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--repeat", type=int, default=1, help="parse each output N times per path, report the fastest")
    ap.add_argument("--limit-mib", type=int, default=4096, help="address space each parse may use (MiB)")
    args = ap.parse_args()
    kinds = [k for k in KINDS if not args.only or k in args.only.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or tmp)
        out.mkdir(parents=True, exist_ok=True)
        print(f"{'output':<23} {'size':>7} {'ingest (parse_file)':>21} {'run (parse_outputs)':>21} {'rows':>9}")
        for name in kinds:
            kind = KINDS[name]
            path = out / kind.name
            if not (args.keep and path.exists()):
                path = kind.make(out, args.mb << 20)
            def best(mode: str, target: Path, tool: str = kind.tool) -> dict:
                return _best([measure(mode, tool, target, args.timeout, args.limit_mib) for _ in range(args.repeat)])

            ingest = best("ingest", path) if kind.ingest else None
            run = best("collector", path) if kind.collector else best("run", raw_folder(kind, path, Path(tmp)))
            rows = run["rows"] if ingest is None else ingest["rows"]
            errors = dict.fromkeys(r["error"][:70] for r in (ingest, run) if r is not None and r["error"])
            note = f"  ({' | '.join(errors)})" if errors else ""
            print(f"{name:<23} {_size(path) / 2**20:4.0f} MB {_cell(ingest)} {_cell(run)} {rows:>9}{note}", flush=True)
            if not args.keep:
                subprocess.run(["rm", "-rf", str(path)], check=True)


if __name__ == "__main__":
    main()
