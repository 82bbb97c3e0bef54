"""'served by the client's cache': a metadata call that never reached the metadata engine it is labelled with.

metabench reads the target client's own count of its metadata-engine requests (JuiceFS' `.stats`:
`juicefs_meta_ops_total_<method>`) just before and just after 20 timed calls of each operation (spread
over them), and reports the requests per call (`engine_requests_per_call`, `engine_calls` counted). A
call that caused none was answered by the client's or the kernel's cache: its latency is the cache's, not
the engine's that the report compares.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fsbench.validity.checks import RowsCheck, Verdict, tool_sum
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

#: the metric metabench's rows carry (fsbench.tools.metabench.parse.ENGINE_REQUESTS: the same word), and the
#: column with the number of calls it counted
ENGINE_REQUESTS, COUNTED = "engine_requests_per_call", "engine_calls"
#: the metric of mdtest's phases counted one by one (fsbench.tools.mdtest.phase_probe.ENGINE_REQUESTS)
PHASE_REQUESTS = "engine_requests_per_item"
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


@dataclass(frozen=True)
class PhaseMethods:
    """What counts an mdtest phase's requests at a file system's metadata service: for each phase that changes
    metadata, the request kinds that make the change (`changes`); for each phase that only looks (a stat, a
    read), the kinds it sends, which other phases send too (`looks`: only an upper bound of its share); how
    the count is named in the verdicts (`counted`, `service`)."""

    changes: dict[str, tuple[str, ...]]
    looks: dict[str, tuple[str, ...]]
    counted: str
    service: str
    #: per phase that only looks, why it is not judged when its upper bound reached the threshold (or its items
    #: are unknown)
    unjudged: dict[str, str] = field(default_factory=dict)

    @property
    def family(self) -> str:
        """What the counted kinds' names begin with (`meta_`, `mds_`): one of them seen means they were read."""
        return next(iter(self.changes.values()))[0].split("_", 1)[0] + "_"

    def prefix(self, method: str) -> str:
        return method.split("_", 1)[1] if "_" in method else method


#: mdtest's phases that change metadata -> the client's metadata-engine methods that make that change. JuiceFS
#: 1.x counts a mkdir as a Mknod (its Mkdir makes a node of type directory), so file, directory and tree creation
#: share Mknod (Mkdir and Create are listed for clients that count them apart); directory and tree removal share
#: Rmdir. Phases that share a method get bounds (ChangesAtEngine)
_CREATE = ("meta_Mknod", "meta_Mkdir", "meta_Create")
PHASE_METHODS: dict[str, tuple[str, ...]] = {
    "file_creation": _CREATE, "directory_creation": _CREATE, "tree_creation": _CREATE,
    "file_removal": ("meta_Unlink",), "directory_removal": ("meta_Rmdir",), "tree_removal": ("meta_Rmdir",),
    "directory_rename": ("meta_Rename",)}
_SHARED = ("the client counts its engine requests for the whole mdtest run, and a {what} sends {methods}, "
           "which every other phase sends too: no count can tell this phase's share (metabench's {calls} of the "
           "same target, each call counted, say whether they reach the engine)")
#: mdtest's phases no engine method of their own tells apart -> why they are not judged
SHARED_METHODS = {
    "file_stat": _SHARED.format(what="stat", methods="Lookup and GetAttr", calls="getattr and lookup"),
    "directory_stat": _SHARED.format(what="stat", methods="Lookup and GetAttr", calls="getattr and lookup"),
    "file_read": _SHARED.format(what="read", methods="Lookup and Open, and its data Read", calls="read_1"),
}
_LOOK = ("meta_Lookup", "meta_GetAttr")
#: JuiceFS: what the client counts (its `.stats`); a stat sends Lookup or GetAttr (a read's Open is not counted
#: by every client, so a read is never judged by a count that may lack it)
JUICEFS = PhaseMethods(PHASE_METHODS, {"file_stat": _LOOK, "directory_stat": _LOOK}, "the client asked its metadata "
                       "engine", "metadata engine", SHARED_METHODS)
_MDS_LOOK = ("mds_getattr", "mds_lookup")
#: CephFS: what its MDSs served, per request kind (fsbench.validity.ceph_mds): each change has its own kind but
#: directory and tree creation (mkdir) and removal (rmdir); a stat sends getattr or lookup, a read an open
CEPHFS = PhaseMethods(
    {"file_creation": ("mds_create",), "directory_creation": ("mds_mkdir",), "tree_creation": ("mds_mkdir",),
     "file_removal": ("mds_unlink",), "directory_removal": ("mds_rmdir",), "tree_removal": ("mds_rmdir",),
     "directory_rename": ("mds_rename",)},
    {"file_stat": _MDS_LOOK, "directory_stat": _MDS_LOOK, "file_read": ("mds_open",),
     "directory_read": ("mds_readdir",)},
    "the file system's MDSs served", "MDS",
    {p: "the MDSs count its kind of request for the whole mdtest run, which the other phases send too: no count can "
        "tell this phase's share" for p in ("file_stat", "directory_stat", "file_read", "directory_read")})
#: directories mdtest makes per iteration outside its phases' counts (its test directory and its parent)
OUTSIDE_PHASES = 2


class ChangesAtEngine:
    """'never reached the metadata engine' (or 'the MDS'): an mdtest phase judged by the metadata service's
    requests of the kinds it sends, counted by the client (JuiceFS' `.stats`) or by the server (CephFS's MDSs),
    read before and after mdtest.

    mdtest times all its phases inside one process, so the counts cover the whole run; a method only one
    phase uses (a file removal's Unlink) gives that phase's requests per item exactly, one phases share
    (Mknod: file, directory and tree creation) gives bounds: at most all of them, at least what is left once
    the other phases had one per item (and mdtest's own directories). A phase is held when even its least
    share reaches `CACHED_BELOW` requests per item, flagged when even all of them do not, and not judged in
    between, saying so. A phase that only looks (a stat) sends kinds other phases send in unknown numbers: it is
    flagged when even all of them fall short, and not judged otherwise.

    Where mdtest counted each phase on its own (its `engine_requests_per_item` rows: the client's count read
    before every phase, fsbench.tools.mdtest.phase_probe), those phases are judged by their own requests per
    item, stats and reads included; the rest (each iteration's last phase, the tree phases) as above."""

    def __init__(self, name: str, methods: PhaseMethods):
        self.name, self.methods = name, methods

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        m = self.methods
        probed = _probed(rows)
        if not any(k.startswith(m.family) for k in seen.requests) and not probed:
            return []  # the service's counters were not read in this case: nothing to judge by
        out = [_probed_verdict(self.name, tool, phase, r) for phase, r in sorted(probed.items())]
        items = _phase_items(rows, set(m.changes) | set(m.looks))
        for phase, done in sorted(items.items()):
            if phase in probed:
                continue
            looks = phase not in m.changes
            methods = m.looks[phase] if looks else m.changes[phase]
            sharing = [] if looks else [p for p in items if p != phase and p in m.changes
                                        and set(m.changes[p]) & set(methods)]
            asked = sum(seen.requests.get(k, 0) for k in methods)
            others = sum(items[p] for p in sharing)
            slack = OUTSIDE_PHASES * _iterations(rows) if sharing else 0
            most = asked / done
            least = 0.0 if looks else max(0, asked - others - slack) / done
            said = "/".join(m.prefix(k) for k in methods if seen.requests.get(k)) or m.prefix(methods[0])
            detail = f"{m.counted} {asked} {said} while {tool} ran, for {done} items of {phase.replace('_', ' ')}"
            if sharing:
                shared = " and ".join(f"{items[p]} of {p.replace('_', ' ')}" for p in sorted(sharing))
                detail += f" and {shared} (same method): {least:.2f} to {most:.2f} per item"
            elif looks:
                detail += f": at most {most:.2f} per item (other phases send {said} too)"
            else:
                detail += f": {most:.2f} per item"
            if most < CACHED_BELOW:
                out.append(Verdict(self.name, tool, phase, False, detail + (
                    f": most of these changes stayed in the client while mdtest timed them, so this rate is not the "
                    f"{m.service}'s" if not looks else
                    f": most of these items were answered by a cache (the client's or the kernel's), not by the "
                    f"{m.service}, so this rate is the cache's")))
            elif least >= CACHED_BELOW:
                out.append(Verdict(self.name, tool, phase, True, detail))
            else:
                why = m.unjudged.get(phase, "") if looks else \
                    f"its share of the {said} cannot be told from the other phases'"
                out.append(Verdict(self.name, tool, phase, None, f"{detail}: {why}"))
        for phase in sorted({str(r.get("operation")) for r in rows} & set(m.unjudged) - set(probed) - set(items)):
            out.append(Verdict(self.name, tool, phase, None, m.unjudged[phase]))
        return out


def _probed(rows: list[dict]) -> dict[str, dict]:
    """The phases whose own engine requests were counted (mdtest's `engine_requests_per_item` rows)."""
    return {str(r.get("operation")): r for r in rows if r.get("metric") == PHASE_REQUESTS}


def _probed_verdict(check: str, tool: str, phase: str, r: dict) -> Verdict:
    """A phase judged by its own count: the client's engine requests between the snapshots before it and
    before the next phase (fsbench.tools.mdtest.phase_probe)."""
    per_item = float(r.get("value") or 0.0)
    detail = (f"the client asked its metadata engine {r.get('engine_requests', '?')} requests during "
              f"{phase.replace('_', ' ')}, for {r.get('engine_items', '?')} items: {per_item:.2f} per item (its "
              "count read before this phase and before the next)")
    if per_item >= CACHED_BELOW:
        return Verdict(check, tool, phase, True, detail)
    return Verdict(check, tool, phase, False, detail + (
        ": most items were answered by a cache (the client's or the kernel's), not by the metadata engine, so "
        "this rate is the cache's"))


def _iterations(rows: list[dict]) -> int:
    out = 1
    for r in rows:
        try:
            out = max(out, int(float(str(r.get("iterations") or 1))))
        except ValueError:
            continue
    return out


def _phase_items(rows: list[dict], phases: set[str]) -> dict[str, int]:
    """The items each judged phase handled in all its iterations (its rows' `items` x `iterations`)."""
    out: dict[str, int] = {}
    for r in rows:
        phase, items = str(r.get("operation")), r.get("items")
        if phase not in phases or r.get("metric") != "rate" or items in (None, "") or phase in out:
            continue
        try:
            n = int(float(str(items))) * int(float(str(r.get("iterations") or 1)))
        except ValueError:
            continue
        if n > 0:
            out[phase] = n
    return out


CHANGES_AT_ENGINE = ChangesAtEngine("never reached the metadata engine", JUICEFS)
CHANGES_AT_MDS = ChangesAtEngine("never reached the MDS", CEPHFS)


#: the engine must have counted at least this share of the requests the client says it asked (each JuiceFS
#: request is one command or statement or more: a Redis transaction is several, a SQL one BEGIN ... COMMIT)
ENGINE_SAW_AT_LEAST = 0.9
#: the tools whose measurements the client's engine counts vouch for (their rows name the counted operations)
_COUNTED_TOOLS = {"metabench": ENGINE_REQUESTS, "mdtest": PHASE_REQUESTS}


class EngineSawClient:
    """'the engine did not see the client's requests': the second witness. The metadata engine's own count of
    what it served (Redis INFO commandstats, MySQL's Questions, pg_stat_statements, etcd's gRPC calls:
    fsbench.validity.engine_server) over the case's tool and after windows, against the client's count of the
    requests it asked (its `.stats` meta_* over the same windows). Held when the engine counted at least
    `ENGINE_SAW_AT_LEAST` of them: the client's count, on which "served by the client's cache" and "never
    reached the metadata engine" rest, is then the engine's too. Judges the operations those checks count."""

    name = "the engine did not see the client's requests"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        if seen.engine_served is None or seen.engine_asked <= 0 or tool not in _COUNTED_TOOLS:
            return []
        ops = sorted({str(r.get("operation")) for r in rows if r.get("metric") == _COUNTED_TOOLS[tool]}
                     | ({str(r.get("operation")) for r in rows} & set(PHASE_METHODS) if tool == "mdtest" else set()))
        if tool == "metabench" and not ops:  # its concurrency mode: judged over the case (OpsReachedEngine)
            ops = sorted({str(r.get("operation")) for r in rows if r.get("metric") == "ops"})
        served, asked = seen.engine_served, seen.engine_asked
        ok = served >= ENGINE_SAW_AT_LEAST * asked
        detail = (f"the engine itself counted {served} requests while the client asked {asked} "
                  f"({served / asked:.2f} per request; {seen.engine_what})")
        if not ok:
            detail += (": the client's count of its engine requests is more than the engine served, so the "
                       "requests per call or item it gives are not the engine's")
        return [Verdict(self.name, tool, op, ok, detail) for op in ops]


ENGINE_SAW_CLIENT = EngineSawClient()


#: a share of one engine request per operation the client must have asked for (each operation of metabench's
#: concurrency mode asks the engine at least once: a create, an open, a rename, an unlink)
OPS_REACHED = 0.9


class OpsReachedEngine:
    """'operations that never reached the metadata engine' for metabench's concurrency mode, which counts no
    engine requests per call (its threads time whole operations): the client's own count of its engine
    requests over the case (JuiceFS's `.stats` meta_*) against the operations metabench says it did. The
    count is the case's, not an operation's: held when it covers one request per operation."""

    name = "operations that never reached the metadata engine"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        if any(r.get("metric") == ENGINE_REQUESTS for r in rows):
            return []  # calls mode: each operation counted on its own ("served by the client's cache")
        asked = sum(n for op, n in seen.requests.items() if op.startswith("meta_"))
        done = {op: tool_sum(rows, op, "ops") for op in sorted({str(r.get("operation")) for r in rows
                                                                  if r.get("metric") == "ops"})}
        total = sum(done.values())
        if not asked or total <= 0:
            return []
        ok = asked >= OPS_REACHED * total
        detail = (f"the client asked its metadata engine {asked} requests while {tool} did {total:.0f} operations "
                  f"({asked / total:.2f} per operation; its `.stats`, over the case)")
        if not ok:
            detail += ": fewer than one per operation, so some were answered by a cache, not by the engine"
        return [Verdict(self.name, tool, op, ok, detail) for op, n in sorted(done.items()) if n > 0]


OPS_REACHED_ENGINE = OpsReachedEngine()
