"""Benchmark: metabench's own floor, the smallest per-call latency it can report, on tmpfs.

tmpfs does no I/O and no network round trip: a call there costs the kernel's own work, and what
metabench adds on top (two clock reads around the call, an indirect function call) is its overhead.
This runs the installed metabench on a fresh tmpfs mount (as root; /dev/shm otherwise), several rounds,
and prints per operation the median over rounds of each round's p50 and mean, the clock-read cost
metabench measured itself, the same calls timed from Python (what an interpreted loop would add), and
the concurrency mode's operations per second on 1, 2 and 4 threads (its ceiling on this machine).

    python bench/metabench_floor.py [--iterations 2000] [--rounds 5] [--binary metabench]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsbench.tools.metabench.parse import CALLS, CONCURRENCY  # noqa: E402


def metabench(binary: str, folder: Path, *args: str) -> dict:
    """One metabench run in folder; its JSON."""
    out = folder.parent / f"floor-{os.getpid()}-{time.monotonic_ns()}.json"
    subprocess.run([binary, *args, "--dir", str(folder), "--output", str(out)], check=True, timeout=1800)
    try:
        return json.loads(out.read_text())
    finally:
        out.unlink()


def python_calls(folder: Path, n: int) -> dict[str, float]:
    """The median time of a few of the same calls made from Python, timed with time.perf_counter_ns
    around the call alone (names made beforehand, as metabench makes them)."""
    work = folder / "python"
    work.mkdir()
    fd = os.open(work / "file", os.O_CREAT | os.O_RDWR, 0o644)
    os.setxattr(fd, "user.metabench.0", b"0123456789abcdef")
    names = [str(work / f"o{i:09d}") for i in range(n)]
    opened: list[int] = []

    def timed(prepare: Callable[[str], object], call: Callable[[str], object],
              finish: Callable[[str], object]) -> float:
        samples = []
        for name in names:
            prepare(name)
            t0 = time.perf_counter_ns()
            call(name)
            samples.append(time.perf_counter_ns() - t0)
            finish(name)
        return statistics.median(samples) / 1e9

    def nothing(name: str) -> None:
        pass

    def made(name: str) -> None:
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))

    out = {
        "mkdir": timed(nothing, os.mkdir, os.rmdir),
        "create": timed(nothing, lambda p: opened.append(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)),
                        lambda p: (os.close(opened.pop()), os.unlink(p))),
        "unlink": timed(made, os.unlink, nothing),
        "lookup": timed(made, os.lstat, os.unlink),
        "setattr": timed(nothing, lambda p: os.fchmod(fd, 0o644), nothing),
        "getxattr": timed(nothing, lambda p: os.getxattr(fd, "user.metabench.0"), nothing),
    }
    os.close(fd)
    shutil.rmtree(work)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=2000, help="concurrency mode: files per thread")
    ap.add_argument("--binary", default="metabench")
    a = ap.parse_args()
    binary = shutil.which(a.binary) or sys.exit(f"{a.binary} is not installed: ./install.sh builds it")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="metabench-floor-") as tmp:
        mount = Path(tmp) / "tmpfs"
        mount.mkdir()
        mounted = os.geteuid() == 0 and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1g", "metabench-floor", str(mount)]).returncode == 0
        if not mounted:
            mount = Path(tempfile.mkdtemp(prefix="metabench-floor-", dir="/dev/shm"))
        try:
            rounds = [metabench(binary, mount, "calls", "--iterations", str(a.iterations), "--warmup",
                                str(a.iterations // 10)) for _ in range(a.rounds)]
            python = python_calls(mount, a.iterations)
            concurrency = {t: metabench(binary, mount, "concurrency", "--threads", str(t), "--files", str(a.files))
                           for t in (1, 2, 4)}
        finally:
            if mounted:
                subprocess.run(["umount", str(mount)], check=True)
            else:
                shutil.rmtree(mount, ignore_errors=True)
    clock = statistics.median(r["timer_overhead_ns"] for r in rounds)
    where = "a fresh tmpfs mount" if mounted else "/dev/shm (tmpfs; not root, so no mount of its own)"
    print(f"{version} on {where}, kernel {rounds[0]['kernel']}, {a.rounds} rounds of {a.iterations} calls "
          f"per operation; two clock reads (what metabench adds to every sample): {clock:.0f} ns\n")
    print("| operation | p50 | mean | p99 | the same call from Python (median) |\n|---|---|---|---|---|")
    by_round = [{o["name"]: o for o in r["operations"] if o["status"] == "ok"} for r in rounds]
    for name in CALLS:
        got = [r[name] for r in by_round if name in r]
        if not got:
            print(f"| {name} | not supported here | | | |")
            continue
        p50, mean, p99 = (statistics.median(o[k] for o in got) / 1e3 for k in ("p50_ns", "mean_ns", "p99_ns"))
        py = f"{python[name] * 1e6:.2f} µs" if name in python else ""
        print(f"| {name} | {p50:.2f} µs | {mean:.2f} µs | {p99:.2f} µs | {py} |")
    print(f"\n| threads | {' | '.join(CONCURRENCY)} |\n|---|{'---|' * len(CONCURRENCY)}")
    for threads, doc in concurrency.items():
        rates = {o["name"]: o["rate"] for o in doc["operations"]}
        print(f"| {threads} | " + " | ".join(f"{rates[op] / 1e3:.0f}k op/s" for op in CONCURRENCY) + " |")


if __name__ == "__main__":
    main()
