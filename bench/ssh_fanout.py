"""Benchmark: fan-out of `true` to 32 SSH hosts (one real sshd on 127.0.0.2-127.0.0.33).

Targets (issue "Many hosts over SSH"):
  (a) the first fan-out, over fresh connections, with run_on_group takes at most 1.5 x what
      `pdsh -R ssh -w 127.0.0.[2-33] true` takes (pdsh also connects afresh every time);
  (b) later fan-outs over the open connections take less than 0.5 s.

    python bench/ssh_fanout.py [--hosts 32] [--rounds 5] [--workers 32]

Needs /usr/sbin/sshd and pdsh (`apt-get install -y pdsh openssh-server`).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fsbench.transport.group import run_on_group
from tests.sshlab import loopback_addresses, sshlab


def pdsh_once(lab, count: int) -> float:
    """One pdsh fan-out; ssh reads its options from PDSH_SSH_ARGS (no ~/.ssh/config: -F /dev/null)."""
    ssh_args = (f"-F /dev/null -p {lab.port} -i {lab.client_key} -o UserKnownHostsFile={lab.known_hosts} "
                "-o StrictHostKeyChecking=yes -o BatchMode=yes -o ControlMaster=no -l%u %h")
    env = {**os.environ, "PDSH_SSH_ARGS": ssh_args, "PDSH_RCMD_TYPE": "ssh"}
    last = lab.addresses[-1].rsplit(".", 1)[1]
    argv = ["pdsh", "-R", "ssh", "-f", str(count), "-l", lab.user, "-w", f"127.0.0.[2-{last}]", "true"]
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    took = time.monotonic() - start
    if proc.returncode != 0:  # stderr may hold login-shell noise (a ~/.bashrc that prints)
        raise SystemExit(f"pdsh failed ({proc.returncode}):\n{proc.stderr}")
    return took


def fresh_once(lab, workers: int) -> tuple[float, dict]:
    """One run_on_group fan-out that has to connect to every host first; returns the open transports."""
    transports = {a: lab.transport(a) for a in lab.addresses}
    start = time.monotonic()
    group = run_on_group(transports, ["true"], timeout=120, max_workers=workers)
    took = time.monotonic() - start
    group.raise_if_failed("true")
    return took, transports


def open_once(transports: dict, workers: int) -> float:
    start = time.monotonic()
    group = run_on_group(transports, ["true"], timeout=120, max_workers=workers)
    took = time.monotonic() - start
    group.raise_if_failed("true")
    return took


def _wait(check, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"expected {what}")
        time.sleep(0.05)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=32)
    args = ap.parse_args()
    if not shutil.which("pdsh"):
        raise SystemExit("pdsh is not installed: apt-get install -y pdsh")
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp, sshlab(Path(tmp), loopback_addresses(args.hosts)) as lab:
        pdsh_once(lab, args.hosts)  # warm-up: page cache, sshd's first re-exec
        pdsh_t, fresh_t, later_t = [], [], []
        for _ in range(args.rounds):  # interleaved, so background load hits both alike
            pdsh_t.append(pdsh_once(lab, args.hosts))
            logins = lab.accepted_logins()
            took, transports = fresh_once(lab, args.workers)
            fresh_t.append(took)
            # sshd's log proves every host was a new connection (sshd writes it asynchronously)
            _wait(lambda before=logins: lab.accepted_logins() - before == args.hosts, f"{args.hosts} new logins")
            later_t += [open_once(transports, args.workers) for _ in range(5)]
            for t in transports.values():
                t.close()
    p, f, later = statistics.median(pdsh_t), statistics.median(fresh_t), statistics.median(later_t)
    print(f"hosts {args.hosts}, workers {args.workers}, rounds {args.rounds} (medians; min-max)")
    print(f"pdsh -R ssh, fresh connections:      {p:.3f} s  ({min(pdsh_t):.3f}-{max(pdsh_t):.3f})")
    print(f"run_on_group, fresh connections:     {f:.3f} s  ({min(fresh_t):.3f}-{max(fresh_t):.3f})"
          f"  = {f / p:.2f} x pdsh  (target <= 1.5 x): {'ok' if f <= 1.5 * p else 'MISSED'}")
    print(f"run_on_group, open connections:      {later:.3f} s  ({min(later_t):.3f}-{max(later_t):.3f})"
          f"  (target < 0.5 s): {'ok' if later < 0.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
