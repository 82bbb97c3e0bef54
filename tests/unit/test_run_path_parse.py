"""A run's parse (the plug-in's parse_outputs over a case's raw folder) and `fsbench ingest`'s (parse_file)
are one code path per format: the same rows, warnings and errors for every real output, each file read
as a stream, so a 100 MB output costs little memory on either path (measured in a fresh process).

Fixtures and golden inputs are read in place: the raw folders hold links to them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from fsbench.collectors import COLLECTORS
from fsbench.collectors import juicefs_stats as stats_module
from fsbench.collectors import session as session_module
from fsbench.collectors.juicefs_stats import MAX_SAMPLES, parse_stats
from fsbench.collectors.session import CollectorSession
from fsbench.core.errors import FsbenchError, ParseError
from fsbench.core.tidy import ParseResult
from fsbench.tools import get_tool
from tests.paths import FIXTURES, GOLDEN

FIO = FIXTURES / "fio"
MDTEST = FIXTURES / "mdtest"


def _raw(tmp_path: Path, files: dict[str, Path]) -> Path:
    """A case's raw folder whose outputs are links to real files (nothing is copied)."""
    raw = tmp_path / "raw"
    raw.mkdir()
    for name, target in files.items():
        (raw / name).symlink_to(target)
    return raw


def _outcome(parse: Callable[[], ParseResult]) -> tuple:
    try:
        result = parse()
    except ParseError as exc:
        return "error", exc.tool, exc.reason
    return "rows", result.rows, result.warnings


def _same_on_both_paths(tool: str, path: Path, raw: Path, source: Path) -> None:
    """parse_outputs(raw) and parse_file(path) agree; an error names the file the run kept."""
    ingest = _outcome(lambda: get_tool(tool).parse_file(path))
    run = _outcome(lambda: get_tool(tool).parse_outputs(raw))
    assert run == ingest
    if run[0] == "error":
        with pytest.raises(ParseError) as info:
            get_tool(tool).parse_outputs(raw)
        assert info.value.file == str(source)


def _mdtest_stderr(stdout: Path) -> Path | None:
    stderr = stdout.with_name(stdout.name.removesuffix(".stdout.txt") + ".stderr.txt")
    return stderr if stderr.is_file() else None


CASES: list[tuple[str, Path, str]] = (
    [("fio", p, "fio.json") for p in sorted(FIO.glob("json*.json"))]
    + [("fio", p, "stdout") for p in sorted(FIO.glob("normal_*.txt")) + sorted(FIO.glob("terse_*.txt"))]
    + [("mdtest", p, "stdout") for p in sorted(MDTEST.glob("*/*.stdout.txt"))]
    + [("juicefs-bench", p, "stdout") for p in sorted((FIXTURES / "public" / "juicefs-bench").iterdir())
       + sorted((GOLDEN / "juicefs-bench" / "inputs").iterdir())]
    + [("juicefs-objbench", p, "stdout") for p in sorted((GOLDEN / "objbench" / "inputs").iterdir())]
    + [("metabench", p, "metabench.json") for p in sorted((GOLDEN / "metabench" / "inputs").glob("*.json"))]
)


@pytest.mark.parametrize("tool, path, name", CASES, ids=[f"{t}/{p.parent.name}/{p.name}" for t, p, _ in CASES])
def test_a_run_and_ingest_give_the_same_result(tool: str, path: Path, name: str, tmp_path: Path) -> None:
    files = {name: path}
    if tool == "mdtest" and (stderr := _mdtest_stderr(path)):
        files["stderr"] = stderr
    raw = _raw(tmp_path, files)
    _same_on_both_paths(tool, path, raw, raw / name)


FOLDERS = ([("nnbench", p) for p in sorted((GOLDEN / "nnbench" / "inputs").iterdir())]
           + [("vdbench", p) for p in sorted((FIXTURES / "public" / "vdbench").glob("*/*")) if p.name != "params"])


@pytest.mark.parametrize("tool, folder", FOLDERS, ids=[f"{t}/{p.parent.name}/{p.name}" for t, p in FOLDERS])
def test_a_run_and_ingest_give_the_same_result_for_folders(tool: str, folder: Path, tmp_path: Path) -> None:
    if tool == "nnbench":  # the case's raw folder is the folder itself
        _same_on_both_paths(tool, folder, folder, folder / "NNBench_results.log")
    else:
        raw = _raw(tmp_path, {"output": folder})
        _same_on_both_paths(tool, folder, raw, raw / "output")


def test_cases_found() -> None:
    counts = {t: sum(1 for c in CASES + FOLDERS if c[0] == t) for t in ("fio", "mdtest", "vdbench", "nnbench")}
    assert counts["fio"] >= 20 and counts["mdtest"] == 85 and counts["vdbench"] >= 14 and counts["nnbench"] >= 5


# --- stdout, else stdout and stderr together ----------------------------------------------------------

TABLE = GOLDEN / "juicefs-bench" / "inputs" / "juicefs-1.4.2_bench_p2_pty_colours.txt"


def test_a_table_logged_to_stderr_is_found_after_stdout(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "stdout").write_text("  Write big blocks: 10/1024 [=>   ] 1%\n")
    (raw / "stderr").write_text(TABLE.read_text())
    result = get_tool("juicefs-bench").parse_outputs(raw)
    assert result.rows == get_tool("juicefs-bench").parse_file(TABLE).rows


@pytest.mark.parametrize("tool", ["juicefs-bench", "juicefs-objbench"])
def test_streams_that_are_absent_or_unreadable_give_a_parse_error_naming_stdout(tool: str, tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    with pytest.raises(ParseError, match="empty") as info:
        get_tool(tool).parse_outputs(raw)
    assert info.value.file == str(raw / "stdout")
    (raw / "stdout").mkdir()  # not a file: open fails
    with pytest.raises(ParseError, match="cannot read the file") as info:
        get_tool(tool).parse_outputs(raw)
    assert info.value.file == str(raw / "stdout")


def test_mdtest_reads_the_error_from_its_stderr(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "stdout").write_text("")
    (raw / "stderr").write_text("noise\n" * 10_000 + "[vm:1] *** An error occurred in MPI_Barrier\n")
    with pytest.raises(ParseError, match=re.escape("stderr says: [vm:1] *** An error occurred in MPI_Barrier")):
        get_tool("mdtest").parse_outputs(raw)


def test_metabench_quotes_the_end_of_its_stderr(tmp_path: Path) -> None:
    (tmp_path / "stderr").write_text("warning\n" * 50_000 + "\n\nmetabench: cannot stat /x: Permission denied\n\n")
    with pytest.raises(ParseError, match="wrote no result: warning warning metabench: cannot stat /x"):
        get_tool("metabench").parse_outputs(tmp_path)


def test_outputs_far_bigger_than_their_tools_write_are_refused_unread(tmp_path: Path, monkeypatch) -> None:
    from fsbench.tools.metabench import parse as metabench_parse
    from fsbench.tools.nnbench import parse as nnbench_parse

    monkeypatch.setattr(metabench_parse, "MAX_BYTES", 1000)
    (tmp_path / "metabench.json").write_text("{" + " " * 1000 + "}")
    with pytest.raises(ParseError, match="not a metabench document|a metabench document is a few KB") as info:
        get_tool("metabench").parse_outputs(tmp_path)
    assert info.value.file == str(tmp_path / "metabench.json")
    monkeypatch.setattr(nnbench_parse, "MAX_RESULTS", 1000)
    (tmp_path / "NNBench_results.log").write_text("x" * 1001)
    with pytest.raises(ParseError, match="not one case's results log") as info:
        get_tool("nnbench").parse_outputs(tmp_path)
    assert info.value.file == str(tmp_path / "NNBench_results.log")


# --- collectors ---------------------------------------------------------------------------------------

COLLECTED = GOLDEN / "collectors" / "inputs"
STATS = COLLECTED / "juicefs-1.4.2_stats_verbosity1.txt"


def _stats_text(samples: int) -> tuple[str, list[float]]:
    """A juicefs stats output of many samples (the fixture's header, its sample lines with cpu changed)."""
    lines = STATS.read_text().splitlines(keepends=True)
    body = lines[2:]
    cpus = [float(i % 97) for i in range(samples)]
    out = [re.sub(r"^ *[\d.]+%", f"{cpu:4.1f}%", body[i % len(body)]) for i, cpu in enumerate(cpus)]
    return "".join(lines[:2] + out), cpus


def test_a_long_stats_output_keeps_a_thinned_series_and_rows_over_every_sample(tmp_path: Path) -> None:
    text, cpus = _stats_text(3 * MAX_SAMPLES + 5)
    path = tmp_path / "stats.txt"
    path.write_text(text)
    with path.open() as f:
        got = parse_stats(f, "h1", "stats", 1.0)
    assert got.rows == parse_stats(text, "h1", "stats", 1.0).rows  # one code path for texts and files
    cpu = [s for s in got.series if s["metric"] == "usage.cpu"]
    assert MAX_SAMPLES // 2 <= len(cpu) <= MAX_SAMPLES
    stride = cpu[1]["t"] - cpu[0]["t"]
    assert stride == 4.0 and all(s["value"] == cpus[int(s["t"]) - 1] for s in cpu)
    rows = {(r["operation"], r["metric"], r["stat"]): r["value"] for r in got.rows}
    assert rows[("client", "cpu_usage", "mean")] == pytest.approx(sum(cpus) / len(cpus))
    assert rows[("client", "cpu_usage", "max")] == max(cpus)
    assert any("keeps every 4th" in w for w in got.warnings)


def test_a_short_stats_output_keeps_every_sample() -> None:
    got = parse_stats(STATS.read_text(), "h1", "stats", 1.0)
    assert len([s for s in got.series if s["metric"] == "usage.cpu"]) == 12
    assert not any("keeps every" in w for w in got.warnings)


class _Collector:
    name, interval_s, options = "c", 1.0, {}


class _NoController:
    def run(self, *args, **kwargs):
        raise FsbenchError("no juicefs here")


def _session(tmp_path: Path, kind_name: str, output: str) -> CollectorSession:
    session = CollectorSession(_Collector(), COLLECTORS.get(kind_name), "h1", None, ["true"], tmp_path, 10.0)
    session.output.write_text(output)
    return session


@pytest.mark.parametrize("kind, source", [("juicefs-stats", STATS),
                                          ("juicefs-profile", COLLECTED / "juicefs-1.4.2_accesslog_bench_p1.txt")])
def test_a_session_streams_its_output_to_the_kind(kind: str, source: Path, tmp_path: Path) -> None:
    got = _session(tmp_path, kind, source.read_text()).finish(_NoController())
    assert got.rows == COLLECTORS.get(kind).parse(_Collector(), source.read_text(), None, "h1").rows


def test_a_kind_that_reads_texts_is_not_given_a_huge_one(tmp_path: Path, monkeypatch) -> None:
    seen: list[str] = []

    class TextKind:
        name, tool, target_kinds = "texts", "texts", ()

        def after(self, collector, output):
            return None

        def parse(self, collector, output, after, host):
            seen.append(output)
            from fsbench.api.collectors import Collected

            return Collected()

    monkeypatch.setattr(session_module, "MAX_TEXT", 100)
    session = CollectorSession(_Collector(), TextKind(), "h1", None, ["true"], tmp_path, 10.0)
    session.output.write_text("x" * 101)
    got = session.finish(_NoController())
    assert not seen and not got.rows
    assert any(str(session.output) in w and "not parsed" in w for w in got.warnings)
    session.output.write_text("x" * 100)
    session.finish(_NoController())
    assert seen == ["x" * 100]


def test_the_command_collector_does_not_read_its_output(tmp_path: Path) -> None:
    session = _session(tmp_path, "command", "")
    session.output.unlink()
    session.output.mkdir()  # reading it would fail
    got = session.finish(_NoController())
    assert not got.rows and not got.warnings


# --- memory on 100 MB outputs, in a fresh process ---------------------------------------------------------

MB = 100
#: peak memory above what the interpreter held after its imports, for a 100 MB output (the text read
#: whole would be more than its size; a parser that streams stays far below)
LIMIT_MIB = 40
CHILD = textwrap.dedent("""
    import json, re, sys
    from pathlib import Path
    from fsbench.core.errors import ParseError
    from fsbench.tools import get_tool

    def hwm():
        return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

    tool, raw = sys.argv[1:3]
    adapter = get_tool(tool)
    before = hwm()
    try:
        rows, error = len(adapter.parse_outputs(Path(raw)).rows), ""
    except ParseError as exc:
        rows, error = 0, exc.reason
    print(json.dumps({"peak_mib": (hwm() - before) / 1024, "rows": rows, "error": error}))
""")


def _fill(path: Path, head: str, piece: str, tail: str, mb: int = MB) -> None:
    with path.open("w") as f:
        f.write(head)
        block = piece * max(1, (1 << 20) // len(piece))
        while f.tell() < mb << 20:
            f.write(block)
        f.write(tail)


def _mdtest(raw: Path) -> None:
    text = (MDTEST / "3.3.0" / "iter3_np4_ext4.stdout.txt").read_text()
    _fill(raw / "stdout", "", "V-1: Rank   0 Line  1234 remove dir: /mnt/x/test-dir.0-0/mdtest_tree.0.1\n", text)


def _juicefs_bench(raw: Path) -> None:
    _fill(raw / "stdout", "", "\r\x1b[1A\x1b[J  Write big blocks: 10/1024 [==>   ] 1%", "\n" + TABLE.read_text())


def _objbench(raw: Path) -> None:
    tables = (GOLDEN / "objbench" / "inputs" / "juicefs-1.4.2_objbench_file_p2.txt").read_text()
    _fill(raw / "stdout", "", "2026/11/23 10:00:00 juicefs[1] <WARNING>: put: RequestTimeout, retry 1\n", tables)


def _fio_json(raw: Path) -> None:
    text = (FIO / "json_status_interval_timebased_randread.json").read_text()
    _fill(raw / "fio.json", "", text[text.rindex("\n{\n") + 1:], "")


def _nnbench(raw: Path) -> None:
    real = GOLDEN / "nnbench" / "inputs" / "s3a__maps-20"
    (raw / "NNBench_results.log").symlink_to(real / "NNBench_results.log")
    _fill(raw / "stdout", "", "2026-11-23 10:00:00,000 WARN impl.MetricsConfig: Cannot locate configuration\n",
          (real / "stdout").read_text())


def _metabench(raw: Path) -> None:
    _fill(raw / "stderr", "", "metabench: warning: getxattr took 12 ms\n", "metabench: cannot make its folder\n")


BIG: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "mdtest": ("mdtest", _mdtest, ""),
    "juicefs-bench": ("juicefs-bench", _juicefs_bench, ""),
    "objbench": ("juicefs-objbench", _objbench, ""),
    "fio-json": ("fio", _fio_json, ""),
    "nnbench": ("nnbench", _nnbench, ""),
    "metabench": ("metabench", _metabench, "metabench wrote no result"),
}


@pytest.mark.parametrize("which", sorted(BIG))
def test_a_100_mb_output_is_parsed_in_little_memory(which: str, tmp_path: Path) -> None:
    tool, make, error = BIG[which]
    raw = tmp_path / "raw"
    raw.mkdir()
    make(raw)
    proc = subprocess.run([sys.executable, "-c", CHILD, tool, str(raw)], capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    assert got["peak_mib"] < LIMIT_MIB, got
    assert (got["error"].startswith(error) and not got["rows"]) if error else (got["rows"] and not got["error"]), got


def test_a_long_collector_output_is_parsed_in_little_memory(tmp_path: Path) -> None:
    # 16 MB of juicefs stats (120,000 samples: 33 hours at 1 s) took 1 GB when every sample was kept
    path = tmp_path / "collector-c.txt"
    lines = STATS.read_text().splitlines(keepends=True)
    _fill(path, "".join(lines[:2]), "".join(lines[2:]), "", mb=16)
    child = textwrap.dedent(f"""
        import json, re
        from pathlib import Path
        from fsbench.collectors import COLLECTORS
        from fsbench.collectors.session import CollectorSession

        def hwm():
            return int(re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1))

        class C:
            name, interval_s, options = "c", 1.0, {{}}

        session = CollectorSession(C(), COLLECTORS.get("juicefs-stats"), "h1", None, ["true"], Path({str(tmp_path)!r}),
                                   10.0)
        before = hwm()
        got = session.finish(None)
        print(json.dumps({{"peak_mib": (hwm() - before) / 1024, "rows": len(got.rows),
                           "series": len(got.series)}}))
    """)
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    columns = len(stats_module._columns(lines[0], lines[1]))
    assert got["peak_mib"] < LIMIT_MIB and got["rows"] and got["series"] <= MAX_SAMPLES * columns, got
