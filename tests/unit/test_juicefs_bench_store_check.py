"""juicefs bench against its object store's counters: the bytes of each file phase from its parameter line,
and verdicts only where the store's reads of the whole bench decide a phase either way."""

from __future__ import annotations

from fsbench.tools import get_tool
from fsbench.tools.juicefs_bench import parse_path
from fsbench.tools.juicefs_bench.store_check import moved_rows
from fsbench.validity.judge import checks_of, judge
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence
from tests.paths import GOLDEN

REAL = GOLDEN / "juicefs-bench" / "inputs" / "juicefs-1.4.2_bench_p1_sqlite_file_store.txt"
PLUGIN = get_tool("juicefs-bench")
MIB = 2**20


def _rows() -> list[dict]:
    return moved_rows(parse_path(REAL)).rows


def _seen(read: float, write: float, after: float = 0) -> Evidence:
    return Evidence(("s3",), int(read), int(write), 0, int(after), 1.0, None, 0.0, True)


def _verdicts(read: float, write: float, after: float = 0) -> dict[str, object]:
    rows = _rows()
    return {(v.check, v.operation): v for v in judge(rows, "juicefs-bench", checks_of(PLUGIN),
                                                    _seen(read, write, after), Thresholds.of({}))}


def test_each_file_phase_gets_the_bytes_its_parameters_say() -> None:
    result = parse_path(REAL)
    meta = result.meta
    moved = {r["operation"]: r["value"] for r in moved_rows(result).rows if r["metric"] == "io_bytes"}
    big = meta["BigFileSize"] * meta["NumThreads"]
    small = meta["SmallFileSize"] * meta["SmallFileCount"] * meta["NumThreads"]
    assert moved == {"write_big_file": big, "read_big_file": big, "write_small_file": small,
                     "read_small_file": small}
    assert all(r["unit"] == "B" for r in moved_rows(parse_path(REAL)).rows if r["metric"] == "io_bytes")


def test_a_big_read_the_store_served_holds_and_the_small_one_is_left_unchecked() -> None:
    rows = _rows()
    big = next(r["value"] for r in rows if r["operation"] == "read_big_file" and r["metric"] == "io_bytes")
    got = _verdicts(read=big, write=10**12)
    assert got[("read served from cache", "read_big_file")].ok
    assert ("read served from cache", "read_small_file") not in got  # the window cannot tell whose bytes


def test_a_read_the_store_never_served_is_flagged_for_every_phase() -> None:
    got = _verdicts(read=0, write=10**12)
    for op in ("read_big_file", "read_small_file"):
        v = got[("read served from cache", op)]
        assert not v.ok and "came from the client's cache" in v.detail


def test_writes_the_store_did_not_have_when_the_bench_ended_are_flagged() -> None:
    got = _verdicts(read=10**12, write=1 * MIB, after=500 * MIB)
    v = got[("write not durable in the timed window", "write_big_file")]
    assert not v.ok and "more arrived after" in v.detail
    assert _verdicts(read=10**12, write=10**12)[("write not durable in the timed window", "write_small_file")].ok


def test_without_the_store_s_counters_nothing_is_judged() -> None:
    rows = _rows()
    assert judge(rows, "juicefs-bench", checks_of(PLUGIN), None, Thresholds.of({})) == []
    assert not any(r.get("validity") for r in rows)


def test_the_bench_s_own_object_counts_are_checked_against_the_store_s_and_client_only_rows_say_why() -> None:
    rows = _rows()
    counts = {r["operation"]: r["value"] for r in rows if r["metric"] == "ops"}
    agree = Evidence(("s3",), 0, 0, 0, 0, 1.0, None, 0.0, True,
                     requests={"put_object": int(counts["put_object"]), "get_object": int(counts["get_object"]),
                               "delete_object": int(counts["delete_object"]) + 1})
    got = {v.operation: v for v in judge(rows, "juicefs-bench", checks_of(PLUGIN), agree, Thresholds.of({}))
           if v.check == "never reached the object store"}
    assert {op: v.ok for op, v in got.items()} == {"put_object": True, "get_object": True, "delete_object": True}
    assert got["put_object"].detail == (f"the store counted {int(counts['put_object'])} put_object/upload_part "
                                        f"requests while juicefs bench ran; juicefs bench counted "
                                        f"{int(counts['put_object'])}")
    meta = next(r for r in rows if r["operation"] == "update_meta")
    assert "validity" not in meta and meta["validity_detail"].startswith(
        "not checked: juicefs bench's count of the client's metadata transactions: no count of the engine's own")
    # a store that counted none of the bench's requests: its figures are of another store
    elsewhere = Evidence(("s3",), 0, 0, 0, 0, 1.0, None, 0.0, True, requests={})
    rows = _rows()
    got = {v.operation: v for v in judge(rows, "juicefs-bench", checks_of(PLUGIN), elsewhere, Thresholds.of({}))
           if v.check == "never reached the object store"}
    assert not got["put_object"].ok and got["put_object"].detail.endswith("its figures are not this store's requests")
    # the client's own counters only (a file bucket): its count cannot witness itself
    client = Evidence(("jfs",), 0, 0, 0, 0, 1.0, None, 0.0, True, from_client=True)
    rows = _rows()
    assert not [v for v in judge(rows, "juicefs-bench", checks_of(PLUGIN), client, Thresholds.of({}))
                if v.check == "never reached the object store"]
    put = next(r for r in rows if r["operation"] == "put_object")
    assert put["validity_detail"].startswith("not checked: juicefs bench's count is the client's own")
