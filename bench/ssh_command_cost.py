"""Benchmark: the controller's CPU per command over SSH (issue 35), one loopback sshd, one connection.

Runs `true` --commands times per round over one SSHTransport and reports the process's CPU (every thread:
paramiko's packets, the command's own thread) per command. With --timers each round is run twice,
alternated: once as fsbench runs it (one thread keeps every exec deadline, fsbench/transport/deadlines.py)
and once with a `threading.Timer` per command as before session 24, so the two are compared on the same
connection, at the same load.

    python bench/ssh_command_cost.py [--commands 200] [--rounds 8] [--timers]

Needs /usr/sbin/sshd (tests/sshlab.py starts it on 127.0.0.2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fsbench.transport.ssh_exec as ssh_exec  # noqa: E402 - the repository's root first
from tests.sshlab import loopback_addresses, sshlab  # noqa: E402


class TimerEach:
    """The exec watchdog as it was: a threading.Timer started and cancelled for every command."""

    def call_later(self, seconds: float, fn):
        timer = threading.Timer(seconds, fn)
        timer.daemon = True
        timer.start()
        return timer


def per_command_ms(transport, commands: int) -> float:
    """The process's CPU (ms) per `true` run over the transport."""
    start = time.process_time()
    for _ in range(commands):
        r = transport.run(["true"])
        if not r.ok:
            raise SystemExit(f"`true` failed over SSH: {r.describe()}")
    return (time.process_time() - start) / commands * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--timers", action="store_true", help="alternate with a threading.Timer per command")
    args = ap.parse_args()
    ways = {"one deadline thread": ssh_exec.DEADLINES, **({"a Timer per command": TimerEach()} if args.timers else {})}
    got: dict[str, list[float]] = {name: [] for name in ways}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="fsbench-sshcost-") as tmp, sshlab(Path(tmp), loopback_addresses(1)) as lab:
        transport = lab.transport(lab.addresses[0])
        try:
            transport.run(["true"])  # the login, outside the measurement
            for _ in range(args.rounds):
                for name, way in ways.items():
                    setattr(ssh_exec, "DEADLINES", way)  # noqa: B010 - a stand-in with the same call_later
                    got[name].append(per_command_ms(transport, args.commands))
                loads.append(os.getloadavg()[0])
        finally:
            setattr(ssh_exec, "DEADLINES", ways["one deadline thread"])  # noqa: B010
            transport.close()
    print(f"load average {min(loads):.1f} to {max(loads):.1f}; {args.commands} commands a round, {args.rounds} rounds")
    for name, values in got.items():
        print(f"{name:>20}: median {statistics.median(values):.3f} ms of CPU per command "
              f"({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
