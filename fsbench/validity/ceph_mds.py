"""CephFS's metadata servers as a backend: the requests of each kind the MDSs of a target's file system served,
from their own perf counters.

`ceph tell mds.* perf dump mds_server` prints, per MDS, `handle_client_request` (every client request) and a
latency counter per request kind, `req_<kind>_latency`, whose `avgcount` is how many it served (create,
mkdir, unlink, rmdir, rename, getattr, lookup, open, readdir...: Ceph 15 and later). fsbench reads them
before and after the tool on the MDSs that serve the target's file system (named in `ceph fs dump`), so
another file system's MDS does not count. They become request counts of the operations `mds_<kind>` (no
bytes): what the file system's server did while mdtest timed its phases (fsbench.validity.engine judges the
phases by them, as it does JuiceFS's by its client's count).

A client that holds the capabilities of what it made answers stats and opens of it itself (ceph-fuse right
after a creation: 0 getattr requests for 200 stats); a creation, removal or rename always asks the MDS.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Callable

from fsbench.core.shell import sh
from fsbench.validity import ceph_asok as asok
from fsbench.validity.counters import OpCount, Snapshot

#: the operations of the MDS's requests: `mds_` and Ceph's request kind; `mds_requests` counts every kind
MDS_PREFIX = "mds_"
ALL_REQUESTS = MDS_PREFIX + "requests"
#: marks the sections of the scope command's output
SECTION = "#fsbench-mds "
_MDS_LINE = re.compile(r"^mds\.([^:\s]+):\s*(\{.*)$")
_KIND = re.compile(r"^req_([a-z]+)_latency$")


def perf_argv(ceph: list[str]) -> list[str]:
    """The command printing every MDS's request counters, one `mds.NAME: {json}` line each."""
    return [*ceph, "tell", "mds.*", "perf", "dump", "mds_server", "--format", "json"]


def scope_argv(ceph: list[str], fs: str, ceph_conf: list[str] | None = None) -> list[str]:
    """One command printing the file systems' MDS maps (`fs dump`), the MDSs' counters and, with `ceph_conf`,
    their admin sockets on this host (fsbench.validity.ceph_asok), each section after a SECTION line; a bounded
    try, as for the OSDs (fsbench.validity.ceph.scope_argv)."""
    lines = [f"# which MDSs serve CephFS {fs or '(default)'}", "set -e",
             f"echo '{SECTION}fsdump'", shlex.join([*ceph, "fs", "dump", "--format", "json"]),
             *asok.perf_lines(SECTION, perf_argv(ceph), ceph_conf, "mds")]
    return sh("\n".join(lines))


def _sections(text: str) -> dict[str, str]:
    return asok.sections(text, SECTION)


def serving_mds(text: str, fs: str) -> set[str] | None:
    """The names of the MDSs in the MDS map of `fs` ("" = the default file system) in `ceph fs dump` JSON; None
    when the text does not say (not JSON, no such file system, no MDS up)."""
    try:
        doc = json.loads(text)
        systems = doc["filesystems"]
        default = doc.get("default_fscid")
        chosen = [f for f in systems if f["mdsmap"]["fs_name"] == fs] if fs else \
            [f for f in systems if f.get("id") == default] or systems[:1]
        names = {str(i["name"]) for f in chosen for i in f["mdsmap"]["info"].values()
                 if str(i.get("state", "")).startswith("up:")}
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return names or None


def parse_perf(text: str, names: set[str] | None = None, now: float | None = None) -> Snapshot | None:
    """A Snapshot of the requests the MDSs (those in `names`, else all) served, per kind, in `ceph tell mds.*
    perf dump mds_server` output; None when it holds none of them, or not every named one answered (a
    failover mid-case: another daemon's counters would not subtract)."""
    kinds: dict[str, int] = {}
    answered: set[str] = set()
    for line in text.splitlines():
        m = _MDS_LINE.match(line.strip())
        if not m or (names is not None and m.group(1) not in names):
            continue
        try:
            server = json.loads(m.group(2)).get("mds_server", {})
        except ValueError:
            continue
        if not isinstance(server, dict) or "handle_client_request" not in server:
            continue
        answered.add(m.group(1))
        kinds[ALL_REQUESTS] = kinds.get(ALL_REQUESTS, 0) + int(server["handle_client_request"])
        for key, value in server.items():
            k = _KIND.match(key)
            if k and isinstance(value, dict):
                op = MDS_PREFIX + k.group(1)
                kinds[op] = kinds.get(op, 0) + int(value.get("avgcount", 0))
    if not answered or (names is not None and answered != names):
        return None
    return Snapshot(time.time() if now is None else now, {op: OpCount(n) for op, n in kinds.items()})


#: the admin-socket command that prints what `ceph tell mds.NAME perf dump mds_server` does
PERF_DUMP = {"prefix": "perf dump", "logger": "mds_server"}


def scoped_fast(fs: str) -> Callable[[str], list[str] | None]:
    """From the scope command's output, the admin-socket reader of the file system's MDSs, where each has its
    socket on this host (else None: `ceph tell` stays)."""
    def fast(text: str) -> list[str] | None:
        parts = _sections(text)
        names = serving_mds(parts.get("fsdump", ""), fs)
        return asok.reader_for(PERF_DUMP, {f"mds.{n}" for n in names}, parts.get(asok.SECTION, "")) if names else None
    return fast


def scoped_parser(fs: str) -> Callable[[str], Callable[[str], Snapshot | None] | None]:
    """From the scope command's output, the perf-dump parser limited to the file system's MDSs."""
    def scope(text: str) -> Callable[[str], Snapshot | None] | None:
        parts = _sections(text)
        names = serving_mds(parts.get("fsdump", ""), fs)
        if names is None or parse_perf(parts.get("perf", ""), names) is None:
            return None
        return lambda out: parse_perf(out, names)
    return scope
