"""Benchmark: the /proc sampler's own CPU cost on the host it watches.

Target (issue "resource monitoring"): under 1 % of one core at a 1 s interval. The sampler runs
through the real local transport for ~20 s; its CPU time is read from /proc/<pid>/stat of its
process group (utime + stime of every member, plus cutime + cstime: the `cat` and `sleep` it has
reaped; the members are the sampler's shell, the awk that passes its samples on and the pipe's two shells:
the form a host reached over SSH runs; `--local-form` measures the one this machine's own sampler runs, without awk),
and cross-checked with getrusage(RUSAGE_CHILDREN) once it has ended. The window starts after the baseline
sample, so it holds the dense start (samples every 0.1 s at first, doubling every 10): over the default
20 s most of it; `--seconds 60` comes nearer to a long case's cost.

    python bench/monitor_cost.py [--seconds 20] [--interval 1] [--extra-procs 0,500] [--local-form]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsbench.monitor import MonitorSession  # noqa: E402
from fsbench.transport.local import LocalTransport  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def group_ticks(pgid: int) -> int:
    """CPU ticks used by a process group: live members' own time plus what they reaped from children."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        f = text[text.rfind(")") + 2:].split()
        if int(f[2]) == pgid:  # field 5, pgrp
            total += sum(int(x) for x in f[11:15])  # utime stime cutime cstime
    return total


def once(seconds: float, interval: float, extra_procs: int, whole_samples: bool = True) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        # one watched process, like a FUSE daemon: a `sleep` the kernel calls fsbm-watched
        watched = Path(tmp) / "fsbm-watched"
        watched.symlink_to(shutil.which("sleep"))
        idle = [subprocess.Popen([str(watched), str(seconds + 60)])]
        idle += [subprocess.Popen(["sleep", str(seconds + 60)]) for _ in range(extra_procs)]
        try:
            raw = Path(tmp) / "monitor-local.txt"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            mon = MonitorSession(LocalTransport(), "local", interval, [watched.name, "juicefs"], raw,
                                 max_s=seconds + 120, whole_samples=whole_samples)
            assert mon.start(), "the sampler wrote no sample"
            pid = int(re.search(r"pid=(\d+)", raw.read_text()).group(1))
            # the sampler's process group: its shell, the awk that passes its samples on, what they start
            pgid = os.getpgid(pid)
            t0, ticks0 = time.monotonic(), group_ticks(pgid)
            time.sleep(seconds)
            t1, ticks1 = time.monotonic(), group_ticks(pgid)
            procs = sum(1 for e in os.listdir("/proc") if e.isdigit())
            result = mon.stop(final_sample=False)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = time.monotonic() - t0
            size = raw.stat().st_size
        finally:
            for p in idle:
                p.kill()
                p.wait()
    rusage_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    samples = result.meta.get("samples", 0)
    return {"procs": procs,
            "proc_pct": (ticks1 - ticks0) / CLK_TCK / (t1 - t0) * 100,
            "rusage_pct": rusage_s / wall * 100, "samples": samples,
            "bytes_per_sample": size / max(samples, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--extra-procs", default="0,500", help="idle processes to add, comma-separated runs")
    ap.add_argument("--local-form", action="store_true",
                    help="the sampler as this machine's own runs it (without awk), not as a host reached over SSH")
    args = ap.parse_args()
    for extra in (int(x) for x in args.extra_procs.split(",")):
        r = once(args.seconds, args.interval, extra, whole_samples=not args.local_form)
        verdict = "ok" if r["proc_pct"] < 1.0 else "OVER TARGET"
        print(f"interval {args.interval:g}s, {args.seconds:g}s, ~{r['procs']} processes on the host: sampler CPU "
              f"{r['proc_pct']:.2f} % of a core from /proc (getrusage: {r['rusage_pct']:.2f} %), "
              f"{r['samples']} samples, {r['bytes_per_sample'] / 1024:.1f} KiB raw per sample; "
              f"target < 1 %: {verdict}")


if __name__ == "__main__":
    main()
