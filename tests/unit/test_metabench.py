"""metabench's parser and adapter: golden files over real outputs made on this machine (tmpfs, JuiceFS on
Redis, s3fs and rclone on fsbench's S3 server, two SSH hosts), numbers checked against the JSON, hostile
inputs, and the option checks that keep the tool in the case's folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsbench.core.errors import ParseError, ScenarioError
from fsbench.core.tidy import METRIC_UNITS
from fsbench.scenario.load import load_scenario_text
from fsbench.tools import get_tool
from fsbench.tools.metabench import combine_hosts, parse_path, parse_text
from fsbench.tools.metabench.parse import CALLS, CONCURRENCY, LATENCIES
from tests.golden.golden import check_golden
from tests.paths import GOLDEN

GOLDEN_DIR = GOLDEN / "metabench"
INPUTS = sorted((GOLDEN_DIR / "inputs").glob("*.json"))
TWO_HOSTS = GOLDEN_DIR / "inputs" / "two-hosts"
TMPFS = GOLDEN_DIR / "inputs" / "calls_tmpfs_200_iterations.json"
PLUGIN = get_tool("metabench")


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_golden(path: Path) -> None:
    check_golden(parse_path(path).rows, GOLDEN_DIR / f"{path.stem}.csv")


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_every_number_is_the_json_s_own_in_seconds(path: Path) -> None:
    doc = json.loads(path.read_text())
    rows = {(r["operation"], r["metric"]): r for r in parse_path(path).rows}
    ok = [op for op in doc["operations"] if op["status"] == "ok"]
    assert ok and len(rows) == sum(len(LATENCIES) + 1 + (doc["mode"] == "concurrency") + ("engine_requests" in op)
                                   for op in ok)
    for op in ok:
        name = op["name"]
        assert rows[(name, "ops")]["value"] == op["count"]
        if "engine_requests" in op:  # the client's own count of its metadata-engine requests, per counted call
            row = rows[(name, "engine_requests_per_call")]
            assert row["value"] == op["engine_requests"] / op["engine_calls"] and row["unit"] == "request/call"
            assert row["engine_calls"] == op["engine_calls"]
        for key, metric in LATENCIES:
            assert rows[(name, metric)]["value"] == pytest.approx(op[key] / 1e9, rel=1e-12)
            assert rows[(name, metric)]["unit"] == METRIC_UNITS[metric] == "s"
        stats = [rows[(name, m)]["value"] for m in ("latency_min", "latency_p50", "latency_p90", "latency_p99",
                                                    "latency_p99.9", "latency_max")]
        assert stats == sorted(stats) and stats[0] > 0  # percentiles of real samples, in order
        if doc["mode"] == "concurrency":
            assert rows[(name, "rate")]["value"] == op["rate"] and rows[(name, "rate")]["unit"] == "op/s"
            assert op["rate"] == pytest.approx(op["count"] * 1e9 / op["wall_ns"], abs=5e-4)  # printed with %.3f
    assert all(r["tool"] == "metabench" and r["host"] == "" and r["mode"] == doc["mode"] for r in rows.values())


def test_tmpfs_has_every_operation_of_seed_000_in_its_order() -> None:
    result = parse_path(TMPFS)
    assert list(dict.fromkeys(r["operation"] for r in result.rows)) == list(CALLS)
    assert result.warnings == [] and {r["iterations"] for r in result.rows} == {200}
    assert result.meta["host"] and result.meta["timer_overhead_ns"] < 1000  # a clock read costs nanoseconds


def test_what_a_file_system_does_not_offer_is_a_warning_not_a_row() -> None:
    s3fs = parse_path(GOLDEN_DIR / "inputs" / "calls_s3fs_xattr_and_link_unsupported.json")
    absent = {"setxattr", "getxattr", "removexattr", "listxattr_1", "listxattr_10", "link"}
    assert not absent & {r["operation"] for r in s3fs.rows} and "symlink" in {r["operation"] for r in s3fs.rows}
    assert sorted(w.split(":")[0] for w in s3fs.warnings) == sorted(absent)
    assert all("not supported by this file system" in w and "Operation not supported" in w for w in s3fs.warnings)
    rclone = parse_path(GOLDEN_DIR / "inputs" / "calls_rclone_xattr_link_symlink_fail_with_eio.json")
    assert len(rclone.warnings) == 7 and all(" failed (" in w and "Input/output error" in w for w in rclone.warnings)


def test_warm_and_cold_entry_caches_tell_apart_what_reaches_juicefs() -> None:
    def mean(name: str, op: str) -> float:
        rows = parse_path(GOLDEN_DIR / "inputs" / f"{name}.json").rows
        return next(r["value"] for r in rows if r["operation"] == op and r["metric"] == "latency_mean")

    warm, cold = "calls_juicefs_redis_warm_entry_cache_no_xattr", "calls_juicefs_redis_cache_wait_1.2s"
    assert mean(warm, "lookup") < 20e-6 < 50e-6 < mean(cold, "lookup")  # the kernel's dentry vs a LOOKUP to Redis
    assert mean(warm, "getattr") > 50e-6 and mean(cold, "getattr") > 50e-6  # statx forces a GETATTR either way


def test_concurrency_operations_are_named_as_nnbench_s() -> None:
    result = parse_path(GOLDEN_DIR / "inputs" / "concurrency_tmpfs_4_threads.json")
    assert list(dict.fromkeys(r["operation"] for r in result.rows)) == list(CONCURRENCY)
    assert {r["threads"] for r in result.rows} == {4} and {r["files_per_thread"] for r in result.rows} == {200}


def test_two_hosts_give_per_host_rows_and_an_aggregate() -> None:
    parts = {h: parse_path(TWO_HOSTS / f"{h}.json") for h in ("h2", "h3")}
    combined = combine_hosts(parts)
    check_golden(combined.rows, GOLDEN_DIR / "two-hosts.csv")
    rows = {(r["host"], r["operation"], r["metric"]): r["value"] for r in combined.rows}
    for op in CONCURRENCY:
        assert rows[("all", op, "rate")] == pytest.approx(rows[("h2", op, "rate")] + rows[("h3", op, "rate")])
        assert rows[("all", op, "ops")] == rows[("h2", op, "ops")] + rows[("h3", op, "ops")]
        n2, n3 = rows[("h2", op, "ops")], rows[("h3", op, "ops")]
        weighted = (rows[("h2", op, "latency_mean")] * n2 + rows[("h3", op, "latency_mean")] * n3) / (n2 + n3)
        assert rows[("all", op, "latency_mean")] == pytest.approx(weighted)
        assert rows[("all", op, "latency_max")] == max(rows[("h2", op, "latency_max")], rows[("h3", op, "latency_max")])
    assert combine_hosts({"h2": parts["h2"]}).rows == [{**r, "host": "h2"} for r in parts["h2"].rows]


def test_hosts_that_did_not_start_together_are_said_to() -> None:
    parts = {h: parse_path(TWO_HOSTS / f"{h}.json") for h in ("h2", "h3")}
    assert combine_hosts(parts).warnings == []  # the barrier started each operation on both at once
    late = parts["h3"].meta["phases"]
    start, end = late["rename"]
    late["rename"] = (start + 0.5, end + 0.5)  # as if h3's clock were half a second ahead
    spans = (late["rename"], parts["h2"].meta["phases"]["rename"])
    skew = max(s for s, _ in spans) - min(s for s, _ in spans)
    assert 0.49 < skew < 0.51 and combine_hosts(parts).warnings == [
        f"rename: the hosts started it {skew * 1e3:.1f} ms apart, {skew / min(e - s for s, e in spans):.0%} of its "
        "shortest run (clocks that disagree, or no barrier): the aggregate is not of one simultaneous load"]


# --- hostile inputs: a ParseError that says what is wrong ----------------------------------------------

def _error(text: str) -> str:
    with pytest.raises(ParseError) as info:
        parse_text(text, "hostile.json")
    assert info.value.tool == "metabench" and info.value.file == "hostile.json"
    return info.value.reason


def _doc(**changes: object) -> str:
    doc = json.loads(TMPFS.read_text())
    doc.update(changes)
    return json.dumps(doc)


def test_truncated_outputs_say_so() -> None:
    text = TMPFS.read_text()
    for share in (0.01, 0.3, 0.5, 0.9, 0.999):
        reason = _error(text[: int(len(text) * share)])
        assert "not a complete JSON document" in reason and "truncated" in reason, reason


@pytest.mark.parametrize(("text", "says"), [
    ("", "empty output: metabench wrote nothing"),
    ("\n\n  \n", "empty output"),
    ("metabench: --dir /x is not a folder\n", "it begins with 'metabench: --dir /x is not a folder'"),
    ("\x00\xff garbage \ufffd{{", "not a metabench JSON document"),
    ('{"tool": "metabench", "schema": 1 "mode": "calls"}', "Expecting ',' delimiter at line 1 column 35"),
    ("[1, 2, 3]", "not a metabench JSON document: it begins with '[1, 2, 3]'"),
    ('{"fio version": "fio-3.33", "jobs": []}', 'not a metabench result'),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "not a metabench result"),
])
def test_garbage_is_refused_with_the_reason(text: str, says: str) -> None:
    assert says in _error(text)


def test_documents_that_are_not_whole_runs_are_refused() -> None:
    assert "the run did not finish" in _error(_doc(complete=False))
    assert "schema 2 is not one this parser reads" in _error(_doc(schema=2))
    assert "unknown mode 'fast'" in _error(_doc(mode="fast"))
    assert "no `operations` list" in _error(_doc(operations={"mkdir": 1}))
    assert "the run holds no operation" in _error(_doc(operations=[]))
    assert "`iterations` is missing or not a whole number" in _error(_doc(iterations="many"))
    ops = json.loads(TMPFS.read_text())["operations"]
    assert "operation #1: 'newchunk' is not a metabench calls operation" in _error(
        _doc(operations=[{**ops[0], "name": "newchunk"}]))
    assert "operation mkdir appears twice" in _error(_doc(operations=[ops[0], ops[0]]))
    assert "'create_write' is not a metabench calls operation" in _error(
        _doc(operations=[{**ops[0], "name": "create_write"}]))
    assert "operation mkdir: status 'maybe'" in _error(_doc(operations=[{**ops[0], "status": "maybe"}]))
    assert "operation mkdir: status ok with 0 timed calls" in _error(_doc(operations=[{**ops[0], "count": 0}]))
    assert "operation mkdir: `p99_ns` is missing" in _error(_doc(operations=[{k: v for k, v in ops[0].items()
                                                                              if k != "p99_ns"}]))
    assert "`mean_ns` is missing or not a number ('fast')" in _error(_doc(operations=[{**ops[0], "mean_ns": "fast"}]))


def test_non_finite_and_endless_numbers_are_no_measurements() -> None:
    text = TMPFS.read_text()
    mean = f'"mean_ns": {json.loads(text)["operations"][0]["mean_ns"]}'
    assert "NaN is not a measurement" in _error(text.replace(mean, '"mean_ns": NaN', 1))
    assert "`mean_ns` is missing or not a number (inf)" in _error(text.replace(mean, '"mean_ns": 1e999', 1))
    assert "not a metabench result" in _error(text.replace(mean, '"mean_ns": ' + "9" * 5000, 1))


def test_a_negative_latency_is_kept_but_flagged() -> None:
    text = TMPFS.read_text()
    mean = f'"mean_ns": {json.loads(text)["operations"][0]["mean_ns"]}'
    result = parse_text(text.replace(mean, '"mean_ns": -5', 1))
    bad = [r for r in result.rows if r.get("warnings")]
    assert [(r["operation"], r["metric"]) for r in bad] == [("mkdir", "latency_mean")]
    assert "negative latency_mean" in bad[0]["warnings"]


def test_a_run_without_its_json_says_why(tmp_path: Path) -> None:
    (tmp_path / "stderr").write_text("metabench: cannot make its working folder /x/metabench.1: Read-only file system\n")
    with pytest.raises(ParseError, match="wrote no result: metabench: cannot make its working folder"):
        PLUGIN.parse_outputs(tmp_path)
    with pytest.raises(ParseError, match="cannot read"):
        parse_path(tmp_path / "nothing.json")


# --- options: checked at validation, nothing outside the case's folder -----------------------------------

HEAD = "name: s\ntargets:\n  t: {path: /srv/bench/t}\nworkloads:\n  m:\n    tool: metabench\n"


def _issues(options: str, extra: str = "") -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(HEAD + f"    options: {options}\n" + extra, "s.yaml")
    return str(err.value)


def test_fsbench_owns_the_folder_and_the_output() -> None:
    text = _issues("{dir: /etc, output: /etc/passwd}")
    assert "fsbench sets --dir to the case's own folder on the target: metabench writes only there" in text
    assert "fsbench reads metabench's JSON from metabench.json in the case's raw folder" in text


def test_options_are_checked_with_their_mode() -> None:
    text = _issues("{mode: calls, iteration: 5, threads: 4, operations: [mkdir, newchunk, create_write, mkdir]}")
    assert "unknown metabench option 'iteration'" in text and "did you mean 'iterations'?" in text
    assert "threads belongs to mode concurrency, this workload is mode calls" in text
    assert "newchunk is JuiceFS-internal" in text
    assert "'create_write' is not a metabench calls operation" in text and "it is one of mode concurrency" in text
    assert "an operation is listed twice" in text
    text = _issues("{mode: concurrency, threads: 0, files: -1, bytes: 4q, operations: [rename, create_write]}")
    assert "threads must be a whole number from 1 to 4096, got 0" in text and "files must be a whole number" in text
    assert "bytes='4q' is not a size" in text and "run in the order create_write, open_read, rename, delete" in text
    assert "cache_wait='soon' is not a duration" in _issues("{cache_wait: soon}")
    assert "mode must be calls or concurrency, got 'fast'" in _issues("{mode: fast}")


def test_a_device_target_is_refused() -> None:
    text = "name: s\ntargets:\n  dev: {path: /dev/loop7, kind: device, destructive: true}\nworkloads:\n" \
           "  m: {tool: metabench}\n"
    with pytest.raises(ScenarioError, match="metabench cannot run on target dev: a device target is a device, "
                                            "metabench works on a directory"):
        load_scenario_text(text, "s.yaml")


def test_a_sweep_of_threads_is_checked_point_by_point() -> None:
    text = _issues("{mode: concurrency}", "    sweep: {product: {threads: [1, 10, 5000]}}\n")
    assert "workloads.m.sweep.product.threads[2]" in text and "got 5000" in text
    sc = load_scenario_text(HEAD + "    options: {mode: concurrency, files: 50, bytes: 4k}\n"
                            "    sweep: {product: {threads: [1, 10, 20]}}\n", "s.yaml")
    assert sc.workloads["m"].sweep.points() == [{"threads": 1}, {"threads": 10}, {"threads": 20}]


def test_command_lines() -> None:
    calls = PLUGIN.argv({"operations": ["mkdir", "lookup"], "iterations": 50, "warmup": 5, "cache_wait": "1500ms"},
                        "/mnt/x/case")
    assert calls == ["metabench", "calls", "--dir", "/mnt/x/case", "--output", "metabench.json", "--ops",
                     "mkdir,lookup", "--iterations", "50", "--warmup", "5", "--cache-wait", "1.5"]
    conc = PLUGIN.argv({"mode": "concurrency", "threads": 20, "files": 10, "bytes": "4k", "binary": "/opt/mb"}, "/d")
    assert conc == ["/opt/mb", "concurrency", "--dir", "/d", "--output", "metabench.json", "--threads", "20",
                    "--files", "10", "--bytes", "4096"]
    assert PLUGIN.version_argv({}) == ["metabench", "--version"]
    # the natural order keeps each mode's own: seed 000's list, and create_write, open_read, rename, delete
    order = list(PLUGIN.operations)
    assert [o for o in order if o in CALLS] == list(CALLS)
    assert [o for o in order if o in CONCURRENCY] == list(CONCURRENCY)


def test_estimates_grow_with_the_work() -> None:
    small = PLUGIN.estimate_seconds({"iterations": 10}, None, {})
    assert 1 < small < PLUGIN.estimate_seconds({"iterations": 100}, None, {})
    waits = PLUGIN.estimate_seconds({"iterations": 10, "cache_wait": "2s"}, None, {}) - small
    assert waits == pytest.approx(4.0, abs=0.2)  # lookup and access each wait once
    assert PLUGIN.estimate_seconds({"mode": "concurrency", "threads": 10, "files": 1000}, None, {}) > \
        PLUGIN.estimate_seconds({"mode": "concurrency", "threads": 1, "files": 1000}, None, {})


def test_fsbench_ingest_reads_existing_outputs(tmp_path: Path) -> None:
    from fsbench.ingest import ingest_files

    junk = tmp_path / "junk.json"
    junk.write_text('{"tool": "metabench", "schema": 1, "mode": "calls", "operations": [')
    rows, errors = ingest_files("metabench", [str(TMPFS), str(junk)])
    assert len(rows) == len(parse_path(TMPFS).rows) and {r["source"] for r in rows} == {str(TMPFS)}
    assert len(errors) == 1 and "truncated" in errors[0].reason


def test_across_hosts_every_host_gets_its_folder_and_the_barrier() -> None:
    from types import SimpleNamespace

    from fsbench.api.tools import BuildContext, HostInfo
    from fsbench.run.plan_show import _invocation

    case = SimpleNamespace(options={"mode": "concurrency", "threads": 10, "files": 100})
    ctx = BuildContext({"c1": HostInfo("c1", "10.0.0.11"), "c2": HostInfo("c2", "fd00::12")}, port=4242)
    inv = PLUGIN.build(case, "/mnt/shared/case", ctx)
    assert inv.argv == [] and inv.outputs == ["metabench.json"]
    assert inv.servers == {"c1": ["metabench", "barrier", "--listen", "10.0.0.11:4242", "--parties", "2"]}
    assert inv.wait_ports == [("10.0.0.11", 4242)]
    assert inv.host_dirs == {"c1": "/mnt/shared/case/c1", "c2": "/mnt/shared/case/c2"}
    for host, argv in inv.per_host.items():
        assert argv[argv.index("--dir") + 1] == f"/mnt/shared/case/{host}" and argv[-2:] == ["--barrier",
                                                                                               "10.0.0.11:4242"]
    shown = "\n".join(_invocation("run", inv))
    assert "on every host at once" in shown and "[c1, in the background] metabench barrier" in shown
    assert "[c2] $ metabench concurrency --dir /mnt/shared/case/c2" in shown
    ipv6 = PLUGIN.build(case, "/d", BuildContext({"a": HostInfo("a", "fd00::1"), "b": HostInfo("b", "x")}, port=9))
    assert ipv6.servers["a"][3] == "[fd00::1]:9"
    one = PLUGIN.build(case, "/d", BuildContext({"a": HostInfo("a", "10.0.0.1")}, port=9))
    assert not one.per_host and not one.servers and one.argv[:2] == ["metabench", "concurrency"]


def test_calls_the_engine_never_saw_are_flagged_as_the_client_s_cache() -> None:
    """A real JuiceFS-on-Redis run with --counters: read_1 and read_10 caused no metadata-engine request (the
    client had the file's slices from writing it), every other operation at least one per call."""
    from fsbench.validity.judge import checks_of, judge
    from fsbench.validity.settings import Thresholds

    rows = parse_path(GOLDEN_DIR / "inputs" / "calls_juicefs_redis_engine_counters.json").rows
    every = judge(rows, "metabench", checks_of(PLUGIN), None, Thresholds.of({}))
    verdicts = {v.operation: v for v in every if v.check == "served by the client's cache"}
    assert set(verdicts) == set(CALLS)
    assert {op for op, v in verdicts.items() if not v.ok} == {"read_1", "read_10"}
    assert verdicts["read_1"].detail.startswith("0.00 metadata-engine requests per call (the client's count over 50 "
                                                "of its timed calls): the calls were answered by a cache")
    assert verdicts["lookup"].detail == ("1.00 metadata-engine requests per call (the client's count over 50 of its "
                                         "timed calls)")
    marked = {(r["operation"], r["validity"]) for r in rows if r["metric"] == "latency_mean"}
    assert ("read_1", "flagged") in marked and ("mkdir", "ok") in marked
    # and no call sent far more requests than its operation needs (a cached one is the other check's)
    more = {v.operation: v for v in every if v.check == "far more engine requests than the call needs"}
    assert set(more) == set(CALLS) - {"read_1", "read_10"} and all(v.ok for v in more.values())


def test_a_call_that_sent_far_more_engine_requests_than_it_needs_is_flagged() -> None:
    from fsbench.validity.engine_needs import FAR_MORE_REQUESTS
    from fsbench.validity.settings import Thresholds
    from fsbench.validity.watch import Evidence

    def row(op: str, per_call: float) -> dict:
        return {"tool": "metabench", "operation": op, "metric": "engine_requests_per_call", "stat": "value",
                "value": per_call, "host": "h", "engine_calls": 20}

    seen = Evidence.host_only(None)
    got = {v.operation: v for v in FAR_MORE_REQUESTS.judge("metabench", [
        row("getattr", 3.1), row("create", 3.05), row("link", 8.0), row("read_1", 0.0), row("newop", 9.0)], seen,
        Thresholds())}
    assert set(got) == {"getattr", "create", "link"}  # a cached call and an operation of unknown need: not judged
    assert not got["getattr"].ok and got["getattr"].detail.startswith(
        "3.10 metadata-engine requests per call, where a getattr needs 1 (JuiceFS's client with its caches on): more "
        "than 2 times that, so this latency is several round trips")
    assert got["create"].ok and got["link"].ok  # 8 for a link's 4: twice, not more


def test_engine_counters_go_to_metabench_where_the_target_kind_offers_them() -> None:
    from fsbench.api.tools import BuildContext
    from fsbench.kinds import KINDS

    counters = KINDS.get("juicefs").meta_counters
    argv = PLUGIN.argv({"mode": "calls"}, "/mnt/x/case", counters)
    assert argv[-4:] == ["--counters", ".stats", "--counters-prefix", "juicefs_meta_ops_total_"]
    assert "--counters" not in PLUGIN.argv({"mode": "calls", "engine_counters": False}, "/mnt/x/case", counters)
    assert "--counters" not in PLUGIN.argv({"mode": "concurrency"}, "/mnt/x/case", counters)
    assert "--counters" not in PLUGIN.argv({"mode": "calls"}, "/mnt/x/case", None)  # a kind that counts nothing
    assert BuildContext().meta_counters is None
