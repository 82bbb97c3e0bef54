"""HDFS as a backend: what the NameNode itself counted, from its JMX servlet (NameNodeActivity), and the check
that NNBench's operations reached their store (the NameNode, or the S3 server behind S3A).

`GET http://<namenode>:<http port>/jmx?qry=Hadoop:service=NameNode,name=NameNodeActivity` answers JSON whose
one bean holds the NameNode's counters since it started: CreateFileOps (a file created), GetBlockLocations
(a file opened for reading), FilesRenamed, DeleteFileOps. They become the operations `namenode_create`,
`namenode_open`, `namenode_rename` and `namenode_delete` of a Snapshot (requests only: the NameNode moves no
file data). Its clock is the controller's at the read (the bean has none).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.validity.checks import Verdict, tool_sum
from fsbench.validity.counters import OpCount, Snapshot
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence, Source

BEAN = "Hadoop:service=NameNode,name=NameNodeActivity"
#: the bean's counter -> the Snapshot's operation
COUNTERS = {"CreateFileOps": "namenode_create", "GetBlockLocations": "namenode_open",
            "FilesRenamed": "namenode_rename", "DeleteFileOps": "namenode_delete"}
#: NNBench's operation -> (the NameNode operation each of its file operations makes at least once, its name)
NNBENCH = {"create_write": ("namenode_create", "CreateFileOps"), "open_read": ("namenode_open", "GetBlockLocations"),
           "rename": ("namenode_rename", "FilesRenamed"), "delete": ("namenode_delete", "DeleteFileOps")}
#: the parts of an NNBench operation it times as rows of their own (fsbench.tools.nnbench.parse.PARTS): each
#: shares its operation's verdict, the requests being the operation's
PARTS = {"create_write": ("create", "close"), "open_read": ("open", "read")}
#: a share of NNBench's operations the NameNode must have counted
REACHED = 0.9


def jmx_url(values: dict[str, str], name: str) -> str | None:
    """The NameNodeActivity bean of a managed `hdfs` service (its HTTP port); None for one without."""
    host, port = values.get(f"services.{name}.host"), values.get(f"services.{name}.port_http")
    if not host or not port:
        return None
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/jmx?qry={BEAN}"


def namenode_sources(services: list[tuple[str, str, str]], values: dict[str, str], transport: Transport,
                     raw: Path) -> list[Source]:
    """The NameNodes among a target's services ((name, kind, host) each) whose counters can be read."""
    out = []
    for name, kind, host in services:
        url = jmx_url(values, name) if kind == "hdfs" else None
        if url:
            out.append(Source(name, host, url, transport, raw, parse=parse_jmx))
    return out


def parse_jmx(text: str, now: float | None = None) -> Snapshot | None:
    """A Snapshot of the NameNode's file operations, or None when the text is not its bean."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    beans = doc.get("beans") if isinstance(doc, dict) else None
    bean = next((b for b in beans or [] if isinstance(b, dict) and b.get("name") == BEAN), None)
    if bean is None:
        return None
    ops = {op: OpCount(int(bean[key])) for key, op in COUNTERS.items()
           if isinstance(bean.get(key), int) and not isinstance(bean.get(key), bool)}
    return Snapshot(time.time() if now is None else now, ops) if ops else None


class ReachedStore:
    """'operations that never reached the store': each NNBench operation against the store's own count of the
    request it must make at least once (the NameNode's, or an S3 server's for S3A)."""

    def __init__(self, store: str, needs: dict[str, tuple[str, str]]):
        self.store, self.needs = store, needs
        self.name = f"operations that never reached {store}"  # one per store: checks are told apart by name

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        out = []
        for op, (counted_as, said_as) in self.needs.items():
            done = tool_sum(rows, op, "ops")
            if done <= 0:
                continue
            parts = [p for p in PARTS.get(op, ()) if any(r.get("operation") == p for r in rows)]
            if counted_as not in seen.requests:
                why = (f"no counter of {self.store} covers this case: its target does not send its operations there "
                       "(JuiceFS's Hadoop SDK sends them to its metadata engine, judged by that engine's own count "
                       "where fsbench reads one), or fsbench does not run it")
                out += [Verdict(self.name, tool, o, None, why) for o in (op, *parts)]
                continue
            counted = seen.requests[counted_as]
            ok = counted >= REACHED * done
            detail = f"{self.store} counted {counted} {said_as} while {tool} ran {done:.0f} {op.replace('_', ' ')}"
            if not ok:
                detail += (f": under {REACHED:.0%} of them, so the rest did not reach it (a client-side cache, or "
                           "operations counted that failed)")
            out += [Verdict(self.name, tool, o, ok, detail if o == op else f"{detail} (this is a part of "
                            f"{op.replace('_', ' ')})") for o in (op, *parts)]
        return out


#: NNBench's operations on S3A, against the S3 server's count of the request each makes at least once (an
#: empty file too: S3A puts it at close, reads it with a GET, renames by copy and delete)
S3A_NEEDS = {"create_write": ("put_object", "PutObject"), "open_read": ("get_object", "GetObject"),
             "rename": ("copy_object", "CopyObject"), "delete": ("delete_object", "DeleteObject")}


REACHED_NAMENODE = ReachedStore("the NameNode", NNBENCH)
REACHED_S3 = ReachedStore("the S3 server", S3A_NEEDS)


class ReachedEngine:
    """'operations that never reached the metadata engine': NNBench through JuiceFS's Hadoop SDK, whose every
    operation asks the metadata engine at least once, against the engine's own count of what it served over
    the case (fsbench.validity.engine_server). The count is the case's, not an operation's: held when it covers
    every operation NNBench says it did in the case."""

    name = "operations that never reached the metadata engine"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        if seen.engine_served is None:
            return []
        done = {op: tool_sum(rows, op, "ops") for op in NNBENCH}
        total = sum(done.values())
        if total <= 0:
            return []
        ok = seen.engine_served >= REACHED * total
        detail = (f"the metadata engine itself counted {seen.engine_served} requests while {tool} ran {total:.0f} "
                  f"operations ({seen.engine_what})")
        if not ok:
            detail += f": under {REACHED:.0%} of one per operation, so some never reached it"
        out = []
        for op, n in done.items():
            if n > 0:
                parts = [p for p in PARTS.get(op, ()) if any(r.get("operation") == p for r in rows)]
                out += [Verdict(self.name, tool, o, ok, detail) for o in (op, *parts)]
        return out


REACHED_ENGINE = ReachedEngine()
