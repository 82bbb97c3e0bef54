"""Snapshots of the backends' counters around a case's tool, and the rows and evidence they give."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError
from fsbench.validity.counters import (
    DURABLE_OPS,
    READ_OPS,
    WRITE_OPS,
    OpCount,
    Snapshot,
    data_bytes,
    last_end,
    parse_stats,
)
from fsbench.validity.engine_server import ENGINE_SERVED
from fsbench.validity.juicefs import META_PREFIX
from fsbench.validity.pagecache import HostCache
from fsbench.validity.settings import Thresholds

TOOL = "backend"
#: service kind -> the URL of its counters, from the target's placeholder values and the service's name.
#: fsbench-s3 answers; moto_server (the fallback where Go was missing) has no counters and gives none.
COUNTER_URLS: dict[str, Callable[[dict[str, str], str], str | None]] = {
    "s3": lambda values, name: (values.get(f"services.{name}.endpoint") or "").rstrip("/") + "/_fsbench/stats"
    if values.get(f"services.{name}.endpoint") else None,
}
#: seconds between two polls while waiting for the backend to go quiet
POLL_S = 0.2
#: Source.role values
ENGINE, METADATA = "engine", "metadata"


@dataclass
class Source:
    """One backend with counters: the service's name and host, the URL, where curl runs, where snapshots go;
    or, for a counter a target kind declares (fsbench.validity.backends), the command that prints them and
    its parser."""

    service: str
    host: str
    url: str
    transport: Transport
    raw: Path
    argv: list[str] | None = None
    parse: Callable[[str], Snapshot | None] = parse_stats
    #: the command's environment (a password: never in argv)
    env: dict[str, str] = field(default_factory=dict)
    #: "engine": the metadata engine's own count of what it served (fsbench.validity.engine_server), a second
    #: witness beside the client's; it moves no object bytes and is no evidence of them. "metadata": a server's
    #: count of the metadata requests it served (CephFS's MDSs: fsbench.validity.ceph_mds), evidence of the
    #: tool's window only (not polled while the case settles) and of no bytes
    role: str = ""

    @property
    def moves_data(self) -> bool:
        """Whether its counters count object bytes (then read and write rows are made of them)."""
        return self.role not in (ENGINE, METADATA)


@dataclass(frozen=True)
class Evidence:
    """What the backends served around the tool (object bytes), on their own clock."""

    services: tuple[str, ...]
    read_tool: int
    write_tool: int
    read_after: int
    write_after: int
    tool_s: float
    #: from the first upload the backend saw after the tool started to the end of the last (a multipart
    #: completion included), tool and after windows: the least time the data took to the store; None: no write
    durable_s: float | None
    #: how long after the tool fsbench watched, and whether the backend went quiet in that time
    after_s: float
    quiet: bool
    #: the tool host's memory and page cache (fsbench.validity.pagecache), for checks where no backend counts
    host: HostCache | None = None
    #: requests per operation while the tool ran, over the backends that are the evidence (the NameNode's
    #: namenode_create...: fsbench.validity.namenode)
    requests: dict[str, int] = field(default_factory=dict)
    #: the evidence is a client's own count of what it asked its store (JuiceFS's `.stats`), not the store's:
    #: it does not see a tool that talks to the store itself (juicefs objbench)
    from_client: bool = False
    #: the metadata engine's own count of the requests it served over the tool and after windows, and the
    #: client's count of those it asked (its meta_* requests) over the same windows; None: no engine counted
    engine_served: int | None = None
    engine_asked: int = 0
    engine_what: str = ""

    @classmethod
    def host_only(cls, host: HostCache | None) -> "Evidence":
        """Evidence of a case whose backends count nothing: only the tool host's page cache facts."""
        return cls((), 0, 0, 0, 0, 0.0, None, 0.0, True, host)


class BackendWatch:
    """Counters of a case's backends read just before the tool, just after it, and once they went quiet."""

    def __init__(self, sources: list[Source], limits: Thresholds):
        self.sources, self.limits = sources, limits
        self.snaps: dict[str, dict[str, Snapshot]] = {}  # service -> stage (start, end, settled) -> snapshot
        self.notes: list[str] = []  # why a backend gave no counters
        self.quiet = True
        self._end_clock = 0.0
        self.began: dict[str, float] = {}  # service -> when its first upload after the tool's start began

    def _read(self, src: Source, stage: str) -> Snapshot | None:
        out = src.raw / f"backend-{src.service}.{stage}.{'txt' if src.argv else 'json'}"
        src.raw.mkdir(parents=True, exist_ok=True)
        try:
            argv = src.argv or ["curl", "-s", "--max-time", "5", src.url]
            r = src.transport.run(argv, timeout=30.0 if src.argv else 10.0, stdout_path=out, env=src.env or None)
        except (FsbenchError, OSError) as exc:
            self.notes.append(f"backend {src.service}: its counters could not be read ({exc})")
            return None
        snap = src.parse(out.read_text(errors="replace")) if r.ok and out.exists() else None
        if snap is None and stage == "start":
            self.notes.append(f"backend {src.service}: no counters from {src.url}" if src.argv else
                              f"backend {src.service}: no counters at {src.url} (moto_server has none; "
                              f"fsbench-s3 has them)")
        return snap

    def _snap(self, stage: str) -> None:
        for src in list(self.sources):
            if stage == "settled" and src.role == METADATA:
                continue  # the tool's window is its evidence: a read per poll would only slow the wait
            snap = self._read(src, stage)
            if snap is None:
                self.sources.remove(src)  # without a start or end, its window means nothing
                continue
            self.snaps.setdefault(src.service, {})[stage] = snap
            starts = [snap.first_since[o] for o in WRITE_OPS if o in snap.first_since]
            if stage != "start" and starts and src.service not in self.began:
                self.began[src.service] = min(starts)

    def tool_start(self) -> None:
        """Just before the tool starts."""
        self._snap("start")

    def tool_end(self) -> None:
        """Just after the tool ended."""
        self._snap("end")
        self._end_clock = time.monotonic()

    def settle(self) -> None:
        """Wait (up to `settle`) until no backend's counters moved for `quiet`: what a client still sends
        after the tool closed its files (a write-back upload) is counted in the `after` window. The quiet counts
        from the end snapshot (counters only grow: unchanged at a later read, nothing moved between), proven by
        a read that begins once it is reached; counted from this call, each case waited 0.66 s for 0.5 s."""
        if not self.sources:
            return
        last, still, deadline = self._totals("end"), self._end_clock, self._end_clock + self.limits.settle_s
        while True:  # sleep until the quiet would be reached (or the next poll, or the deadline), then read
            now = time.monotonic()
            time.sleep(max(0.0, min(POLL_S, still + self.limits.quiet_s - now, deadline - now)))
            read_at = time.monotonic()
            self._snap("settled")
            totals = self._totals("settled")
            if totals != last:
                last, still = totals, time.monotonic()
            elif read_at - still >= self.limits.quiet_s:
                self.quiet = True
                return
            if time.monotonic() >= deadline:
                self.quiet = False
                return

    def _totals(self, stage: str) -> tuple:
        """What the quiet wait compares: the object requests and bytes. A client's metadata-engine requests
        (meta_*) never go still while it is mounted (its sessions' refresh, fsbench's own fault probe every
        `fault_interval`): counted, they held every case to the full `settle` (30 s a case)."""
        counted = {src.service for src in self.sources if src.moves_data}
        return tuple(sorted((s, k, o.requests, o.bytes) for s, st in self.snaps.items() if stage in st
                            and s in counted for k, o in st[stage].ops.items() if not k.startswith(META_PREFIX)))

    def _windows(self, service: str) -> tuple[dict[str, OpCount], dict[str, OpCount], Snapshot] | None:
        st = self.snaps.get(service, {})
        if "start" not in st or "end" not in st:
            return None
        settled = st.get("settled", st["end"])
        return st["end"].minus(st["start"]), settled.minus(st["end"]), settled

    def evidence(self) -> Evidence | None:
        """The case's evidence summed over its backends; None when none had counters."""
        parts = [(s.service, self._windows(s.service), bool(s.argv)) for s in self.sources if s.role != ENGINE]
        # a client's own counters (JuiceFS's) and its store's (fsbench-s3's) count the same bytes: the
        # store's, which also know when each upload ended, are the evidence; the client's where none
        got = [(name, w) for name, w, client in parts if w is not None and not client]
        from_client = not got
        got = got or [(name, w) for name, w, _ in parts if w is not None]
        if not got:
            return None
        durable = [d for d in (self._durable(name) for name, _ in got) if d is not None]
        return Evidence(
            services=tuple(n for n, _ in got),
            read_tool=sum(data_bytes(t, READ_OPS) for _, (t, _, _) in got),
            write_tool=sum(data_bytes(t, WRITE_OPS) for _, (t, _, _) in got),
            read_after=sum(data_bytes(a, READ_OPS) for _, (_, a, _) in got),
            write_after=sum(data_bytes(a, WRITE_OPS) for _, (_, a, _) in got),
            tool_s=max(self.snaps[n]["end"].now - self.snaps[n]["start"].now for n, _ in got),
            durable_s=max(durable) if durable else None,
            after_s=max(s.now - self.snaps[n]["end"].now for n, (_, _, s) in got),
            quiet=self.quiet, from_client=from_client, requests=_requests([t for _, (t, _, _) in got]
                                                 + [_client_only(t) for name, (t, _, _), client in parts_with(parts)
                                                    if client and name not in dict(got)]),
            **self._engine_witness(parts))

    def _engine_witness(self, parts: list[tuple[str, tuple | None, bool]]) -> dict:
        """The engine's own count over the tool and after windows, beside the client's (Evidence's engine_*)."""
        served, what = 0, []
        for src in self.sources:
            w = self._windows(src.service) if src.role == ENGINE else None
            if w is not None:
                served += sum(window.get(ENGINE_SERVED, OpCount()).requests for window in (w[0], w[1]))
                what.append(src.url)
        if not what:
            return {}
        asked = 0
        for _, (tool, after, _snap), client in parts_with(parts):
            if client:
                asked += sum(o.requests for window in (tool, after) for op, o in window.items()
                             if op.startswith(META_PREFIX))
        return {"engine_served": served, "engine_asked": asked,
                "engine_what": ", ".join(what)}

    def rows(self) -> list[dict]:
        """Tidy rows of what each backend served: per S3 operation and per window (`tool`, `after`), the
        object data read and written, and the durable time of the writes."""
        out: list[dict] = []
        for src in self.sources:
            w = self._windows(src.service)
            if w is None:
                continue
            base = {"tool": TOOL, "host": src.host, "job": src.service, "stat": "value"}
            for window, moved in (("tool", w[0]), ("after", w[1])):
                for op, o in sorted(moved.items()):
                    out.append({**base, "operation": op, "metric": "ops", "value": float(o.requests),
                                "unit": "count", "window": window})
                    if op.startswith(META_PREFIX) or not src.moves_data:
                        continue  # a metadata request carries no object data
                    out.append({**base, "operation": op, "metric": "io_bytes", "value": float(o.bytes),
                                "unit": "B", "window": window})
                for op, ops in (("read", READ_OPS), ("write", WRITE_OPS)) if src.moves_data else ():
                    out.append({**base, "operation": op, "metric": "io_bytes", "value": float(data_bytes(moved, ops)),
                                "unit": "B", "window": window})
            durable = self._durable(src.service)
            if durable is not None:
                out.append({**base, "operation": "write", "metric": "runtime", "unit": "s", "window": "durable",
                            "value": round(durable, 6)})
        return out

    def _durable(self, service: str) -> float | None:
        """Seconds from the first upload to the end of the last (the backend's clock)."""
        w = self._windows(service)
        if w is None or service not in self.began:
            return None
        end = max(last_end(w[0], DURABLE_OPS), last_end(w[1], DURABLE_OPS))
        return max(0.0, end - self.began[service]) if end else None


def parts_with(parts: list[tuple[str, tuple | None, bool]]) -> list[tuple[str, tuple, bool]]:
    """The backends that gave both a start and an end."""
    return [(name, w, client) for name, w, client in parts if w is not None]


def _client_only(moved: dict[str, OpCount]) -> dict[str, OpCount]:
    """What a client's own counters alone know (its metadata-engine requests): the store's counters, when they
    are the evidence, count its object requests already."""
    return {op: o for op, o in moved.items() if op.startswith(META_PREFIX)}


def _requests(windows: Iterable[dict[str, OpCount]]) -> dict[str, int]:
    """Requests per operation, added up over the backends' windows."""
    out: dict[str, int] = {}
    for moved in windows:
        for op, o in moved.items():
            out[op] = out.get(op, 0) + o.requests
    return out


def sources(services: list[tuple[str, str, str]], values: dict[str, str], transport: Transport,
            raw: Path) -> list[Source]:
    """The backends with counters among a target's services ((name, kind, host) each), read from the
    case's host through `transport` (it reaches the services the target uses)."""
    out = []
    for name, kind, host in services:
        url_of = COUNTER_URLS.get(kind)
        url = url_of(values, name) if url_of else None
        if url:
            out.append(Source(name, host, url, transport, raw))
    return out
