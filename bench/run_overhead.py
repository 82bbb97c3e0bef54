"""Benchmark: fsbench's own overhead on a run of N fio cases of S seconds each.

Target (issue 2): the whole `fsbench run` takes at most 10 % more than the sum of fio's own
wall times. Measured with and without the report (matplotlib) at the end.

    python bench/run_overhead.py [--cases 20] [--seconds 2]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def scenario(folder: Path, cases: int, seconds: int) -> Path:
    text = f"""\
name: overhead
targets:
  t: {{path: {folder}}}
workloads:
  w:
    tool: fio
    options: {{rw: randread, bs: 4k, size: 8m, time_based: true, runtime: {seconds}}}
    sweep:
      product: {{numjobs: {list(range(1, cases + 1))}}}
"""
    path = folder / "overhead.yaml"
    path.write_text(text)
    return path


def once(cases: int, seconds: int, report: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        sc = scenario(tmp_path, cases, seconds)
        argv = [sys.executable, "-m", "fsbench", "run", str(sc), "-o", str(tmp_path / "out"), "--progress", "none"]
        if not report:
            argv.append("--no-report")
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True)
        wall = time.monotonic() - start
        assert proc.returncode == 0, proc.stderr
        run = Path(proc.stdout.splitlines()[0])
        with (run / "cases.csv").open() as fh:
            tool = sum(float(r["tool_wall_s"]) for r in csv.DictReader(fh))
    return {"wall": wall, "tool": tool, "overhead": wall / tool - 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    for report in (False, True):
        runs = [once(args.cases, args.seconds, report) for _ in range(args.repeat)]
        med = statistics.median(r["overhead"] for r in runs)
        print(f"{args.cases} cases x {args.seconds}s, report={'yes' if report else 'no '}: "
              + ", ".join(f"fsbench {r['wall']:.1f}s / fio {r['tool']:.1f}s" for r in runs)
              + f"; median overhead {med * 100:+.1f}% (target <= +10%)")


if __name__ == "__main__":
    main()
