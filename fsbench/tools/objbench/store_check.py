"""juicefs objbench against its object store's own counters: did the store fsbench runs (fsbench-s3) count
what objbench says it moved while it ran?

objbench talks to the store itself, with no cache between: a figure that the store did not count was
measured against another store than the one the target names (another endpoint, another bucket). Its
parameter line gives the bytes of its data items (`moved_rows`: the big object uploaded and downloaded,
the small objects put and got: io_bytes rows). The store's counters cover the whole run (the functional
checks too) in one window, so its PUT bytes are judged against the upload and the small puts together, its
GET bytes against the download and the small gets together; head, list and delete need at least one
request of their own kind. A client's own counters (JuiceFS's `.stats`) never see objbench: with only those,
nothing is judged.
"""

from __future__ import annotations

from fsbench.core.tidy import ParseResult, measurement
from fsbench.core.units import format_value
from fsbench.validity.checks import Verdict, tool_sum
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

TOOL = "juicefs-objbench"
#: data items -> whether they read from the store
DATA_ITEMS = {"upload_objects": False, "put_small_objects": False, "download_objects": True,
              "get_small_objects": True}
#: items without data -> the store's operations that serve them
REQUEST_ITEMS = {"head_objects": ("head_object",), "list_objects": ("list_objects",),
                 "delete_objects": ("delete_object", "delete_objects")}
#: objbench's functional checks -> the store's operations each must send (the counts cover the whole run: a
#: check is held when its kind of request reached the store at all, so its outcome was this store's)
FUNCTIONAL = {"put_an_object": ("put_object",), "put_a_big_object": ("put_object",),
              "put_an_empty_object": ("put_object",), "special_key": ("put_object",),
              "get_an_object": ("get_object",), "get_non_exist": ("get_object",),
              "get_partial_object": ("get_object",), "head_an_object": ("head_object",),
              "delete_an_object": ("delete_object",), "delete_non_exist": ("delete_object",),
              "multipart_upload": ("create_multipart", "upload_part", "complete_multipart"),
              "create_a_bucket": ("put_bucket",)}
#: the checks of what an object store has no request for: objbench asks the store's client library, which says
#: "not support" for S3 without sending anything
NO_REQUEST = ("change_owner_group", "change_permission", "change_permissions", "change_mtime", "update_mtime")
_NO_REQUEST = ("not checkable: S3 has no request that changes an object's owner, permissions or time, so objbench's "
               "answer comes from its client library, and no store counter could show it")


def moved_rows(result: ParseResult) -> ParseResult:
    """The result with an io_bytes row per data item it measured, from its parameter line (meta): the big
    object's size for the upload and the download, small-object-size x small-objects for the small puts and
    gets (the least of both readings of its count: in all, or per thread)."""
    meta, ops = result.meta, {r.get("operation") for r in result.rows if r.get("metric") != "supported"}
    big = float(meta.get("big-object-size") or 0)
    small = float(meta.get("small-object-size") or 0) * float(meta.get("small-objects") or 0)
    for op in DATA_ITEMS:
        size = big if op in ("upload_objects", "download_objects") else small
        if op in ops and size > 0:
            result.rows.append(measurement(TOOL, op, "io_bytes", size))
    return result


class ReachedTheStore:
    """'never reached the object store': objbench's items against the store's counters of the same run."""

    name = "never reached the object store"

    def judge(self, tool: str, rows: list[dict], seen: Evidence, limits: Thresholds) -> list[Verdict]:
        if not seen.services or seen.from_client:
            return []
        out = []
        for reads in (False, True):
            items = [op for op, r in DATA_ITEMS.items() if r == reads and tool_sum(rows, op, "io_bytes") > 0]
            need = sum(tool_sum(rows, op, "io_bytes") for op in items)
            if not items:
                continue
            got = seen.read_tool if reads else seen.write_tool
            way = "served" if reads else "took"
            said = (f"the store {way} {format_value(float(got), 'B')} while objbench ran, of the "
                    f"{format_value(need, 'B')} its "
                    f"{' and '.join(op.replace('_', ' ') for op in items)} moved")
            ok = got >= need
            if not ok:
                said += ": these figures were not measured on this store"
            out += [Verdict(self.name, tool, op, ok, said) for op in items]
        for op, served_by in REQUEST_ITEMS.items():
            if not any(r.get("operation") == op and r.get("metric") != "supported" for r in rows):
                continue
            n = sum(seen.requests.get(s, 0) for s in served_by)
            said = f"the store answered {n} {'/'.join(served_by)} requests while objbench ran"
            out.append(Verdict(self.name, tool, op, n > 0, said if n else said + ": not measured on this store"))
        return out + _functional(self.name, tool, rows, seen)


def _functional(check: str, tool: str, rows: list[dict], seen: Evidence) -> list[Verdict]:
    """The functional checks' verdicts: each needs its kind of request counted by the store in the run."""
    out = []
    checked = {str(r.get("operation")) for r in rows if r.get("metric") in ("functional", "supported")}
    for op in sorted(checked):
        if op in NO_REQUEST:
            out.append(Verdict(check, tool, op, None, _NO_REQUEST))
            continue
        if op not in FUNCTIONAL:
            continue
        kinds = FUNCTIONAL[op]
        counts = {k: seen.requests.get(k, 0) for k in kinds}
        said = (f"the store answered {', '.join(f'{n} {k}' for k, n in counts.items())} requests while objbench ran "
                f"(its functional checks and its timed items together)")
        ok = all(counts.values())
        if not ok:
            said = ("the store counted no bucket creation while objbench ran (0 put_bucket): this 'pass' was given "
                    "without creating a bucket on this store (objbench accepts a bucket that exists), so it does not "
                    "say that creating one works here"
                    if op == "create_a_bucket" else said + ": this check's requests never reached it")
        out.append(Verdict(check, tool, op, ok, said))
    return out


REACHED_THE_STORE = ReachedTheStore()
