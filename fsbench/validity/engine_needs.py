"""'far more engine requests than the call needs': a metabench call whose client asked its metadata engine far
more than the operation needs (the same count as fsbench.validity.engine's 'served by the client's cache')."""

from __future__ import annotations

from fsbench.validity.checks import RowsCheck, Verdict
from fsbench.validity.engine import CACHED_BELOW, ENGINE_REQUESTS
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

#: metabench's operations -> the metadata-engine requests JuiceFS's client sends for one call with its caches on
#: (measured: the same on Redis, MariaDB, PostgreSQL, etcd and SQLite, meta-engines.yaml 2026-12-02; a create is a
#: lookup of the new name, the create and the open it returns...). The client decides them, not the engine
NEEDS: dict[str, int] = {
    "access": 1, "getattr": 1, "getxattr": 1, "setxattr": 1, "removexattr": 1, "listxattr_1": 1, "listxattr_10": 1,
    "lookup": 1, "setattr": 1, "write": 1, "unlink": 2, "rmdir": 2, "create": 3, "mknod": 3, "mkdir": 3,
    "symlink": 3, "rename": 3, "mvdir": 3, "readdir_10": 3, "readdir_1k": 3, "link": 4,
}
#: more engine requests per call than this many times what the operation needs: far more
FAR_MORE = 2.0


class FarMoreRequests(RowsCheck):
    """'far more engine requests than the call needs': a metabench call that sent its engine more than `FAR_MORE`
    times the requests JuiceFS's client sends for that operation (`NEEDS`): its latency is then several round
    trips, not the one the label names (a cache turned off for this target, a transaction retried), and it is not
    comparable with a target whose client sent what the operation needs. Judged from the same count as 'served
    by the client's cache' (the client's `.stats` around the timed calls); operations without a known need are not
    judged by it."""

    name = "far more engine requests than the call needs"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        counted = [r for r in rows if r.get("metric") == ENGINE_REQUESTS and r.get("stat", "value") == "value"]
        own = [r for r in counted if r.get("host") != "all"] or counted
        out = []
        for r in own:
            op, per_call = str(r.get("operation")), float(r.get("value") or 0.0)
            need = NEEDS.get(op)
            if need is None or per_call < CACHED_BELOW:  # a cached call is the other check's
                continue
            ok = per_call <= FAR_MORE * need
            detail = (f"{per_call:.2f} metadata-engine requests per call, where a {op.replace('_', ' ')} needs {need} "
                      "(JuiceFS's client with its caches on)")
            if not ok:
                detail += (f": more than {FAR_MORE:g} times that, so this latency is several round trips to the "
                           "engine, not one call's (a cache off for this target, or retried transactions: see the "
                           "`meta_retry` rows of juicefs stats where recorded)")
            out.append(Verdict(self.name, tool, op, ok, detail))
        return out


FAR_MORE_REQUESTS = FarMoreRequests()
