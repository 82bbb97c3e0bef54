"""'served by the client's cache': a metadata call that never reached the metadata engine it is labelled with.

metabench reads the target client's own count of its metadata-engine requests (JuiceFS' `.stats`:
`juicefs_meta_ops_total_<method>`) just before and just after 20 timed calls of each operation (spread
over them), and reports the requests per call (`engine_requests_per_call`, `engine_calls` counted). A
call that caused none was answered by the client's or the kernel's cache: its latency is the cache's, not
the engine's that the report compares.
"""

from __future__ import annotations

from fsbench.validity.checks import RowsCheck, Verdict
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

#: the metric metabench's rows carry (fsbench.tools.metabench.parse.ENGINE_REQUESTS: the same word), and the
#: column with the number of calls it counted
ENGINE_REQUESTS, COUNTED = "engine_requests_per_call", "engine_calls"
#: fewer engine requests per call than this: the calls were (nearly all) served by a cache. A call that reaches
#: the engine makes one request or more; the client's own background requests (a session refresh) may land in
#: a counted call now and then: 1 in 10 counted calls was seen on MariaDB for a cached read
CACHED_BELOW = 0.5


class ServedByClientCache(RowsCheck):
    """Per operation: the engine requests its timed calls caused, per call; flagged when about none."""

    name = "served by the client's cache"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        counted = [r for r in rows if r.get("metric") == ENGINE_REQUESTS and r.get("stat", "value") == "value"]
        own = [r for r in counted if r.get("host") != "all"] or counted  # each host's, not their aggregate
        several = len({r.get("host") for r in own}) > 1
        out = []
        for r in own:
            per_call = float(r.get("value") or 0.0)
            ok = per_call >= CACHED_BELOW
            where = f" on {r.get('host')}" if several else ""
            detail = (f"{per_call:.2f} metadata-engine requests per call{where} (the client's count over "
                      f"{r.get(COUNTED) or '?'} of its timed calls)")
            if not ok:
                detail += (": the calls were answered by a cache (the client's or the kernel's), not by the "
                           "metadata engine, so this latency is the cache's")
            out.append(Verdict(self.name, tool, str(r.get("operation")), ok, detail))
        return out


SERVED_BY_CLIENT_CACHE = ServedByClientCache()
