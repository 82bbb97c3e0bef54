"""Benchmark: `fsbench run` of 10 fio cases against a bare shell loop of the same fio commands (issue 25).

The cases: randread 4k, psync, 2 s each (time-based), numjobs 1-2 x iodepth 1, 2, 4, 8, 16, 64 MiB per
job, the page cache dropped before each. The bare loop lays the files out once with fio's create_only,
then for each case syncs, drops the page cache and runs fio: what a careful shell script does. Each
round runs the loop and `fsbench run` (and, with --before, `fsbench run` from another checkout) one
after the other on fresh folders; the medians of the rounds are compared. fsbench's bytecode is written
by one untimed short run first, as an installed fsbench has it.

    python bench/run_overhead.py [--rounds 3] [--before TREE] [--folder DIR] [--floor]

With --floor each round also runs the same loop from a Python process that does what fsbench cannot do
without (the floor of any tool built on the design card's libraries): it imports pandas, pyarrow's
Parquet writer, jinja2 and matplotlib in a thread while the files are laid out (as fsbench's warm-up does),
writes the fio results as a CSV and a Parquet file and draws one bar chart as SVG at the end.

Targets: within 1.10 x the bare loop, and fsbench's overhead per case (the case's duration_s in
cases.csv minus fio's own tool_wall_s) under 0.2 s.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NUMJOBS = (1, 2)
IODEPTH = (1, 2, 4, 8, 16)
OPTIONS = {"rw": "randread", "bs": "4k", "ioengine": "psync", "size": "64m", "time_based": "1", "runtime": "2"}


def scenario(folder: Path) -> Path:
    opts = ", ".join(f"{k}: {v}" for k, v in OPTIONS.items())
    path = folder / "overhead.yaml"
    path.write_text(f"""\
name: overhead
targets:
  t: {{path: {folder / 'data'}}}
workloads:
  w:
    tool: fio
    options: {{{opts}}}
    drop_caches: true
    sweep:
      product: {{numjobs: {list(NUMJOBS)}, iodepth: {list(IODEPTH)}}}
""")
    return path


def fio_argv(data: Path) -> list[str]:
    """fio with the cases' common options on a new folder, as a shell loop would call it."""
    data.mkdir()
    options = [f"--{k}={v}" for k, v in OPTIONS.items()]
    return ["fio", "--name=w", f"--directory={data}", "--output-format=json", *options]


def bare_loop(folder: Path) -> float:
    """The same cases as a shell loop would run them; the wall time of the whole loop."""
    common = fio_argv(folder / "bare")
    start = time.monotonic()
    subprocess.run(common + [f"--numjobs={max(NUMJOBS)}", "--create_only=1"], check=True, capture_output=True)
    for numjobs in NUMJOBS:
        for iodepth in IODEPTH:
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], check=True)
            subprocess.run(common + [f"--numjobs={numjobs}", f"--iodepth={iodepth}"], check=True,
                           capture_output=True)
    return time.monotonic() - start


FLOOR = """
import io, json, subprocess, sys, threading, time
from pathlib import Path

def libraries():
    import pandas, pyarrow.parquet, jinja2, matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot

folder = Path(sys.argv[1])
common, numjobs, iodepth = (json.loads(a) for a in sys.argv[2:5])
warm = threading.Thread(target=libraries)
warm.start()
subprocess.run(common + [f"--numjobs={max(numjobs)}", "--create_only=1"], check=True, capture_output=True)
warm.join()
rows = []
for nj in numjobs:
    for qd in iodepth:
        subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], check=True)
        out = subprocess.run(common + [f"--numjobs={nj}", f"--iodepth={qd}"], check=True, capture_output=True).stdout
        job = json.loads(out[out.index(b"{"):])["jobs"][0]  # fio may print notes before its JSON
        rows.append({"numjobs": nj, "iodepth": qd, "iops": job["read"]["iops"], "unit": "op/s"})
import pandas as pd
import matplotlib.pyplot as plt
df = pd.DataFrame(rows)
df.to_csv(folder / "results.csv", index=False)
df.to_parquet(folder / "results.parquet")
fig, ax = plt.subplots()
ax.bar([f"{r['numjobs']}x{r['iodepth']}" for r in rows], df["iops"])
fig.savefig(io.StringIO(), format="svg")
"""


def floor_loop(folder: Path) -> float:
    """The bare loop from a Python process that imports the card's libraries and writes results and a chart."""
    common = fio_argv(folder / "floor")
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", FLOOR, str(folder), json.dumps(common), json.dumps(list(NUMJOBS)),
                    json.dumps(list(IODEPTH))], check=True)
    return time.monotonic() - start


def fsbench_env(tree: Path) -> dict[str, str]:
    """fsbench from one checkout, its modules' bytecode cached as an installed fsbench has it (a source
    checkout under PYTHONDONTWRITEBYTECODE=1 would compile every module it changed at each start)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def fill_bytecode(tree: Path, folder: Path | None) -> None:
    """One untimed `fsbench run` of one short case: every module a run imports has its bytecode written."""
    with tempfile.TemporaryDirectory(prefix="fsbench-overhead-warm-", dir=folder) as tmp:
        sc = Path(tmp) / "warm.yaml"
        (Path(tmp) / "data").mkdir()
        sc.write_text(f"name: warm\ntargets: {{t: {{path: {Path(tmp) / 'data'}}}}}\nworkloads:\n  w:\n    tool: fio\n"
                      "    options: {rw: randread, bs: 4k, size: 1m, time_based: 1, runtime: 0.2}\n")
        subprocess.run([sys.executable, "-m", "fsbench", "run", str(sc), "-o", str(Path(tmp) / "out"), "--progress",
                        "none"], capture_output=True, cwd=tree, env=fsbench_env(tree), check=True)


def fsbench_run(folder: Path, tree: Path) -> dict:
    """`fsbench run` of the scenario from one checkout: wall time, fio's time, per-case overhead."""
    sc = scenario(folder)
    (folder / "data").mkdir()
    env = fsbench_env(tree)
    argv = [sys.executable, "-m", "fsbench", "run", str(sc), "-o", str(folder / "out"), "--progress", "none"]
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tree, env=env)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"fsbench run from {tree} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    run = Path(proc.stdout.splitlines()[0])
    with (run / "cases.csv").open() as fh:
        cases = list(csv.DictReader(fh))
    tool = sum(float(r["tool_wall_s"]) for r in cases)
    per_case = statistics.median(float(r["duration_s"]) - float(r["tool_wall_s"]) for r in cases)
    in_cases = sum(float(r["duration_s"]) for r in cases)
    return {"wall": wall, "tool": tool, "per_case": per_case, "fixed": wall - in_cases, "n": len(cases)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", type=Path, help="another checkout to alternate with this one")
    ap.add_argument("--floor", action="store_true", help="also run the loop from Python with the card's libraries")
    ap.add_argument("--folder", type=Path, default=None, help="where the data goes (default: a temporary folder)")
    args = ap.parse_args()
    if shutil.which("fio") is None:
        raise SystemExit("fio is not installed")
    trees = {"now": REPO, **({"before": args.before.resolve()} if args.before else {})}
    bare: list[float] = []
    floor: list[float] = []
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for tree in trees.values():
        fill_bytecode(tree, args.folder)
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for label in ("bare", *(["floor"] if args.floor else []), *trees):
            with tempfile.TemporaryDirectory(prefix="fsbench-overhead-", dir=args.folder) as tmp:
                if label == "bare":
                    bare.append(bare_loop(Path(tmp)))
                elif label == "floor":
                    floor.append(floor_loop(Path(tmp)))
                else:
                    runs[label].append(fsbench_run(Path(tmp), trees[label]))
            loads.append(os.getloadavg()[0])
    b = statistics.median(bare)
    print(f"load average {min(loads):.1f} to {max(loads):.1f} over the rounds")
    print(f"bare loop: median {b:.1f} s ({', '.join(f'{x:.1f}' for x in bare)})")
    if floor:
        f = statistics.median(floor)
        print(f"the loop from Python with the card's libraries: median {f:.1f} s "
              f"({', '.join(f'{x:.1f}' for x in floor)}), {f / b:.3f} x the bare loop")
    for name, rs in runs.items():
        wall = statistics.median(r["wall"] for r in rs)
        each = ", ".join(f"{r['wall']:.1f}" for r in rs)
        print(f"fsbench {name:<6}: median {wall:.1f} s ({each}), "
              f"{wall / b:.3f} x the bare loop (target <= 1.10); fio {statistics.median(r['tool'] for r in rs):.1f} s "
              f"in {rs[0]['n']} cases; per case overhead {statistics.median(r['per_case'] for r in rs):.2f} s "
              f"(target < 0.2); outside the cases {statistics.median(r['fixed'] for r in rs):.1f} s")


if __name__ == "__main__":
    main()
