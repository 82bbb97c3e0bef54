"""juicefs objbench judged by its store's own counters: the bytes its data items moved, from its parameter
line, against what fsbench-s3 counted in the same run (recorded objbench output, counters as numbers)."""

from __future__ import annotations

from fsbench.tools import get_tool
from fsbench.tools.objbench.store_check import REACHED_THE_STORE
from fsbench.validity.judge import checks_of, judge
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence
from tests.paths import REPO

RUN = REPO / "tests" / "golden" / "objbench" / "inputs" / "juicefs-1.4.2_objbench_fsbench-s3_p2.txt"
MiB = 2**20


def _rows() -> list[dict]:
    return [dict(r) for r in get_tool("juicefs-objbench").parse_file(RUN).rows]


def test_the_parameter_line_gives_the_bytes_of_each_data_item() -> None:
    moved = {r["operation"]: r["value"] for r in _rows() if r["metric"] == "io_bytes"}
    # block-size 4 MiB, big-object-size 64 MiB, small-object-size 128 KiB, small-objects 50
    assert moved == {"upload_objects": 64 * MiB, "download_objects": 64 * MiB,
                     "put_small_objects": 50 * 128 * 1024, "get_small_objects": 50 * 128 * 1024}
    assert REACHED_THE_STORE in checks_of(get_tool("juicefs-objbench"))


def test_items_the_store_counted_hold_and_items_it_did_not_are_flagged() -> None:
    need = 64 * MiB + 50 * 128 * 1024
    store = Evidence(("s3",), need + 5 * MiB, need + 9 * MiB, 0, 0, 2.0, None, 1.0, True,
                     requests={"head_object": 42, "list_objects": 3, "delete_object": 44})
    rows = _rows()
    verdicts = {v.operation: v for v in judge(rows, "juicefs-objbench", [REACHED_THE_STORE], store, Thresholds())}
    assert {op for op, v in verdicts.items() if v.ok} == {
        "upload_objects", "put_small_objects", "download_objects", "get_small_objects", "head_objects",
        "list_objects", "delete_objects", "head_an_object", "delete_an_object", "delete_non_exist"}
    assert "the store took 79.2 MiB while objbench ran, of the 70.2 MiB its upload objects and put small " \
        "objects moved" in verdicts["upload_objects"].detail
    # chmod, chown and mtime have no store operation of their own: not judged, saying why
    chmod = next(r for r in rows if r["operation"] == "change_permissions")
    assert "validity" not in chmod and chmod["validity_detail"].startswith(
        "not checked: not checkable: S3 has no request that changes an object's owner, permissions or time")

    elsewhere = Evidence(("s3",), 0, 3 * MiB, 0, 0, 2.0, None, 1.0, True, requests={"put_object": 3})
    verdicts = {v.operation: v for v in judge(_rows(), "juicefs-objbench", [REACHED_THE_STORE], elsewhere,
                                              Thresholds())}
    assert not verdicts["upload_objects"].ok and "not measured on this store" in verdicts["upload_objects"].detail
    assert not verdicts["head_objects"].ok and "answered 0 head_object requests" in verdicts["head_objects"].detail


def test_a_clients_own_counters_judge_nothing_of_objbench() -> None:
    client = Evidence(("juicefs",), 0, 0, 0, 0, 2.0, None, 1.0, True, from_client=True)
    assert REACHED_THE_STORE.judge("juicefs-objbench", _rows(), client, Thresholds()) == []


def test_each_functional_check_needs_its_kind_of_request_counted_by_the_store() -> None:
    """The counts of a real run (juicefs-evaluation.yaml on fsbench-s3): every functional check's kind of
    request reached the store but the bucket creation, which objbench passed on the existing bucket."""
    requests = {"put_object": 227, "get_object": 126, "head_object": 122, "delete_object": 231, "list_objects": 9,
                "create_multipart": 1, "upload_part": 5, "complete_multipart": 2}
    store = Evidence(("s3",), 95_945_000, 374_866_500, 0, 0, 2.0, None, 1.0, True, requests=requests)
    rows = _rows()
    verdicts = {v.operation: v for v in judge(rows, "juicefs-objbench", [REACHED_THE_STORE], store, Thresholds())}
    functional = {str(r["operation"]) for r in rows if r["metric"] == "functional"}
    assert {"put_an_object", "get_partial_object", "multipart_upload", "create_a_bucket"} <= functional
    assert all(verdicts[op].ok for op in functional - {"create_a_bucket", "change_owner_group",
                                                        "change_permission", "change_mtime", "list_objects"})
    assert verdicts["multipart_upload"].detail.startswith(
        "the store answered 1 create_multipart, 5 upload_part, 2 complete_multipart requests while objbench ran")
    assert not verdicts["create_a_bucket"].ok and "without creating a bucket" in verdicts["create_a_bucket"].detail
    # a store that never saw a get: the get checks were another store's
    store = Evidence(("s3",), 0, 374_866_500, 0, 0, 2.0, None, 1.0, True,
                     requests={k: v for k, v in requests.items() if k != "get_object"})
    verdicts = {v.operation: v for v in judge(_rows(), "juicefs-objbench", [REACHED_THE_STORE], store, Thresholds())}
    assert not verdicts["get_an_object"].ok and verdicts["get_an_object"].detail.endswith(
        "this check's requests never reached it")
