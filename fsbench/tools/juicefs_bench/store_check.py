"""juicefs bench against its object store: did its big-file read come from the store, and did what it wrote
reach the store before it ended?

juicefs bench's own rows are rates and costs; the bytes each phase moved follow from its parameter line
(`moved_rows`: io_bytes rows of read/write big and small files). The store's counters (fsbench-s3's, or
the JuiceFS client's own `.stats`) cover the whole bench, every phase in one window, so the store's reads
cannot be split between the big and the small files: a phase gets a verdict only where the window's bytes
decide it either way (held: even if every other phase's bytes came from the store too, this one's share
reaches `cache_ratio`; flagged: even if all the store's reads were this phase's, they do not), and is not
checked otherwise.
"""

from __future__ import annotations

from fsbench.core.tidy import ParseResult, measurement
from fsbench.core.units import format_value
from fsbench.tools.juicefs_bench.parse import TOOL
from fsbench.validity.checks import Verdict, tool_sum
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

READS = ("read_big_file", "read_small_file")
WRITES = ("write_big_file", "write_small_file")


def moved_rows(result: ParseResult) -> ParseResult:
    """The result with an io_bytes row per file phase it measured: big files BigFileSize x NumThreads, small
    files SmallFileSize x SmallFileCount x NumThreads (its parameter line, in meta)."""
    meta, ops = result.meta, {r.get("operation") for r in result.rows}
    threads = float(meta.get("NumThreads") or 0)
    big = float(meta.get("BigFileSize") or 0) * threads
    small = float(meta.get("SmallFileSize") or 0) * float(meta.get("SmallFileCount") or 0) * threads
    for op, size in (("write_big_file", big), ("read_big_file", big), ("write_small_file", small),
                     ("read_small_file", small)):
        if op in ops and size > 0:
            result.rows.append(measurement(TOOL, op, "io_bytes", size))
    return result


def _b(n: float) -> str:
    return format_value(float(n), "B")


class ObjectStoreReads:
    """'read served from cache', per file phase, where the store's reads of the whole bench decide it."""

    name = "read served from cache"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        sizes = {op: tool_sum(rows, op, "io_bytes") for op in READS}
        total = sum(sizes.values())
        if total <= 0 or not seen.services:
            return []
        got, out = float(seen.read_tool), []
        for op, size in sizes.items():
            if size <= 0:
                continue
            least, most = max(0.0, got - (total - size)) / size, min(got, size) / size
            said = (f"the object store served {_b(got)} while juicefs bench ran, of the {_b(total)} it read "
                    f"({_b(size)} in {op.replace('_', ' ')})")
            if least >= limits.cache_ratio:
                out.append(Verdict(self.name, tool, op, True, said))
            elif most < limits.cache_ratio:
                out.append(Verdict(self.name, tool, op, False, said + f": under {limits.cache_ratio:.0%} of it "
                                   "even if all were this phase's; the rest came from the client's cache (its "
                                   "memory or --cache-dir), not from the object store"))
            else:
                out.append(Verdict(self.name, tool, op, None, said + ": the store counts the whole bench in one "
                                   "window, and these bytes cannot be split between the big and the small files"))
        return out


class ObjectStoreWrites:
    """'write not durable in the timed window': what the bench wrote was in the store when it ended."""

    name = "write not durable in the timed window"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        ops = [op for op in WRITES if tool_sum(rows, op, "io_bytes") > 0]
        written = sum(tool_sum(rows, op, "io_bytes") for op in ops)
        if written <= 0 or not seen.services:
            return []
        share = seen.write_tool / written
        ok = share >= limits.durable_ratio
        said = (f"the object store had {share:.0%} of the {_b(written)} juicefs bench wrote (big and small files "
                "together) when it ended")
        if not ok:
            said += (f", under {limits.durable_ratio:.0%}: {_b(seen.write_after)} more arrived after; its write "
                     "figures end before the data reached the store")
        return [Verdict(self.name, tool, op, ok, said) for op in ops]


OBJECT_STORE_READS = ObjectStoreReads()
OBJECT_STORE_WRITES = ObjectStoreWrites()


#: juicefs bench's own counts of the store's requests (its second table) -> the store's operations serving them
STORE_COUNTS = {"put_object": ("put_object", "upload_part"), "get_object": ("get_object",),
                "delete_object": ("delete_object", "delete_objects")}
#: its rows no counter outside the client can witness -> why
CLIENT_ONLY = {
    "update_meta": "juicefs bench's count of the client's metadata transactions: no count of the engine's own "
                   "covers this case (fsbench reads Redis's, MySQL's, PostgreSQL's and etcd's, not SQLite's or "
                   "TiKV's)",
    "fuse_operation": "juicefs bench's count of the FUSE requests the kernel sent the client: only the client "
                      "counts them",
    "write_into_cache": "the client's writes into its own disk cache (--cache-dir): only the client counts them",
    "read_from_cache": "the client's reads from its own disk cache (--cache-dir): only the client counts them",
    "total": "juicefs bench's own run time and the client's CPU and memory: figures of the client process, "
             "beside which fsbench's monitor gives its own",
    "stat_file": "a stat sends Lookup and GetAttr to the metadata engine, which the bench's other phases send "
                 "too, in one window: no count can tell this phase's share",
}
#: the store's count may exceed the client's (retries); below this share of it, they disagree
AGREE = 0.9


class ClientCountsAgree:
    """'never reached the object store': juicefs bench's own counts of its object requests (the client's
    `.stats` it reads itself) against the store's count over the same run, where fsbench runs the store."""

    name = "never reached the object store"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        out = []
        for op, served_by in STORE_COUNTS.items():
            said = tool_sum(rows, op, "ops")
            if not any(r.get("operation") == op for r in rows):
                continue
            if not seen.services or seen.from_client:
                out.append(Verdict(self.name, tool, op, None, "juicefs bench's count is the client's own, and no "
                                   "counter of the store (fsbench-s3's) covers this case"))
                continue
            store = sum(seen.requests.get(s, 0) for s in served_by)
            words = (f"the store counted {store} {'/'.join(served_by)} requests while juicefs bench ran; "
                     f"juicefs bench counted {said:.0f}")
            ok = store >= AGREE * said
            out.append(Verdict(self.name, tool, op, ok, words if ok else words + ": its figures are not this "
                               "store's requests"))
        for op, why in CLIENT_ONLY.items():
            if not any(r.get("operation") == op for r in rows):
                continue
            if op == "update_meta" and seen.engine_served is not None:
                out.append(_engine_saw(self.name, tool, tool_sum(rows, op, "ops"), seen))
                continue
            out.append(Verdict(self.name, tool, op, None, why))
        return out


def _engine_saw(check: str, tool: str, said: float, seen: Evidence) -> Verdict:
    """juicefs bench's metadata transactions against the engine's own count of what it served meanwhile (each
    transaction is one request or more: fsbench.validity.engine_server)."""
    served = seen.engine_served or 0
    words = (f"the metadata engine itself counted {served} requests while juicefs bench ran ({seen.engine_what}); "
             f"juicefs bench counted {said:.0f} metadata transactions")
    ok = served >= AGREE * said
    return Verdict(check, tool, "update_meta", ok, words if ok else words + ": its figure is not this engine's")


CLIENT_COUNTS_AGREE = ClientCountsAgree()
