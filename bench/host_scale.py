"""Benchmark: fsbench's own cost per case as the hosts grow (issue 35): a small fio and mdtest campaign on
1, 4, 16 and 32 clients of the namespaced lab (tests/mhlab.py: one sshd per host, its own mount and UTS
namespace, on 127.0.28.110 on), each count its own `fsbench run` from this checkout.

Per host count it reports the median of fsbench's time in a case outside the tool (cases.csv's duration_s
minus tool_wall_s), its steps from raw/<case>/phases.json (folders, staging, cache drops, monitors and
servers started, their stop, fetch, clean-up, parse), and the run's time outside its cases (preflight's
probes, the target's setup and teardown, the tables). The tools' own time is not fsbench's: fio's servers
and mpirun's ranks are the engines, and on one machine 32 hosts' tools share 2 cores.

    python bench/host_scale.py [--hosts 1,4,16,32] [--rounds 2] [--json FILE] [--keep DIR] [--lose-one] [--relay]
                               [--relay-only] [--collector]

With --relay each count runs twice, direct (`ssh`) and through relays (`ssh-relay`, an ssh-agent of its own
holding the lab's key), one after the other.

Target: the per-case overhead grows less than linearly with the hosts (docs/benchmarks.md, session 12).
Needs root (the lab), /usr/sbin/sshd, fio, mpirun and mdtest (and ssh, ssh-agent for --relay).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fsbench.run.case_phases import CPU_KEY as CPU  # noqa: E402
from tests.mhlab import clients_layout, ssh_agent, start_multihost  # noqa: E402 - the repository's root first

FIRST = 110  # 127.0.28.110 on: no other lab of the suite uses these
#: `fsbench` as the program runs it, writing its own process's CPU seconds (every thread, no child: not mpirun,
#: its ssh, nor fio --client) and the SSH channels it opened (one per command or SFTP session) to argv[1] as it
#: leaves
SELF_CPU = """\
import atexit, resource, sys, threading
import paramiko.transport
out = sys.argv.pop(1)
opened, lock, real_open = [0], threading.Lock(), paramiko.transport.Transport.open_session
def counted(self, *args, **kwargs):
    with lock:
        opened[0] += 1
    return real_open(self, *args, **kwargs)
paramiko.transport.Transport.open_session = counted
def said():
    u = resource.getrusage(resource.RUSAGE_SELF)
    open(out, "w").write(f"{u.ru_utime + u.ru_stime} {opened[0]}")
atexit.register(said)
sys.argv[0] = "fsbench"
from fsbench.__main__ import run
run()
"""


#: --collector: a `command` collector on every host of each case, five lines a second (as `juicefs stats` prints
#: one a second, with more lines to time)
COLLECTOR = """collectors:
  ticks: {kind: command, command: 'while :; do date +%s.%N; sleep 0.2; done'}
"""


def scenario(folder: Path, shared: Path, hosts: int, rounds: int, collector: bool = False) -> Path:
    """fio's write on every client (fio --client) and mdtest with one rank per client (mpirun, a hostfile)."""
    path = folder / "host-scale.yaml"
    path.write_text(f"""\
name: host-scale
settings: {{repetitions: {rounds}}}
{COLLECTOR if collector else ""}targets:
  shared:
    description: one tree every lab host sees (the lab's folder), as an NFS or parallel file system would be
    path: {shared}
    hosts: [clients]
    setup: ["mkdir -p ${{target.path}}"]
    teardown: ["rm -rf ${{target.path}}"]
workloads:
  fio-write: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m, ioengine: psync}}}}
  mdtest: {{tool: mdtest, options: {{tasks: {hosts}, ppn: 1, I: 4, z: 1, b: 2, u: true}}}}
""")
    return path


def run_once(lab, folder: Path, hosts: int, rounds: int, relay: dict[str, str] | None = None,
             collector: bool = False) -> dict:
    """One `fsbench run`; relay: the ssh-agent's variables, to reach the clients through relays (ssh-relay);
    collector: with a collector on every host (COLLECTOR)."""
    names = [f"client{i}" for i in range(1, hosts + 1)]
    inventory = lab.write_inventory(folder / "inventory.yaml", hosts=names, transport="ssh-relay" if relay else None)
    sc = scenario(folder, lab.root / f"shared-{hosts}", hosts, rounds, collector)
    own = folder / "fsbench-cpu"
    argv = [sys.executable, "-c", SELF_CPU, str(own), "run", str(sc), "--inventory", str(inventory), "-o",
            str(folder / "out"), "--no-report", "--progress", "none"]
    start, cpu = time.monotonic(), _children_cpu()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, **(relay or {}), "PYTHONPATH": _pythonpath()},
                          timeout=1800, check=False)
    wall, cpu = time.monotonic() - start, _children_cpu() - cpu
    said = own.read_text().split() if own.exists() else []
    fsbench_cpu = float(said[0]) if said else float("nan")
    channels = int(said[1]) if len(said) > 1 else 0
    if proc.returncode != 0:
        raise SystemExit(f"fsbench run on {hosts} hosts failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    run = Path(proc.stdout.splitlines()[0])
    with (run / "cases.csv").open() as fh:
        cases = list(csv.DictReader(fh))
    phases: dict[str, dict[str, list[float]]] = {}
    for c in cases:
        tool = c["tool"]
        steps = run / "raw" / c["case_id"] / "phases.json"  # absent from a checkout older than issue 35
        for step, s in (json.loads(steps.read_text()) if steps.exists() else {}).items():
            if step != "tool":
                phases.setdefault(tool, {}).setdefault(step, []).append(s)
    per_tool = {tool: statistics.median(float(c["duration_s"]) - float(c["tool_wall_s"])
                                        for c in cases if c["tool"] == tool) for tool in ("fio", "mdtest")}
    tool_s = {tool: statistics.median(float(c["tool_wall_s"]) for c in cases if c["tool"] == tool)
              for tool in ("fio", "mdtest")}
    in_cases = sum(float(c["duration_s"]) for c in cases)
    return {"hosts": hosts, "wall": wall, "outside_cases": wall - in_cases, "overhead": per_tool, "tool": tool_s,
            "phases": {t: {k: statistics.median(v) for k, v in p.items()} for t, p in phases.items()},
            "cases": len(cases), "controller_cpu": cpu, "fsbench_cpu": fsbench_cpu,
            "channels": channels}


def lose_one(lab, folder: Path, hosts: int) -> dict:
    """A client lost mid-case at `hosts` clients: its sshd killed 2 s into a 5 s fio case on all of them and back
    a second later (a host that reboots). That case must fail naming it, the next case run, `--resume` redo it."""
    names = [f"client{i}" for i in range(1, hosts + 1)]
    lost = names[len(names) // 2]
    inventory = lab.write_inventory(folder / "inventory.yaml", hosts=names)
    sc = folder / "lose-one.yaml"
    sc.write_text(f"""\
name: lose-one
targets:
  shared: {{path: {lab.root}/shared-lose-{hosts}, hosts: [clients], setup: ["mkdir -p ${{target.path}}"],
           teardown: ["rm -rf ${{target.path}}"]}}
workloads:
  fio-long: {{tool: fio, options: {{rw: write, bs: 64k, size: 4m, ioengine: psync, time_based: true, runtime: 5}}}}
  fio-write: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m, ioengine: psync}}}}
""")
    out = folder / "out"
    crashed: list[float] = []

    def crash() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not list(out.glob(f"*/raw/shared__fio-long__r1/{lost}/server-command")):
            time.sleep(0.05)
        time.sleep(2.0)
        lab.host(lost).crash()
        crashed.append(time.monotonic())
        time.sleep(1.0)
        lab.restart(lost)

    argv = [sys.executable, "-m", "fsbench", "run", str(sc), "--inventory", str(inventory), "--no-report",
            "--progress", "none"]
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    killer = threading.Thread(target=crash, daemon=True)
    killer.start()
    start = time.monotonic()
    proc = subprocess.run([*argv, "-o", str(out)], capture_output=True, text=True, cwd=REPO, env=env, timeout=1800,
                          check=False)
    first = time.monotonic() - start
    killer.join(timeout=60)
    run = Path(proc.stdout.splitlines()[0])
    with (run / "cases.csv").open() as fh:
        before = {c["workload"]: (c["status"], c["reason"]) for c in csv.DictReader(fh)}
    start = time.monotonic()
    resumed = subprocess.run([*argv, "--resume", str(run)], capture_output=True, text=True, cwd=REPO, env=env,
                             timeout=1800, check=False)
    again = time.monotonic() - start
    with (run / "cases.csv").open() as fh:
        after = {c["workload"]: c["status"] for c in csv.DictReader(fh)}
    status, reason = before.get("fio-long", ("missing", ""))
    return {"hosts": hosts, "lost": lost, "crashed": bool(crashed), "exit": proc.returncode, "run_s": first,
            "failed_naming_it": status == "failed" and reason.startswith(f"{lost} lost while the case ran"),
            "others_named": [h for h in names if h != lost and f"{h} lost" in reason],
            "next_case": before.get("fio-write", ("missing", ""))[0], "resume_exit": resumed.returncode,
            "resume_s": again, "after_resume": after, "reason": reason}


def _pythonpath() -> str:
    """This checkout first, then the caller's own PYTHONPATH (a profiling hook's folder, say)."""
    return os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)


def _children_cpu() -> float:
    """CPU seconds (user + system) of the ended children: the run's controller side, fsbench and the launchers
    it ran here (fio --client, mpirun and its ssh), not the hosts' sshd nor their tools."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="1,4,16,32", help="host counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=2, help="repetitions of each case")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    ap.add_argument("--lose-one", action="store_true",
                    help="then, at the largest count, lose a client mid-case and resume (failures at scale)")
    ap.add_argument("--keep", type=Path, help="copy each host count's run folder here (n<hosts>/), for a profile")
    ap.add_argument("--relay", action="store_true",
                    help="each count twice: direct (ssh) and through relays (ssh-relay, with an ssh-agent of its own)")
    ap.add_argument("--relay-only", action="store_true", help="each count through relays only")
    ap.add_argument("--collector", action="store_true", help="a `command` collector on every host of each case")
    args = ap.parse_args()
    counts = [int(x) for x in args.hosts.split(",")]
    for tool in ("/usr/sbin/sshd", "fio", "mpirun", "mdtest"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed")
    results = []
    with tempfile.TemporaryDirectory(prefix="fsbench-hostscale-", dir="/tmp") as tmp:
        began = time.monotonic()
        lab = start_multihost(Path(tmp) / "lab", clients_layout(max(counts)), first=FIRST)
        started = time.monotonic() - began
        args.relay = args.relay or args.relay_only
        agent = ssh_agent(lab.client_key) if args.relay else contextlib.nullcontext({})
        kinds = ("ssh-relay",) if args.relay_only else ("ssh", "ssh-relay") if args.relay else ("ssh",)
        try:
            with agent as agent_env:
                for n, how in [(n, how) for n in counts for how in kinds]:
                    folder = Path(tmp) / f"n{n}-{how}"
                    folder.mkdir()
                    results.append(run_once(lab, folder, n, args.rounds, agent_env if how == "ssh-relay" else None,
                                            args.collector))
                    results[-1]["transport"] = how
                    if args.keep:
                        shutil.copytree(folder / "out", args.keep / f"n{n}-{how}", symlinks=True)
                    load = os.getloadavg()[0]
                    r = results[-1]
                    print(f"{n:>3} hosts, {how}: run {r['wall']:.1f} s, outside the cases {r['outside_cases']:.1f} s; "
                          f"per case outside the tool fio {r['overhead']['fio']:.2f} s (tool {r['tool']['fio']:.2f}), "
                          f"mdtest "
                          f"{r['overhead']['mdtest']:.2f} s (tool {r['tool']['mdtest']:.2f}); controller CPU "
                          f"{r['controller_cpu']:.1f} s, fsbench's own {r['fsbench_cpu']:.2f} s; SSH channels "
                          f"{r['channels']} ({r['channels'] / n:.1f} a host); load {load:.1f}", flush=True)
                if args.lose_one:
                    folder = Path(tmp) / "lose-one"
                    folder.mkdir()
                    lost = lose_one(lab, folder, max(counts))
                    print(f"{lost['hosts']} hosts, {lost['lost']} lost mid-case: run {lost['run_s']:.1f} s (exit "
                          f"{lost['exit']}), that case failed naming it: {lost['failed_naming_it']}, others named: "
                          f"{lost['others_named'] or 'none'}, the next case {lost['next_case']}; "
                          f"--resume {lost['resume_s']:.1f} s (exit {lost['resume_exit']}): {lost['after_resume']}\n"
                          f"  reason: {lost['reason']}", flush=True)
        finally:
            began = time.monotonic()
            lab.stop()
            stopped = time.monotonic() - began
            left = lab.leftovers()
    print(f"lab of {max(counts)} hosts: started in {started:.1f} s, stopped in {stopped:.1f} s, "
          f"left: {left or 'nothing'}")
    steps = sorted({k for r in results for p in r["phases"].values() for k in p if k != CPU})
    for tool in ("fio", "mdtest"):
        print(f"\n{tool}: fsbench's steps per case (median s)")
        print(f"{'step':<28}" + "".join(f"{str(r['hosts']) + ('r' if r['transport'] != 'ssh' else ''):>8}"
                                        for r in results))
        for step in steps:
            print(f"{step:<28}" + "".join(f"{r['phases'].get(tool, {}).get(step, 0):>8.3f}" for r in results))
        print(f"{'total outside the tool':<28}" + "".join(f"{r['overhead'][tool]:>8.3f}" for r in results))
        print(f"{'fsbench CPU (s of a core)':<28}" + "".join(f"{r['phases'].get(tool, {}).get(CPU, float('nan')):>8.3f}"
                                                            for r in results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
