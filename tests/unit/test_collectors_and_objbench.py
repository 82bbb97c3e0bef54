"""juicefs objbench, juicefs stats and juicefs profile: golden files over real outputs made on this machine
(tests/golden/*/inputs), hostile input, and the scenario checks of collectors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fsbench.api.tools import BuildContext
from fsbench.collectors import COLLECTORS
from fsbench.collectors.juicefs_profile import _TAIL_BLOCK, count_log, parse_profile, whole_lines
from fsbench.collectors.juicefs_stats import parse_stats
from fsbench.core.errors import ParseError, ScenarioError
from fsbench.kinds import StoreAccess
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.model import Collector
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool
from fsbench.tools.objbench.parse import parse_path, parse_text
from tests.golden.golden import check_golden
from tests.paths import GOLDEN

OBJBENCH = GOLDEN / "objbench"
COLLECTED = GOLDEN / "collectors" / "inputs"
S3 = OBJBENCH / "inputs" / "juicefs-1.4.2_objbench_fsbench-s3_p2.txt"
FILE = OBJBENCH / "inputs" / "juicefs-1.4.2_objbench_file_p2.txt"


@pytest.mark.parametrize("path", sorted((OBJBENCH / "inputs").iterdir()), ids=lambda p: p.stem)
def test_objbench_golden(path: Path) -> None:
    check_golden(parse_path(path).rows, OBJBENCH / f"{path.stem}.csv")


def test_objbench_functional_checks_and_performance() -> None:
    result = parse_path(S3)
    checks = {r["operation"]: (r["value"], r["result"], r["job"]) for r in result.rows if r["metric"] == "functional"}
    assert len(checks) == 16 and checks["put_an_object"] == (1.0, "pass", "basic")
    assert checks["change_mtime"] == (0.0, "not support", "sync")
    assert checks["get_partial_object"][0] == -1.0 and "offset out of r" in checks["get_partial_object"][1]
    assert {r["unit"] for r in result.rows if r["metric"] == "functional"} == {"result"}
    perf = {(r["operation"], r["metric"]): r["value"] for r in result.rows if r["metric"] != "functional"}
    assert perf[("upload_objects", "bandwidth")] == pytest.approx(262.84 * 2**20)
    assert perf[("put_small_objects", "rate")] == 1143.71 and perf[("list_objects", "latency_mean")] == 0.00466
    # `not support` in the performance table: no figure, an outcome row (0: not supported) the report shows
    assert ("change_permissions", "rate") not in perf and perf[("change_permissions", "supported")] == 0.0
    assert "objbench: change permissions is not supported by this object store" in result.warnings
    assert result.meta["big-object-size"] == 64 * 2**20 and result.meta["NumThreads"] == 2
    assert not [r for r in result.rows if r.get("warnings")]  # -1 is an outcome, not a negative magnitude


def test_objbench_on_file_storage_has_every_performance_item() -> None:
    ops = {r["operation"] for r in parse_path(FILE).rows if r["metric"] == "rate"}
    assert {"change_permissions", "change_owner_group", "update_mtime", "head_objects"} <= ops


@pytest.mark.parametrize("text, reason", [
    ("", "the output is empty"),
    ("2026/11/23 <FATAL>: bucket not found\n", "no juicefs objbench result table found"),
])
def test_objbench_without_a_table(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_text(text, "x")
    assert reason in info.value.reason


def test_objbench_cut_off_keeps_what_it_printed() -> None:
    text = S3.read_text()
    cut = text[: text.index("|   download objects")] + "|   download objects |  11"
    result = parse_text(cut)
    assert ("upload_objects", "bandwidth") in {(r["operation"], r["metric"]) for r in result.rows}
    assert any("cut off" in w for w in result.warnings)


def _case(options: dict) -> Case:
    return Case("c", 1, "t", "w", "juicefs-objbench", 1, {}, options, {}, None, ("local",), 1.0, 60.0)


def test_objbench_tests_the_targets_store_with_keys_in_its_environment() -> None:
    tool = get_tool("juicefs-objbench")
    ctx = BuildContext(store=StoreAccess("s3", "http://127.0.0.1:9000/b", {"ACCESS_KEY": "AK", "SECRET_KEY": "SK"}))
    inv = tool.build(_case({"threads": 2, "big_object_size": "64m", "small_object_size": "128k"}), "/mnt/x", ctx)
    assert inv.argv == ["juicefs", "objbench", "--storage", "s3", "--threads", "2", "--big-object-size", "64",
                        "--small-object-size", "128", "http://127.0.0.1:9000/b"]
    assert inv.env == {"ACCESS_KEY": "AK", "SECRET_KEY": "SK"} and "SK" not in inv.argv
    from fsbench.core.errors import FsbenchError

    with pytest.raises(FsbenchError, match="has no object store behind it"):
        tool.build(_case({}), "/mnt/x", BuildContext())


SCENARIO = """\
name: c
targets:
  plain: {path: /srv/x}
  jfs: {path: /mnt/jfs, kind: juicefs, juicefs: {meta: "sqlite3:///var/tmp/m.db"}}
workloads:
  w: {tool: fio, options: {rw: write, bs: 1m, size: 1m}}
"""


def _issues(extra: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(SCENARIO + extra, "c.yaml")
    return "\n".join(str(i) for i in err.value.issues)


def test_objbench_on_a_target_without_a_store_is_refused_where_it_is_written() -> None:
    text = _issues("  ob: {tool: juicefs-objbench, targets: [plain]}\n")
    assert "c.yaml:7" in text and "plain has none" in text


def test_collectors_are_checked() -> None:
    text = _issues(textwrap.dedent("""\
        collectors:
          s: {kind: juicefs-stats, targets: [plain, nope], workloads: [w2]}
          c: {kind: command}
          d: {kind: command, command: "iostat ${target.nope}"}
          e: {kind: iostat}
        """))
    assert "a juicefs-stats collector works on juicefs targets; plain is a directory target" in text
    assert "unknown target 'nope'" in text and "unknown workload 'w2'" in text
    assert "a command collector needs `command:`" in text and "unknown placeholder ${target.nope}" in text
    assert "unknown collector kind 'iostat'" in text


def test_collectors_apply_to_their_targets_and_workloads() -> None:
    sc = load_scenario_text(SCENARIO + textwrap.dedent("""\
        collectors:
          stats: {kind: juicefs-stats}
          io: {kind: command, command: iostat -x 1, workloads: [w]}
        """), "c.yaml")
    stats, io = sc.collectors["stats"], sc.collectors["io"]
    assert sc.collector_targets(stats, COLLECTORS.get("juicefs-stats").target_kinds) == ["jfs"]
    assert stats.applies("jfs", "w", ["jfs"]) and not stats.applies("plain", "w", ["jfs"])
    assert io.applies("plain", "w", ["plain", "jfs"]) and not io.applies("plain", "other", ["plain", "jfs"])
    argv = COLLECTORS.get("juicefs-stats").command(stats, {"target.path": "/mnt/jfs"})
    assert argv == ["juicefs", "stats", "/mnt/jfs", "--verbosity", "1", "--interval", "1"]


def test_juicefs_stats_columns_units_and_summaries() -> None:
    got = parse_stats((COLLECTED / "juicefs-1.4.2_stats_verbosity1.txt").read_text(), "h1", "stats", 1.0)
    check_golden(got.rows, GOLDEN / "collectors" / "juicefs-1.4.2_stats_verbosity1.csv")
    rows = {(r["operation"], r["metric"], r["stat"]): r["value"] for r in got.rows}
    assert rows[("client", "cpu_usage", "max")] == 21.0 and rows[("client", "memory_peak", "value")] == 112 * 2**20
    assert rows[("fuse", "rate", "max")] == 467 and rows[("fuse_write", "bandwidth", "max")] == 17 * 2**20
    # latency weighted by the operations of its interval: (17 x 0.32 + 467 x 0.30 + ...) / (17 + 467 + ...)
    assert rows[("fuse", "latency_mean", "mean")] == pytest.approx(0.00029, abs=0.00001)
    assert rows[("object_put", "rate", "max")] == 14 and rows[("object_get", "latency_mean", "mean")] == pytest.approx(0.0051)
    series = [s for s in got.series if s["metric"] == "fuse.ops"]
    assert len(series) == 12 and series[2] == {"t": 3.0, "host": "h1", "scope": "stats", "metric": "fuse.ops",
                                               "value": 467.0, "unit": "op/s"}


def test_a_cut_access_log_is_replayed_from_a_copy_of_its_whole_lines(tmp_path) -> None:
    # the recording is stopped by a kill: its last line can end before its <duration>, which juicefs
    # profile 1.4.2 panics on; the replay reads the whole lines, the recording stays as received
    log = (COLLECTED / "juicefs-1.4.2_accesslog_bench_p1.txt").read_text()
    cut = log + log.splitlines()[0][:60]
    raw = tmp_path / "collector-profile.txt"
    raw.write_text(cut)
    kind = COLLECTORS.get("juicefs-profile")
    argv = kind.after(Collector(name="profile", kind="juicefs-profile"), str(raw))
    copy = tmp_path / "collector-profile.whole.txt"
    assert argv == ["juicefs", "profile", str(copy), "--interval", "0"]
    assert copy.read_text() == log and raw.read_text() == cut
    # a log that ends with its line break, an empty one and an absent one are replayed as they are
    raw.write_text(log)
    assert whole_lines(raw) == raw
    (tmp_path / "empty.txt").write_text("")
    assert whole_lines(tmp_path / "empty.txt") == tmp_path / "empty.txt"
    assert whole_lines(tmp_path / "absent.txt") == tmp_path / "absent.txt"


@pytest.mark.parametrize("tail", [0, 1, _TAIL_BLOCK - 1, _TAIL_BLOCK, _TAIL_BLOCK + 1, 3 * _TAIL_BLOCK])
def test_whole_lines_finds_the_last_line_break_across_read_blocks(tmp_path, tail) -> None:
    raw = tmp_path / "log.txt"
    raw.write_bytes(b"a line\n" * 3 + b"x" * tail)
    got = whole_lines(raw)
    assert got.read_bytes() == b"a line\n" * 3
    raw.write_bytes(b"y" * (tail + 1))  # no line break at all: nothing whole to replay
    assert whole_lines(raw).read_bytes() == b""


def test_juicefs_stats_without_a_header_is_an_error() -> None:
    with pytest.raises(ValueError, match="no juicefs stats header"):
        parse_stats("<FATAL>: path is not a mount point\n", "h1", "stats", 1.0)


def test_juicefs_profile_replay_and_the_log_agree() -> None:
    replayed = parse_profile((COLLECTED / "juicefs-1.4.2_profile_interval0.txt").read_text())
    counted = count_log((COLLECTED / "juicefs-1.4.2_accesslog_bench_p1.txt").read_text())
    assert list(replayed)[:3] == ["open", "read", "write"]  # most total time first, as juicefs prints it
    assert set(replayed) == set(counted)
    for op, (count, _mean, total) in replayed.items():
        assert counted[op][0] == count and counted[op][2] == pytest.approx(total, abs=2e-6), op
    kind = COLLECTORS.get("juicefs-profile")
    got = kind.parse(Collector(name="profile", kind="juicefs-profile"), (COLLECTED / "juicefs-1.4.2_accesslog_bench_p1.txt").read_text(), None, "h1")
    assert any("counted from the log itself" in w for w in got.warnings)
    assert {(r["operation"], r["metric"]) for r in got.rows} >= {("create", "ops"), ("flush", "latency_mean"),
                                                                 ("write", "time")}
