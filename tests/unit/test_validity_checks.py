"""The validity checks' verdicts in numbers, the counters' windows, and the thresholds' settings."""

from __future__ import annotations

import json

from fsbench.tools import get_tool
from fsbench.validity.checks import READ_FROM_CACHE, WRITE_NOT_DURABLE
from fsbench.validity.counters import parse_stats
from fsbench.validity.judge import checks_of, judge
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

MIB = 1024 * 1024


def _fio(op: str, nbytes: float, bw: float, runtime: float) -> list[dict]:
    base = {"tool": "fio", "host": "local", "job": "j", "operation": op, "stat": "value"}
    return [{**base, "metric": "io_bytes", "value": nbytes, "unit": "B"},
            {**base, "metric": "bandwidth", "value": bw, "unit": "B/s"},
            {**base, "metric": "runtime", "value": runtime, "unit": "s"}]


def _seen(**kw: float) -> Evidence:
    values = {"read_tool": 0, "write_tool": 0, "read_after": 0, "write_after": 0, "tool_s": 1.0,
              "durable_s": None, "after_s": 1.0, "quiet": True, **kw}
    return Evidence(services=("s3",), **values)  # type: ignore[arg-type]


def test_a_read_the_backend_barely_served_is_flagged_with_what_it_saw():
    rows = _fio("read", 26 * 1024 * MIB, 2.5e9, 10.0)
    verdicts = judge(rows, "fio", [READ_FROM_CACHE], _seen(read_tool=1.04 * 1024 * MIB), Thresholds())
    assert [v.ok for v in verdicts] == [False]
    assert verdicts[0].detail.startswith("backend served 4 % of the 26 GiB fio read")
    assert {r["validity"] for r in rows} == {"flagged"}
    assert all(r["validity_detail"].startswith("read served from cache: backend served 4 %") for r in rows)


def test_a_read_the_backend_served_whole_is_ok_and_says_so():
    rows = _fio("read", 16 * MIB, 5e8, 0.03)
    judge(rows, "fio", [READ_FROM_CACHE], _seen(read_tool=16 * MIB), Thresholds())
    assert {r["validity"] for r in rows} == {"ok"}
    assert "backend served 100 % of the 16 MiB fio read" in rows[0]["validity_detail"]


def test_the_cache_ratio_is_a_setting():
    rows = _fio("read", 100 * MIB, 1e9, 0.1)
    judge(rows, "fio", [READ_FROM_CACHE], _seen(read_tool=60 * MIB), Thresholds(cache_ratio=0.75))
    assert rows[0]["validity"] == "flagged" and "under 75 %" in rows[0]["validity_detail"]


def test_a_write_uploaded_after_the_tools_timing_is_flagged_with_the_durable_bandwidth():
    # issue 21's s3fs case: 0.165 s of fio, 2.2 s of upload at close
    rows = _fio("write", 256 * MIB, 256 * MIB / 0.165, 0.165)
    verdicts = judge(rows, "fio", [WRITE_NOT_DURABLE], _seen(write_tool=256 * MIB, durable_s=2.2), Thresholds())
    assert not verdicts[0].ok
    assert "durable bandwidth at most 116 MiB/s (8 % of fio's 1.52 GiB/s)" in verdicts[0].detail
    assert "fio timed 165 ms" in verdicts[0].detail


def test_a_write_the_backend_had_only_after_the_tool_ended_is_flagged():
    rows = _fio("write", 64 * MIB, 1e9, 0.06)
    verdicts = judge(rows, "fio", [WRITE_NOT_DURABLE],
                     _seen(write_tool=0, write_after=64 * MIB, after_s=5.5, durable_s=0.5), Thresholds())
    assert not verdicts[0].ok
    assert verdicts[0].detail.startswith("the backend had 0 % of the 64 MiB fio wrote when it ended; 64 MiB more "
                                         "arrived in the 5.5 s after")


def test_a_write_whose_timing_includes_the_upload_is_ok():
    rows = _fio("write", 16 * MIB, 16 * MIB / 0.15, 0.15)
    verdicts = judge(rows, "fio", [WRITE_NOT_DURABLE], _seen(write_tool=16 * MIB, durable_s=0.1), Thresholds())
    assert verdicts[0].ok and "(100 % of fio's" in verdicts[0].detail


def test_no_evidence_no_verdict():
    rows = _fio("read", 16 * MIB, 5e8, 0.03)
    assert judge(rows, "fio", [READ_FROM_CACHE], None, Thresholds()) == []
    assert "validity" not in rows[0]


def test_fio_declares_both_checks():
    assert [c.name for c in checks_of(get_tool("fio"))][:2] == [READ_FROM_CACHE.name, WRITE_NOT_DURABLE.name]


def test_counters_windows_from_the_servers_answers():
    start = parse_stats(json.dumps({"now": 10.0, "ops": {"get_object": {"requests": 1, "bytes_out": 5}}}))
    end = parse_stats(json.dumps({"now": 12.0, "first_since_stats": {"upload_part": 10.5},
                                  "ops": {"get_object": {"requests": 3, "bytes_out": 25},
                                          "upload_part": {"requests": 1, "bytes_in": 7, "last_end": 11.0}}}))
    assert start is not None and end is not None
    moved = end.minus(start)
    assert moved["get_object"].bytes == 20 and moved["get_object"].requests == 2
    assert moved["upload_part"].bytes == 7 and moved["upload_part"].last_end == 11.0
    assert end.first_since == {"upload_part": 10.5}
    assert parse_stats("<Error>moto</Error>") is None and parse_stats("[]") is None


def test_thresholds_from_the_scenario(tmp_path):
    from fsbench.scenario.load import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("name: t\nhosts: {local: {transport: local}}\n"
                    "settings: {validity: {cache_ratio: 30%, settle: 5s}}\n"
                    f"targets: {{d: {{path: {tmp_path}}}}}\nworkloads: {{w: {{tool: fio, options: {{rw: read}}}}}}\n")
    sc = load_scenario(str(path))
    limits = Thresholds.of(sc.settings.validity)
    assert (limits.cache_ratio, limits.durable_ratio, limits.settle_s, limits.quiet_s) == (0.3, 0.7, 5.0, 1.0)


def test_a_bad_threshold_is_refused_where_it_is(tmp_path):
    from fsbench.core.errors import ScenarioError
    from fsbench.scenario.load import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("name: t\nhosts: {local: {transport: local}}\nsettings: {validity: {cache_ratio: 150%}}\n"
                    f"targets: {{d: {{path: {tmp_path}}}}}\nworkloads: {{w: {{tool: fio, options: {{rw: read}}}}}}\n")
    try:
        load_scenario(str(path))
    except ScenarioError as exc:
        assert "settings.validity.cache_ratio" in str(exc) and "0% to 100%" in str(exc)
    else:
        raise AssertionError("a cache_ratio of 150% was accepted")


def test_rclone_says_how_long_after_a_close_it_uploads_and_the_watch_waits_that_long() -> None:
    """rclone's VFS uploads a written file --vfs-write-back (5 s) after its close: the store's counters stand
    still that long, so the watch's quiet period covers it (and a margin), else the write looked never stored."""
    from types import SimpleNamespace

    from fsbench.kinds import KINDS
    from fsbench.kinds.rclone import Rclone
    from fsbench.validity.case import WRITE_BACK_MARGIN_S

    kind = KINDS.get("rclone")

    def target(*options: str) -> SimpleNamespace:
        return SimpleNamespace(settings=Rclone(bucket="b", endpoint="http://x", options=tuple(options)))

    assert kind.write_back_s(target()) == 5.0  # fsbench's default: --vfs-cache-mode writes
    assert kind.write_back_s(target("--vfs-cache-mode", "full", "--vfs-write-back", "12s")) == 12.0
    assert kind.write_back_s(target("--vfs-cache-mode=writes", "--vfs-write-back=1m")) == 60.0
    assert kind.write_back_s(target("--vfs-cache-mode", "off")) == 0.0  # writes go straight to the store
    assert kind.write_back_s(target("--transfers", "8")) == 0.0  # rclone's own default mode: off
    assert WRITE_BACK_MARGIN_S > 0


def test_a_flagged_number_is_never_coloured_better_or_worse() -> None:
    from fsbench.report.tables import Style, cell

    row = {"ratio": 12.5, "ratio_p": 0.001, "mean": 8e8, "unit": "B/s", "operation": "write", "n": 3, "cv": 0.01}
    style = Style()
    assert cell(row, "bandwidth", False, style)["cls"] == "better"
    flagged = cell({**row, "validity": "flagged", "validity_detail": "not durable"}, "bandwidth", False, style)
    assert flagged["cls"] == "" and flagged["validity"] == "flagged"


def test_a_row_s_own_warning_flags_its_table_cell_with_the_warning_as_its_words() -> None:
    """A memory peak from 3 samples is listed under Warnings and also marked in its cell; a row without one is not."""
    import pandas as pd

    from fsbench.report.validity import with_validity

    common = {"target": "a", "workload": "w", "unit": "B", "stat": "max"}
    results = pd.DataFrame([
        {**common, "tool": "monitor", "job": "juicefs", "operation": "process", "metric": "memory_peak",
         "value": 1.0, "warnings": "memory peak of juicefs on h from 3 samples of its RSS (fewer than 10)"},
        {**common, "tool": "fio", "job": "j", "operation": "read", "metric": "io_bytes", "value": 2.0,
         "warnings": ""}])
    out = with_validity(results.drop(columns=["warnings", "value"]).assign(mean=[1.0, 2.0]), results)
    marked = out.set_index("tool")
    assert marked.loc["monitor", "validity"] == "flagged"
    assert marked.loc["monitor", "validity_detail"].startswith("memory peak of juicefs on h from 3 samples")
    assert marked.loc["fio", "validity"] != "flagged"
