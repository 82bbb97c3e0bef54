"""JuiceFS as a backend: what the client asked of its object store, from the mount's own `.stats` file.

`cat <mount>/.stats` (read-only, served by the client itself, JuiceFS 1.x) prints its Prometheus
metrics one per line, `name value`; the object store's are
`juicefs_object_request_data_bytes_GET|PUT` (object bytes) and
`juicefs_object_request_durations_histogram_seconds_GET|PUT_total` (requests). They become the S3
operations `get_object` and `put_object` of fsbench-s3's counters, so the same checks read them. Its
metadata-engine requests by method, `juicefs_meta_ops_total_<Method>` (Mkdir, Mknod, Unlink, Rmdir, Rename,
GetAttr, Lookup...), become the request counts of operations `meta_<Method>` (no bytes): what the client
asked of its metadata engine while a tool ran (fsbench.validity.engine judges mdtest's phases by them).
"""

from __future__ import annotations

import posixpath
import re
import time

from fsbench.validity.counters import OpCount, Snapshot

#: the metrics file every JuiceFS mount serves at its root
STATS_FILE = ".stats"
_LINE = re.compile(r"^juicefs_object_request_(data_bytes|durations_histogram_seconds)_([A-Z]+)(_total)?\s+(\S+)$")
#: JuiceFS's method -> (fsbench's S3 operation, whether its bytes flow out of the store)
METHODS = {"GET": ("get_object", True), "PUT": ("put_object", False)}
_META = re.compile(r"^juicefs_meta_ops_total_([A-Za-z]+)\s+(\S+)$")
#: the operations of the metadata-engine requests: `meta_` and JuiceFS's method name
META_PREFIX = "meta_"


def stats_argv(mount: str) -> list[str]:
    """The command that prints a mount's metrics (a plain read of its virtual file)."""
    return ["cat", posixpath.join(mount, STATS_FILE)]


def parse_stats(text: str, now: float | None = None) -> Snapshot | None:
    """A Snapshot of the object requests in a `.stats` text, or None when it is not one (not a JuiceFS mount)."""
    requests: dict[str, int] = {}
    moved: dict[str, int] = {}
    meta: dict[str, int] = {}
    seen = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("juicefs_"):
            seen = True
        mm = _META.match(line)
        if mm:
            try:
                meta[META_PREFIX + mm.group(1)] = int(float(mm.group(2)))
            except ValueError:
                pass
            continue
        m = _LINE.match(line)
        if not m or m.group(2) not in METHODS:
            continue
        try:
            value = int(float(m.group(4)))
        except ValueError:
            continue
        if m.group(1) == "data_bytes" and not m.group(3):
            moved[m.group(2)] = value
        elif m.group(1) == "durations_histogram_seconds" and m.group(3):
            requests[m.group(2)] = value
    if not seen:
        return None
    ops = {}
    for method, (op, out) in METHODS.items():
        n, b = requests.get(method, 0), moved.get(method, 0)
        ops[op] = OpCount(n, 0 if out else b, b if out else 0)
    ops.update({op: OpCount(n) for op, n in meta.items()})
    return Snapshot(time.time() if now is None else now, ops)
