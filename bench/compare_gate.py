"""`fsbench compare` as a regression gate: false alarms on a rerun, detections of an injected slowdown.

    .venv/bin/python bench/compare_gate.py [--runtime 1s] [--slow 0.8]
    .venv/bin/python bench/compare_gate.py --runs REFERENCE RERUN [SLOWED]     # runs made already

Runs one small fio scenario (four unpaced workloads at 1 and 2 jobs, 3 repetitions, direct I/O by
default, a folder under /var/tmp) three times: the reference, a rerun, and a run where a stand-in fio
caps the random writes at `--slow` of the IOPS the reference measured for them (its scenario.yaml is the
rerun's). Then counts, for the rerun and for the slowed run, the measurements called worse or better by
the old rule (every metric and statistic, each change outside its 5 % band with Welch's p < 0.05 on its
own) and by the gate's (each tool's primary metrics, Benjamini-Hochberg q < 0.05 over the run's tests,
beyond the floors), and which measurements the gate names.
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

from fsbench.compare import Comparison, compare_runs, exit_code  # noqa: E402
from fsbench.compare.model import UNTESTED  # noqa: E402

SCENARIO = """\
name: compare-gate
settings: {{order: rounds}}
targets:
  disk: {{path: {root}, setup: ["mkdir -p ${{target.path}}"], teardown: ["rmdir ${{target.path}}"]}}
workloads:
"""
WORKLOAD = """\
  {name}:
    tool: fio
    options: {{rw: {rw}, bs: {bs}, size: 16m, ioengine: psync, direct: {direct}, time_based: true,
               runtime: {runtime}{rate}}}
    repetitions: 3
    sweep: {{product: {{numjobs: [1, 2]}}}}
"""
WORKLOADS = (("seqwrite", "write", "64k"), ("seqread", "read", "64k"), ("randwrite", "randwrite", "4k"),
             ("randread", "randread", "4k"))
#: a stand-in fio: the randwrite jobs get a rate_iops cap (instead of a rate: fio takes one of the two), every
#: other job runs as it is
SLOWER = """\
#!/bin/sh
if [ "$1" = "--version" ]; then exec {fio} "$@"; fi
if grep -q '^\\[randwrite\\]$' job.fio; then
  jobs=$(sed -n 's/^numjobs=//p' job.fio); jobs=${{jobs:-1}}
  case $jobs in 1) cap={cap1};; *) cap={cap2};; esac
  sed -e '/^rate=/d' -e "/^\\[global\\]$/a rate_iops=$cap" job.fio > slowed.fio
  for a; do shift; [ "$a" = job.fio ] && a=slowed.fio; set -- "$@" "$a"; done
fi
exec {fio} "$@"
"""


def _run(scenario: Path, out: Path, env: dict | None = None) -> Path:
    argv = [sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(out), "--no-report",
            "--progress", "none"]
    proc = subprocess.run(argv, cwd=REPO, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    return Path(proc.stdout.splitlines()[0])


def old_rule(c: Comparison) -> dict[str, int]:
    """Verdicts as `fsbench compare` gave them before the gate: each measurement on its own at 5 %."""
    f = c.frame[c.frame["confidence"] != ""]
    changed = f["beyond_band"].astype(bool) & ((f["p_value"] < c.alpha) | (f["confidence"] == UNTESTED))
    worse = changed & (f["change"] < 0).where(f["direction"] == "higher", f["change"] > 0)
    return {"measurements": len(f), "worse": int(worse.sum()), "better": int((changed & ~worse).sum())}


def gate(c: Comparison) -> dict:
    """The gate's verdicts, its tests and the measurements it names worse."""
    f = c.frame
    worse = f[f["verdict"] == "worse"]
    label = c.runs[0].label
    return {**c.tests[label], "worse": len(worse), "better": int((f["verdict"] == "better").sum()),
            "exit_fail_on_worse": exit_code(c, ["worse"]),
            "named": sorted(f"{r.workload} {r.point} {r.metric} {r.change:+.0%} q={r.q_value:.2g}"
                            for r in worse.itertuples())}


def report(name: str, ref: Path, other: Path) -> dict:
    everything = compare_runs(ref, other, metrics="all")
    return {"pair": name, "old_rule_all_metrics": old_rule(everything),
            "gate_all_metrics": gate(everything), "gate_default": gate(compare_runs(ref, other))}


def _caps(ref: Path, share: float) -> tuple[int, int]:
    """share of the reference's mean randwrite IOPS per job count (the stand-in's caps)."""
    c = compare_runs(ref, ref)
    f = c.frame[(c.frame["workload"] == "randwrite") & (c.frame["metric"] == "iops")]
    by_jobs = {str(r.point): r.mean_a for r in f.itertuples()}
    # fio's rate_iops is per job: the case's IOPS are the sum of its jobs
    return int(share * by_jobs["numjobs=1"]), int(share * by_jobs["numjobs=2"] / 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", type=Path, help="REFERENCE RERUN [SLOWED] made already")
    ap.add_argument("--runtime", default="1s")
    ap.add_argument("--direct", type=int, choices=(0, 1), default=1,
                    help="fio's direct: 1 measures the disk, 0 the page cache (far noisier here)")
    ap.add_argument("--rate", default="", help="fio's rate for every job (e.g. 20m): a steady system's spread")
    ap.add_argument("--slow", type=float, default=0.8, help="the slowed randwrite's share of the reference")
    args = ap.parse_args()
    took = time.monotonic()
    if args.runs:
        runs = args.runs
    else:
        tmp = Path(tempfile.mkdtemp(prefix="compare-gate-", dir="/var/tmp"))
        text = SCENARIO.format(root=tmp / "target") + "".join(
            WORKLOAD.format(name=n, rw=rw, bs=bs, runtime=args.runtime, direct=args.direct,
                            rate=f", rate: {args.rate}" if args.rate else "") for n, rw, bs in WORKLOADS)
        (tmp / "gate.yaml").write_text(text)
        runs = [_run(tmp / "gate.yaml", tmp / "out"), _run(tmp / "gate.yaml", tmp / "out")]
        cap1, cap2 = _caps(runs[0], args.slow)
        (tmp / "bin").mkdir()
        fio = subprocess.run(["sh", "-c", "command -v fio"], capture_output=True, text=True, check=True).stdout.strip()
        (tmp / "bin" / "fio").write_text(SLOWER.format(fio=fio, cap1=cap1, cap2=cap2))
        (tmp / "bin" / "fio").chmod(0o755)
        runs.append(_run(tmp / "gate.yaml", tmp / "out", {"PATH": f"{tmp / 'bin'}:{os.environ['PATH']}"}))
    out = [report("rerun", runs[0], runs[1])]
    if len(runs) > 2:
        out.append(report("slowed", runs[0], runs[2]))
    print(json.dumps({"runs": [str(r) for r in runs], "slow": args.slow, "direct": args.direct, "rate": args.rate,
                      "results": out,
                      "seconds": round(time.monotonic() - took)}, indent=1))


if __name__ == "__main__":
    main()
