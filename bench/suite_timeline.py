"""How the test suite's units packed onto the xdist workers: from a timeline that tests/conftest.py writes.

    FSBENCH_TEST_TIMELINE=/tmp/timeline.tsv tox      # or pytest -n 3 with the same variable
    python bench/suite_timeline.py /tmp/timeline.tsv

Per worker: its units in the order they ran, each with its start and its length, the worker's busy time and
when it ended. Then the suite's span, its work in all, and the span a perfect packing would give (the work
divided by the workers): how much of the wall time is the units' own, and how much the packing's.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path


def main() -> None:
    rows = [line.split("\t") for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
    tests = [(w, unit, float(a), float(b)) for w, unit, _, a, b in rows]
    t0 = min(a for *_, a, _ in tests)
    units: dict[tuple[str, str], list[float]] = defaultdict(lambda: [float("inf"), 0.0, 0.0])
    for w, unit, a, b in tests:
        u = units[(w, unit)]
        u[0], u[1], u[2] = min(u[0], a - t0), max(u[1], b - t0), u[2] + (b - a)
    work = sum(b - a for *_, a, b in tests)
    workers = sorted({w for w, *_ in tests})
    for w in workers:
        mine = sorted((v[0], unit, v[1] - v[0]) for (ww, unit), v in units.items() if ww == w)
        busy = sum(v[2] for (ww, _), v in units.items() if ww == w)
        end = max(v[1] for (ww, _), v in units.items() if ww == w)
        print(f"{w}: busy {busy:.0f} s, ended at {end:.0f} s")
        for start, unit, length in mine:
            if length >= 5:
                print(f"  {start:7.0f} s  {length:6.0f} s  {unit}")
    span = max(v[1] for v in units.values())
    ideal = work / len(workers)
    print(f"span {span:.0f} s; work {work:.0f} s; a perfect packing on {len(workers)} workers: {ideal:.0f} s")


if __name__ == "__main__":
    main()
