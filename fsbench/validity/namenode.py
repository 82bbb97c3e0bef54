"""HDFS as a backend: what the NameNode itself counted, from its JMX servlet (NameNodeActivity), and the check
that NNBench's operations reached it.

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


class ReachedNameNode:
    """'operations that never reached the NameNode': each NNBench operation against the NameNode's own count."""

    name = "operations that never reached the NameNode"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        out = []
        for op, (counted_as, bean_name) in NNBENCH.items():
            done = tool_sum(rows, op, "ops")
            if done <= 0 or counted_as not in seen.requests:
                continue
            counted = seen.requests[counted_as]
            ok = counted >= REACHED * done
            detail = f"the NameNode counted {counted} {bean_name} while {tool} ran {done:.0f} {op.replace('_', ' ')}"
            if not ok:
                detail += (f": under {REACHED:.0%} of them, so the rest did not reach HDFS (a client-side cache, or "
                           "operations counted that failed)")
            out.append(Verdict(self.name, tool, op, ok, detail))
        return out


REACHED_NAMENODE = ReachedNameNode()
