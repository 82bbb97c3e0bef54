"""Per-process figures of the monitor's samples: the scopes a process counts in (its name, unless another run's;
the target's client), its CPU share over an interval, and memory peaks (sampled RSS, or the kernel's VmHWM when
reached while watched)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from fsbench.monitor.samples import Proc, Raw, Sample


@dataclass
class Owners:
    """Which processes of each watched name count: the run's own, all of them, or none."""

    #: names with at least one process of the run's (its marker, or a service's folder): only those count
    own_only: set[str] = field(default_factory=set)
    #: another target's names none of whose processes is this run's (another run's client): none count
    dropped: set[str] = field(default_factory=set)
    #: scope -> why its figures may include processes this run did not start (all of them counted)
    doubts: dict[str, str] = field(default_factory=dict)
    #: (pid, start) of the processes any scan found the run's (a later unreadable scan changes nothing)
    mine: set[tuple[int, int]] = field(default_factory=set)

    def counts(self, p: Proc) -> bool:
        """Whether p counts in its watched name's scope."""
        if p.name in self.dropped:
            return False
        return p.name not in self.own_only or (p.pid, p.start) in self.mine


def owners(raw: Raw, host: str, expected: Collection[str] | None = None) -> Owners:
    """Per watched name, whose processes count (the sampler's `m`/`n`/`w` lines; none checked: all count).

    A name the case does not expect (another target's client or service) with none of its processes this
    run's is another run's or another user's: left out. A name the case expects (its own, or one no
    target starts: an existing server) with none of them this run's counts them all, said so."""
    out = Owners()
    if raw.header.get("marker") != "1":
        return out  # a sampler without the run's marker cannot tell: every process of a name counts
    seen: dict[str, dict[tuple[int, int], bool | None]] = {}
    for s in raw.samples:
        for key, p in s.procs.items():
            if p.name in raw.watched:
                procs = seen.setdefault(p.name, {})
                procs[key] = _known(procs.get(key, None), p.own)
    client = raw.client.name if raw.client else None
    for name, procs in seen.items():
        out.mine |= {key for key, own in procs.items() if own}
        if any(procs.values()):
            out.own_only.add(name)
        elif expected is not None and name not in expected:
            out.dropped.add(name)
        else:
            unknown = sum(v is None for v in procs.values())
            scope = f"{name} (all)" if name == client else name
            out.doubts[scope] = (
                f"process {name!r}: {_count(len(procs))} of that name on {host}, none started by this run"
                + (f" ({unknown} with an environment fsbench could not read)" if unknown else "")
                + ": the figures may include other users' processes")
    return out


def _known(before: bool | None, now: bool | None) -> bool | None:
    """A process's marker over the scans: this run's when any scan said so, unknown until one read it."""
    if before or now:
        return True
    return False if False in (before, now) else None


def _count(n: int) -> str:
    return f"{n} process" + ("es" if n != 1 else "")


def scoping(raw: Raw, host: str, warnings: list[str], owned: Owners | None = None) -> Callable[[Proc], list[str]]:
    """The scopes a process counts in: its watched name's (when it counts there), and the client's when it
    is the client (the client rule, by command line, decides that scope alone)."""
    own = owned or Owners()
    client = raw.client
    if client is None:
        return lambda p: [p.name] if own.counts(p) else []
    everyone = False  # no pid ever matched the client's words: its name alone decides, said so
    named = [p for s in raw.samples for p in s.procs.values() if p.name == client.name]
    if named and not any(p.client for p in named):
        everyone = True
        warnings.append(f"no {client.name} process on {host} had {' '.join(client.words)} in its command line: "
                        f"the client's figures are those of every {client.name} process")
    watched_too = client.name in raw.watched

    def scopes(p: Proc) -> list[str]:
        if p.name != client.name:
            return [p.name] if own.counts(p) else []
        out = [f"{client.name} (all)"] if watched_too and own.counts(p) else []
        return out + [client.name] if p.client or everyone else out

    return scopes


def rss_by_name(s: Sample, scopes_of: Callable[[Proc], list[str]]) -> dict[str, float]:
    """scope -> the sum of the RSS of its processes in one sample."""
    out: dict[str, float] = {}
    for p in s.procs.values():
        if p.rss is not None:
            for name in scopes_of(p):
                out[name] = out.get(name, 0.0) + p.rss
    return out


def proc_cpu(prev: Sample, cur: Sample, clk_tck: int, scopes_of: Callable[[Proc], list[str]],
              t0: float) -> dict[str, tuple[float, float]]:
    """scope -> (CPU %, seconds it covers) for the interval prev..cur.

    A pid first seen now but born after the first sample (found late by a sparse pid scan) counts all its
    ticks here: they all fall in the monitored window, so the window's total stays the process's own."""
    continuing: set[str] = set()
    ticks: dict[str, int] = {}
    born: dict[str, float] = {}
    for key, p in cur.procs.items():
        q = prev.procs.get(key)
        if p.ticks is None:
            continue
        for name in scopes_of(p):
            if q is not None and q.ticks is not None:
                if p.ticks < q.ticks:
                    continue
                ticks[name] = ticks.get(name, 0) + p.ticks - q.ticks
                continuing.add(name)
            elif p.start / clk_tck >= prev.t - 1.0 / clk_tck:  # born in this interval: all its time is in it
                ticks[name] = ticks.get(name, 0) + p.ticks
                born[name] = min(born.get(name, cur.t), p.start / clk_tck)
            elif p.start / clk_tck >= t0 - 1.0 / clk_tck:  # born in the window, seen late: all its time is in it
                ticks[name] = ticks.get(name, 0) + p.ticks
                continuing.add(name)
            # else: older than prev yet unseen then (it just took the name by exec): no baseline
    out: dict[str, tuple[float, float]] = {}
    full = cur.t - prev.t
    for name, n in ticks.items():
        # only new pids: the name ran from the first birth on (a pid that ended meanwhile is lost either way)
        begin = prev.t if name in continuing or name not in born else min(max(prev.t, born[name]), cur.t)
        span = cur.t - begin
        if span >= full / 2:  # a few ticks over a sliver of an interval is noise, not a rate
            out[name] = (100.0 * n / clk_tck / span, span)
    return out


def hwm_peaks(raw: Raw, clk_tck: int, scopes_of: Callable[[Proc], list[str]]) -> dict[str, float]:
    """VmHWM of each pid whose peak was reached while monitored (born after the first sample, or grew)."""
    first: dict[tuple[int, int], int] = {}
    last: dict[tuple[int, int], tuple[list[str], int]] = {}
    for s in raw.samples:
        for key, p in s.procs.items():
            if p.hwm is not None:
                first.setdefault(key, p.hwm)
                last[key] = (scopes_of(p), p.hwm)
    t0 = raw.samples[0].t
    out: dict[str, float] = {}
    for key, (names, hwm) in last.items():
        if key[1] / clk_tck > t0 or hwm > first[key]:
            for name in names:
                out[name] = max(out.get(name, 0.0), float(hwm))
    return out
