"""Benchmark: the controller's CPU per host for one step of a case, direct SSH against relays (issue 35).

A step of a case is one command on every host at once (fsbench.transport.group.run_on_group, as the runner's
fan-outs do). This runs `true` --steps times on H hosts of the namespaced lab (tests/mhlab.py, 127.0.28.180
on), through the `ssh` transport (a channel per host and command) and through `ssh-relay` (about sqrt(H)
relays, a frame per host and command on each relay's one channel), alternated round by round, and reports the
controller's CPU (this process, every thread) per host and step. Through relays it is measured twice: as
run_on_group sends a step (every host's command started from one thread and waited for together,
fsbench.transport.relay_steps: `ssh-relay`), and as the runner's steps did before session 27, a thread of
`each` a host (`ssh-relay/threads`). The relays' own CPU is theirs: on a cluster it
is spent on the relay hosts, not the controller.

    python bench/relay_cost.py [--hosts 4,16] [--steps 20] [--rounds 5]

Needs root (the lab), /usr/sbin/sshd, ssh and ssh-agent.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsbench.core.at_once import each  # noqa: E402 - the repository's root first
from fsbench.core.inventory import load_inventory  # noqa: E402
from fsbench.transport.group import run_on_group  # noqa: E402
from fsbench.transport.registry import TRANSPORTS  # noqa: E402
from tests.mhlab import clients_layout, ssh_agent, start_multihost  # noqa: E402

FIRST = 180  # 127.0.28.180 on: no other lab of the suite uses these


class Host:
    def __init__(self, name: str):
        self.name = name


def transports(lab, folder: Path, hosts: int, how: str) -> dict:
    inv = lab.write_inventory(folder / f"inventory-{how}.yaml", hosts=[f"client{i}" for i in range(1, hosts + 1)],
                              transport=how)
    specs = load_inventory(inv)
    made = dict(TRANSPORTS.get(how).make_all([Host(n) for n in specs], specs))
    for t in made.values():
        t.mark({"FSBENCH_RUN": "relay-cost"})
    return made


def per_host_step_ms(made: dict, steps: int, threads: bool) -> tuple[float, float]:
    """The process's CPU and the wall time (ms) per host and step of `true` on every host at once (threads: a
    thread of `each` a host, as the runner's steps did before session 27)."""
    start, wall = time.process_time(), time.monotonic()
    for _ in range(steps):
        if threads:
            results = each(list(made.values()), lambda t: t.run(["true"]))
            bad = [r for r in results if not r.ok]
        else:
            bad = list(run_on_group(made, ["true"], max_workers=64).failed().values())
        if bad:
            raise SystemExit(f"`true` failed: {bad}")
    per = steps * len(made)
    return (time.process_time() - start) / per * 1000, (time.monotonic() - wall) / steps * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="4,16")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    counts = [int(x) for x in args.hosts.split(",")]
    loads = [os.getloadavg()[0]]
    got: dict[tuple[int, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="fsbench-relaycost-", dir="/tmp") as tmp:
        lab = start_multihost(Path(tmp) / "lab", clients_layout(max(counts)), first=FIRST)
        try:
            with ssh_agent(lab.client_key) as env:
                os.environ.update(env)
                for n in counts:
                    ways = {how: transports(lab, Path(tmp), n, how) for how in ("ssh", "ssh-relay")}
                    try:
                        for made in ways.values():
                            run_on_group(made, ["true"], max_workers=64).raise_if_failed("the logins")
                        for _ in range(args.rounds):
                            for how, made in ways.items():
                                got.setdefault((n, how), []).append(per_host_step_ms(made, args.steps, False))
                                if how == "ssh-relay":
                                    got.setdefault((n, "ssh-relay/threads"), []).append(
                                        per_host_step_ms(made, args.steps, True))
                            loads.append(os.getloadavg()[0])
                    finally:
                        for made in ways.values():
                            for t in made.values():
                                t.close()
        finally:
            lab.stop()
    print(f"load average {min(loads):.1f} to {max(loads):.1f}; {args.steps} steps a round, {args.rounds} rounds")
    for (n, how), values in got.items():
        cpu, wall = [v[0] for v in values], statistics.median(v[1] for v in values)
        print(f"{n:>4} hosts, {how:<17}: median {statistics.median(cpu):.3f} ms of the controller's CPU per host "
              f"and step ({', '.join(f'{v:.2f}' for v in cpu)}); a step takes {wall:.0f} ms")


if __name__ == "__main__":
    main()
