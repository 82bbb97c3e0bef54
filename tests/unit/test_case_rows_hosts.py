"""case_rows across hosts: whose figures the rows are, and a warning when some hosts gave none."""

from __future__ import annotations

from types import SimpleNamespace

from fsbench.core.tidy import ParseResult
from fsbench.run.case_outcome import case_rows

CASE = SimpleNamespace(case_id="jfs__seq-write__r1", target="jfs", workload="seq-write", repetition=1,
                       hosts=("client1", "client2", "client3"))
NAMES = {"10.0.0.1": "client1", "10.0.0.2": "client2", "10.0.0.3": "client3"}


def _bw(host: str) -> dict:
    return {"tool": "fio", "operation": "write", "metric": "bandwidth", "value": 1.0, "unit": "B/s", "host": host}


def test_rows_from_fewer_hosts_than_the_case_names_carry_a_warning():
    """fio's servers on client1 and client2 dropped their jobs (fio still exits 0): only client3's rows."""
    rows, warnings = case_rows("r", "s", CASE, ParseResult(rows=[_bw("10.0.0.3"), _bw("")]), NAMES, [])  # type: ignore[arg-type]
    assert {r["host"] for r in rows} == {"client3", "all"}
    assert warnings == ["no results from client1, client2 (see raw/jfs__seq-write__r1): the figures of host `all` "
                        "cover client3 only"]


def test_rows_of_every_host_or_of_the_whole_case_carry_none():
    every = ParseResult(rows=[_bw(a) for a in NAMES] + [_bw("")])
    assert case_rows("r", "s", CASE, every, NAMES, [])[1] == []  # type: ignore[arg-type]
    whole = ParseResult(rows=[_bw("")])  # mdtest: one figure for all ranks
    rows, warnings = case_rows("r", "s", CASE, whole, NAMES, [])  # type: ignore[arg-type]
    assert warnings == [] and {r["host"] for r in rows} == {"all"}


def test_a_one_host_tool_rows_are_the_host_that_ran_it():
    rows, warnings = case_rows("r", "s", CASE, ParseResult(rows=[_bw("")]), NAMES, [], alone="client1")  # type: ignore[arg-type]
    assert {r["host"] for r in rows} == {"client1"} and warnings == []
