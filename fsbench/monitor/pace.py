"""How often each host of a case is sampled: the scenario's interval, unless the case's hosts are so many that
their samples together would load the controller (docs/multihost.md, "Monitoring across hosts")."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.monitor.script import FIRST_INTERVAL_S

#: samples a second the controller takes from all the hosts of a case together, at most. Each costs it about
#: 0.2 ms of CPU (its SSH packet and wake-up, its share of the parse at the case's end), and they all go
#: through one process: 400 a second is under a tenth of a core. A case on more hosts samples each host less
#: often: its dense start from 40 hosts on, its interval too from 400 hosts on (at an interval of 1 s).
#: Without this, a case's first second on 1,000 hosts would send the controller 10,000 samples.
CONTROLLER_SAMPLES_PER_S = 400


@dataclass(frozen=True)
class Pace:
    """How often each host of a case is sampled: the scenario's interval, unless the hosts are too many."""

    interval_s: float
    first_interval_s: float


def pace(interval_s: float, hosts: int, budget: float = CONTROLLER_SAMPLES_PER_S) -> Pace:
    """The sampling of each of `hosts` hosts, so that together they send at most `budget` samples a second."""
    spread = max(0, hosts) / budget  # the seconds between one host's samples at the budget
    every = max(interval_s, spread)
    return Pace(every, min(every, max(FIRST_INTERVAL_S, spread)))


def slower_note(interval_s: float, asked_s: float, hosts: int) -> str:
    """What a case's reader is told when its hosts were sampled every interval_s instead of asked_s."""
    return (f"monitor: a sample every {interval_s:g} s on each of the case's {hosts} hosts, not every {asked_s:g} s "
            f"as the scenario asks: fsbench takes at most {CONTROLLER_SAMPLES_PER_S} samples a second from a case's "
            "hosts together (the figures are the same means over the case; a peak shorter than the interval may be "
            "missed)")
