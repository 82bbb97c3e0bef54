"""What a backend served, as counters per operation, and the difference of two snapshots."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

#: operations whose bodies are object data read from the store (S3's; Ceph's OSDs: fsbench.validity.ceph)
READ_OPS = ("get_object", "rados_read")
#: operations whose bodies are object data written to the store
WRITE_OPS = ("put_object", "upload_part", "rados_write")
#: the operations after which written data is in the store: a multipart object exists once completed
DURABLE_OPS = WRITE_OPS + ("complete_multipart",)


@dataclass(frozen=True)
class OpCount:
    """One operation's totals: requests, body bytes in and out, when its last request ended."""

    requests: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    last_end: float = 0.0

    @property
    def bytes(self) -> int:
        """The body bytes it moved, either way (an operation carries data one way only)."""
        return self.bytes_in + self.bytes_out


@dataclass(frozen=True)
class Snapshot:
    """A backend's counters at one moment of its own clock (`now`, Unix seconds)."""

    now: float
    ops: dict[str, OpCount] = field(default_factory=dict)
    #: per operation, when its first request since the previous snapshot began: where uploads began
    first_since: dict[str, float] = field(default_factory=dict)

    def minus(self, before: "Snapshot") -> dict[str, OpCount]:
        """What moved between `before` and this snapshot, per operation that moved anything."""
        out: dict[str, OpCount] = {}
        for name, o in self.ops.items():
            b = before.ops.get(name, OpCount())
            d = OpCount(o.requests - b.requests, o.bytes_in - b.bytes_in, o.bytes_out - b.bytes_out,
                        o.last_end if o.last_end > b.last_end else 0.0)
            if d.requests or d.bytes:
                out[name] = d
        return out


def parse_stats(text: str) -> Snapshot | None:
    """fsbench-s3's GET /_fsbench/stats answer, or None when the text is not one (moto, an error page)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("ops"), dict) \
            or not isinstance(doc.get("now"), (int, float)):
        return None
    ops: dict[str, OpCount] = {}
    for name, o in doc["ops"].items():
        if isinstance(o, dict):
            ops[str(name)] = OpCount(int(o.get("requests") or 0), int(o.get("bytes_in") or 0),
                                     int(o.get("bytes_out") or 0), float(o.get("last_end") or 0.0))
    first = doc.get("first_since_stats")
    began = {str(k): float(v) for k, v in first.items() if isinstance(v, (int, float))} \
        if isinstance(first, dict) else {}
    return Snapshot(float(doc["now"]), ops, began)


def data_bytes(moved: dict[str, OpCount], ops: tuple[str, ...]) -> int:
    """The object bytes of the named operations."""
    return sum(moved[o].bytes for o in ops if o in moved)


def last_end(moved: dict[str, OpCount], ops: tuple[str, ...]) -> float:
    """When the last request of the named operations ended (0 when none did)."""
    return max((moved[o].last_end for o in ops if o in moved), default=0.0)
