"""Benchmark: parsing 100 MB tool outputs takes linear time and memory well below the file size.

Generates each output from the shared fixtures (read in place), in the shapes that make real
outputs that big: fio --status-interval streams (JSON and normal text, cumulative reports of which
only the last counts), one fio JSON document with thousands of jobs, fio normal text with
thousands of distinct jobs, a verbose (`-v`) mdtest run, and a long vdbench run (interval=1 for
days: summary.html, flatfile.html and logfile.html with one row per interval). Each output is
parsed by `fsbench.ingest.parser_for(tool)` in a fresh Python process, which reports the wall
time and its peak resident memory above what the interpreter held after its imports.

    python bench/parse_large.py [--mb 100] [--only fio-json-stream,...] [--keep DIR]
    PYTHONPATH=/path/to/other/checkout python bench/parse_large.py   # the same inputs, other code
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
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


#: kind -> (tool, output name, generator)
KINDS: dict[str, tuple[str, str, Callable[[Path, int], Path]]] = {
    "fio-json-stream": ("fio", "fio-status-interval.json", fio_json_stream),
    "fio-json-jobs": ("fio", "fio-many-jobs.json", fio_json_jobs),
    "fio-normal-stream": ("fio", "fio-status-interval.txt", fio_normal_stream),
    "fio-normal-jobs": ("fio", "fio-many-jobs.txt", fio_normal_jobs),
    "mdtest-verbose": ("mdtest", "mdtest-verbose.txt", mdtest_verbose),
    "vdbench-long-run": ("vdbench", "vdbench-long-run", vdbench_long_run),
}

# peak memory from VmHWM, the high-water mark of this process image: getrusage's ru_maxrss would
# start at the parent's size (Linux keeps it across fork and exec)
CHILD = textwrap.dedent("""
    import json, re, sys, time
    from pathlib import Path
    from fsbench.errors import ParseError
    from fsbench.ingest import parser_for

    def hwm():
        return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

    parse = parser_for(sys.argv[1])
    before = hwm()
    start = time.perf_counter()
    try:
        rows, error = len(parse(Path(sys.argv[2])).rows), ""
    except ParseError as exc:
        rows, error = 0, exc.reason
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_kib": hwm() - before, "rows": rows, "error": error}))
""")


def measure(tool: str, path: Path, timeout: float) -> dict:
    """Parse in a fresh interpreter (so peaks do not add up); its time and peak memory."""
    proc = subprocess.run([sys.executable, "-c", CHILD, tool, str(path)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ})
    if proc.returncode:
        return {"seconds": float("nan"), "peak_kib": 0, "rows": 0, "error": proc.stderr.strip()[-200:]}
    return json.loads(proc.stdout)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="size of each output (MiB)")
    ap.add_argument("--only", default="", help="comma-separated kinds: " + ", ".join(KINDS))
    ap.add_argument("--keep", help="write the outputs here and keep them (outputs already there are reused)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--repeat", type=int, default=1, help="parse each output N times, report the fastest")
    args = ap.parse_args()
    kinds = [k for k in KINDS if not args.only or k in args.only.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or tmp)
        out.mkdir(parents=True, exist_ok=True)
        print(f"{'output':<20} {'size':>9} {'parse':>9} {'MB/s':>6} {'peak memory':>12} {'rows':>9}")
        for kind in kinds:
            tool, name, make = KINDS[kind]
            path = out / name if args.keep and (out / name).exists() else make(out, args.mb << 20)
            size = _size(path)
            runs = [measure(tool, path, args.timeout) for _ in range(args.repeat)]
            r = min(runs, key=lambda x: x["seconds"])
            r["peak_kib"] = max(x["peak_kib"] for x in runs)
            main_file = path / "flatfile.html" if path.is_dir() else path
            rate = main_file.stat().st_size / 2**20 / r["seconds"] if r["seconds"] else float("nan")
            note = f"  ({r['error'][:60]})" if r["error"] else ""
            print(f"{kind:<20} {size / 2**20:7.0f} MB {r['seconds']:7.1f} s {rate:6.1f} "
                  f"{r['peak_kib'] / 1024:9.0f} MiB {r['rows']:>9}{note}", flush=True)
            if not args.keep:
                (subprocess.run(["rm", "-rf", str(path)]) if path.is_dir() else path.unlink())


if __name__ == "__main__":
    main()
