"""'served by the client's cache': a metadata call that never reached the metadata engine it is labelled with.

metabench reads the target client's own count of its metadata-engine requests (JuiceFS' `.stats`:
`juicefs_meta_ops_total_<method>`) just before and just after every timed call, and reports the requests
the timed calls of each operation caused (`engine_requests`). A call that caused none was answered by the
client's or the kernel's cache: its latency is the cache's, not the engine's that the report compares.
"""

from __future__ import annotations

from fsbench.validity.checks import RowsCheck, Verdict, tool_sum
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

#: the metric metabench's rows carry (fsbench.tools.metabench.parse.ENGINE_REQUESTS: the same word)
ENGINE_REQUESTS = "engine_requests"
#: fewer engine requests per call than this: the calls were (nearly all) served by a cache
CACHED_BELOW = 0.1


class ServedByClientCache(RowsCheck):
    """Per operation: the engine requests its timed calls caused, per call; flagged when about none."""

    name = "served by the client's cache"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        out = []
        for op in sorted({str(r.get("operation")) for r in rows if r.get("metric") == ENGINE_REQUESTS}):
            requests, calls = tool_sum(rows, op, ENGINE_REQUESTS), tool_sum(rows, op, "ops")
            if calls <= 0:
                continue
            per_call = requests / calls
            ok = per_call >= CACHED_BELOW
            detail = f"{per_call:.2f} metadata-engine requests per call ({requests:.0f} for {calls:.0f} timed calls)"
            if not ok:
                detail += (": the calls were answered by a cache (the client's or the kernel's), not by the "
                           "metadata engine, so this latency is the cache's")
            out.append(Verdict(self.name, tool, op, ok, detail))
        return out


SERVED_BY_CLIENT_CACHE = ServedByClientCache()
