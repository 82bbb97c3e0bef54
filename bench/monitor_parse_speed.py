"""Benchmark: the monitor's raw files read per sample, before and after the reading was rewritten for speed
(issue 35: the controller parses one per host and case, its largest cost per host). Target: `read_raw` at
least 3x faster per sample than before, with the same result.

"Before" is fsbench/monitor/samples.py as git has it at --before (default 1cb5c69, the last commit with the
line-by-line reader), loaded as a module of its own; "after" is this tree's. Each file is read by both
`read_raw`s and by `parse_result` (the whole parse: read_raw, then analyse) with each `read_raw` in turn;
times are the best of --repeat runs, in microseconds per sample, and `same` says whether both `read_raw`s
gave the same result (compared by repr).

    python bench/monitor_parse_speed.py [FILE ...] [--repeat 7] [--before REV]
    python bench/monitor_parse_speed.py /tmp/hs-keep/n16/*/raw/*/client*/monitor.txt   # a run's raw files

Default files: the unit tests' real ones (tests/golden/monitor/inputs). They hold 3 samples each, so the first
sample, read with nothing cached yet, weighs more there than in a run's files (10 to 30 samples each).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fsbench.monitor.parse as parse  # noqa: E402  (after the path: this tree's fsbench)
from fsbench.monitor.samples import read_raw  # noqa: E402

INPUTS = sorted((REPO / "tests" / "golden" / "monitor" / "inputs").glob("*.txt"))


def samples_at(rev: str) -> ModuleType:
    """fsbench/monitor/samples.py at git revision rev, as a module named samples_before."""
    source = subprocess.run(["git", "show", f"{rev}:fsbench/monitor/samples.py"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("samples_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:fsbench/monitor/samples.py", "exec"), module.__dict__)
    return module


def best(fn: Callable[[], object], repeat: int) -> float:
    """The shortest of repeat runs of fn, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def parse_with(reader: Callable, text: str) -> None:
    """parse_result(text) with reader as its read_raw."""
    parse.read_raw = reader
    try:
        parse.parse_result(text, "h1")
    finally:
        parse.read_raw = read_raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=INPUTS)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--before", default="1cb5c69", help="the git revision whose read_raw is 'before'")
    args = ap.parse_args()
    before = samples_at(args.before).read_raw
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; µs per sample, best of {args.repeat}")
    print(f"{'file':48} {'samples':>7} {'read before':>11} {'after':>7} {'x':>5} {'parse before':>12} {'after':>7} "
          f"{'x':>5}  same")
    totals = [0, 0.0, 0.0, 0.0, 0.0]
    for path in args.files:
        text = path.read_text(errors="replace")
        n = len(read_raw(text).samples)
        if not n:
            print(f"{str(path)[-48:]:48} no complete sample")
            continue
        same = repr(before(text)) == repr(read_raw(text))
        runs: list[Callable[[], object]] = [partial(before, text), partial(read_raw, text),
                                            partial(parse_with, before, text), partial(parse_with, read_raw, text)]
        times = [best(run, args.repeat) for run in runs]
        totals = [totals[0] + n, *(t + x for t, x in zip(totals[1:], times))]
        us = [x / n * 1e6 for x in times]
        print(f"{str(path)[-48:]:48} {n:7} {us[0]:11.1f} {us[1]:7.1f} {us[0] / us[1]:5.2f} {us[2]:12.1f} {us[3]:7.1f} "
              f"{us[2] / us[3]:5.2f}  {'yes' if same else 'NO'}")
    if totals[0]:
        n, *times = totals
        us = [x / n * 1e6 for x in times]
        print(f"{'all ' + str(len(args.files)) + ' files':48} {n:7} {us[0]:11.1f} {us[1]:7.1f} {us[0] / us[1]:5.2f} "
              f"{us[2]:12.1f} {us[3]:7.1f} {us[2] / us[3]:5.2f}")


if __name__ == "__main__":
    main()
