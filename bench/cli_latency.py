"""Benchmark: `fsbench --help`, `validate` and `plan` latency, optionally alternated with another checkout.

    python bench/cli_latency.py [--repeat 10] [--scenario scenarios/meta-engines.yaml] [--before TREE]

Targets: `--help` within 0.5 s (issue 2); `validate` and `plan` of meta-engines.yaml within 0.25 s (issue 25).
Python's bytecode cache is used as an installed fsbench would use it (kept in a temporary folder through
PYTHONPYCACHEPREFIX, filled by one untimed run of each command); --cold measures without it (every module
compiled at each start, as under PYTHONDONTWRITEBYTECODE=1 in a source checkout).
With --before, each command runs alternately from TREE (another checkout, e.g. a `git worktree` of an older
commit, put first on PYTHONPATH) and from this one, so that both see the same machine state.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed_once(argv: list[str], tree: Path, cache: str | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + sys) of one run; the CPU time varies less with the machine's load."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache:
        env["PYTHONPYCACHEPREFIX"] = cache
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True, cwd=tree, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--scenario", default="scenarios/meta-engines.yaml")
    ap.add_argument("--before", type=Path, help="another checkout to alternate with this one")
    ap.add_argument("--cold", action="store_true", help="without Python's bytecode cache")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fsbench-pycache-") as cache:
        measure(args, None if args.cold else cache)


def measure(args: argparse.Namespace, cache: str | None) -> None:
    fsb = [sys.executable, "-m", "fsbench"]
    trees = {"now": REPO, **({"before": args.before.resolve()} if args.before else {})}
    print(f"load average at start: {os.getloadavg()[0]:.2f}; bytecode cache: {'yes' if cache else 'no'}")
    for label, argv, target in (("fsbench --help", fsb + ["--help"], 500),
                                ("fsbench validate", fsb + ["validate", args.scenario], 250),
                                ("fsbench plan", fsb + ["plan", args.scenario], 250),
                                ("python -c pass (floor)", [sys.executable, "-c", "pass"], 0)):
        times: dict[str, list[float]] = {name: [] for name in trees}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        for tree in trees.values():
            timed_once(argv, tree, cache)  # fills the bytecode cache; not counted
        for _ in range(args.repeat):
            for name, tree in trees.items():
                wall, used = timed_once(argv, tree, cache)
                times[name].append(wall)
                cpu[name].append(used)
        for name, t in times.items():
            print(f"{label:<24} {name:<7} median {statistics.median(t) * 1000:6.0f} ms  max {max(t) * 1000:6.0f} ms"
                  f"  CPU median {statistics.median(cpu[name]) * 1000:6.0f} ms"
                  + (f"  (target < {target} ms)" if target else ""))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
