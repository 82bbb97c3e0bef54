"""Benchmark: `fsbench --help` and `fsbench validate` answer within 0.5 s (issue 2).

    python bench/cli_latency.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(argv: list[str], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.monotonic()
        subprocess.run(argv, check=True, capture_output=True, cwd=REPO)
        out.append(time.monotonic() - start)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    fsb = [sys.executable, "-m", "fsbench"]
    for label, argv in (("fsbench --help", fsb + ["--help"]),
                        ("fsbench validate quickstart", fsb + ["validate", "scenarios/quickstart.yaml"]),
                        ("fsbench plan quickstart", fsb + ["plan", "scenarios/quickstart.yaml"]),
                        ("python -c pass (floor)", [sys.executable, "-c", "pass"])):
        t = timed(argv, args.repeat)
        print(f"{label:<30} median {statistics.median(t) * 1000:6.0f} ms  max {max(t) * 1000:6.0f} ms"
              f"  (target < 500 ms)")


if __name__ == "__main__":
    main()
