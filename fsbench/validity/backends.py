"""Backend counters a target kind declares (JuiceFS's client metrics, Ceph's OSD counters): the command
that prints them on the case's host and the parser that makes a Snapshot of its output."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError
from fsbench.core.shell import render
from fsbench.validity import engine_server
from fsbench.validity.counters import Snapshot
from fsbench.validity.watch import Source


@dataclass(frozen=True)
class Counters:
    """One backend's counters: a name (the rows' job), the command printing them, its parser.

    `per_host`: each host of the case has its own (a JuiceFS client per mount), else the case's first
    host reads them for all (a cluster's). `scope_argv`, when given, runs once per case before the tool
    and `scope` turns its output into the parser (which OSDs serve the target's pools)."""

    name: str
    argv: list[str]
    parse: Callable[[str], Snapshot | None]
    per_host: bool = False
    scope_argv: list[str] | None = None
    scope: Callable[[str], Callable[[str], Snapshot | None] | None] | None = None
    #: from the scope's output, a faster command printing the same counters (a daemon's admin socket on this
    #: host: fsbench.validity.ceph_asok), or None to keep `argv`
    fast: Callable[[str], list[str] | None] | None = None
    what: str = ""
    #: the command's environment (a password), and the source's role (watch.Source.role: "engine")
    env: dict[str, str] = field(default_factory=dict)
    role: str = ""


def engine_counters(name: str, meta: str, values: dict[str, str]) -> list[Counters]:
    """The metadata engine's own count of what it served (fsbench.validity.engine_server) for a JuiceFS meta URL
    template: read once from the case's first host, its password in the environment; none for an engine
    without a reader (SQLite...) or a URL whose placeholders have no value yet (a plan)."""
    try:
        url = render(meta, values, quote=False)
    except (KeyError, ValueError):
        return []
    engine = engine_server.counter_for(url)
    return [Counters(name, engine.argv, engine.parse, what=engine.what, env=engine.env, role="engine")] \
        if engine is not None else []


@runtime_checkable
class CountersKind(Protocol):
    """A target kind whose backend fsbench can read: `counters(target, values)` of one target."""

    def counters(self, target: object, values: dict[str, str]) -> list[Counters]:
        """The target's backend counters, with the host's run-time placeholders filled."""
        ...


#: how long a scope read for one case serves the next cases of the run (seconds): which OSDs and MDSs serve a
#: target changes only when the cluster moves placement groups or fails over an MDS, and a counter read that
#: no longer matches the scope (an MDS that does not answer) leaves that case's backend out
SCOPE_REUSE_S = 300.0


@dataclass
class ScopeCache:
    """The scopes a run has read: (host, scope command) -> (when, its output). One per run (the runner's):
    each case on the same target and host reuses a recent one instead of asking the monitors again (1 s a case
    on the lab's Ceph), and still records it in its own raw folder."""

    seen: dict[tuple[str, tuple[str, ...]], tuple[float, str]] = field(default_factory=dict)

    def get(self, host: str, argv: list[str], now: float) -> str | None:
        hit = self.seen.get((host, tuple(argv)))
        return hit[1] if hit is not None and now - hit[0] < SCOPE_REUSE_S else None

    def put(self, host: str, argv: list[str], now: float, text: str) -> None:
        self.seen[(host, tuple(argv))] = (now, text)


def kind_sources(plugins: tuple[object, ...], target: object, values: dict[str, str],
                 hosts: list[tuple[str, Transport]], raw: Path, notes: list[str],
                 scopes: ScopeCache | None = None) -> list[Source]:
    """The sources of the counters the case's plug-ins declare, per host where each has its own; a scope
    that cannot be read leaves that backend out, saying why in `notes`."""
    out: list[Source] = []
    for p in plugins:
        if not isinstance(p, CountersKind):
            continue
        for c in p.counters(target, values):
            parse, argv = c.parse, c.argv
            if c.scope_argv and c.scope:
                scoped = _scope(c, hosts[0], raw, notes, scopes)
                if scoped is None:
                    continue
                parse, text = scoped
                argv = (c.fast(text) if c.fast else None) or argv
            where = hosts if c.per_host else hosts[:1]
            for host, tr in where:
                name = f"{c.name}@{host}" if c.per_host and len(hosts) > 1 else c.name
                out.append(Source(name, host, c.what or " ".join(c.argv), tr, raw, argv=argv, parse=parse,
                                  env=c.env, role=c.role))
    return out


def _scope(c: Counters, host: tuple[str, Transport], raw: Path, notes: list[str],
           scopes: ScopeCache | None = None) -> tuple[Callable[[str], Snapshot | None], str] | None:
    """Run the counters' scope command once (or take the run's recent answer of it) and make their parser from
    it, with its output (None, with a note, if it fails). The output is kept in the case's raw folder either way."""
    out = raw / f"backend-{c.name}.scope.txt"
    raw.mkdir(parents=True, exist_ok=True)
    argv = c.scope_argv or []
    now = time.monotonic()
    cached = scopes.get(host[0], argv, now) if scopes is not None else None
    if cached is not None and c.scope and (parse := c.scope(cached)) is not None:
        out.write_text(cached)
        return parse, cached
    try:
        r = host[1].run(argv, timeout=60.0, stdout_path=out)
    except (FsbenchError, OSError) as exc:
        notes.append(f"backend {c.name}: could not tell what serves it ({exc})")
        return None
    text = out.read_text(errors="replace") if r.ok and out.exists() else ""
    parse = c.scope(text) if text and c.scope else None
    if parse is None:
        notes.append(f"backend {c.name}: could not tell what serves it (exit {r.exit_status}; see {out.name})")
        return None
    if scopes is not None:
        scopes.put(host[0], argv, now, text)
    return parse, text
