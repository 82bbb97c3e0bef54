"""A hostile job file is refused fast, naming the bound it passed: include fan-outs, more jobs than fio
runs, floods of options; one within the bounds is checked and planned fast; the estimate counts nrfiles."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from fsbench.api.tools import CheckContext, CheckTarget
from fsbench.tools.fio import PLUGIN
from fsbench.tools.fio.estimate import file_bytes, job_file_seconds
from fsbench.tools.fio.jobfile import (
    MAX_GLOBALS,
    MAX_INCLUDES,
    MAX_JOBS,
    MAX_OPTION_LINES,
    MAX_SECTION_OPTIONS,
    JobOptions,
    Origin,
    parse_jobfile,
)

CTX = CheckContext(targets=(CheckTarget("t", "/mnt/bench", False, "directory"),))


def _problems(jf) -> list[str]:
    return [f"{o}: {m}" for o, m in jf.problems]


def test_an_include_fan_out_is_refused_after_so_many_includes(tmp_path: Path):
    # 16 files of 4 includes each: 4^15 reads if followed; 977 bytes in all (the audit's N6)
    (tmp_path / "main.fio").write_text("[j]\nrw=write\nsize=1m\ninclude l0.fio\n")
    for n in range(15):
        (tmp_path / f"l{n}.fio").write_text(f"include l{n + 1}.fio\n" * 4)
    (tmp_path / "l15.fio").write_text("bs=4k\n")
    started = time.monotonic()
    jf = parse_jobfile((tmp_path / "main.fio").read_text(), str(tmp_path / "main.fio"))
    assert time.monotonic() - started < 3  # it ran for hours before
    (problem,) = _problems(jf)
    assert f"more than {MAX_INCLUDES} includes in all" in problem and "include l" in problem


def test_the_text_of_all_includes_together_is_bounded(tmp_path: Path):
    (tmp_path / "big.fio").write_text("# " + "x" * (3 * 2**20) + "\n")
    main = "[j]\n" + "include big.fio\n" * 2
    jf = parse_jobfile(main, str(tmp_path / "main.fio"))
    assert any("MiB of text together" in p for p in _problems(jf))


def test_more_jobs_than_fio_runs_are_refused_fast_and_named():
    # 4 MiB with 215,261 sections took 36 s to validate and 177 s to plan
    text = "[global]\nsize=4k\nrw=write\n" + "".join(f"[j{i}]\nnumjobs=1\n" for i in range(215_261))
    started = time.monotonic()
    issues = PLUGIN.check_options({}, text, {}, replace(CTX, job_file="big.fio"))
    assert time.monotonic() - started < 3
    (issue,) = [i for i in issues if "jobs" in i.message]
    assert f"more than {MAX_JOBS:,} jobs" in issue.message and "4,088" in issue.message
    # where it stopped: the section after the last one allowed
    assert str(issue.origin) == f"big.fio:{3 + 2 * MAX_JOBS + 1}"


def test_floods_of_globals_options_and_lines_are_refused():
    globals_ = "".join(f"[global]\nbs=4k\n[j{i}]\n" for i in range(MAX_GLOBALS + 1))
    assert any(f"more than {MAX_GLOBALS:,} global sections" in p for p in _problems(parse_jobfile(globals_)))
    many = "[j]\n" + "".join(f"x{i}=1\n" for i in range(MAX_SECTION_OPTIONS + 1))
    assert any(f"section [j] sets more than {MAX_SECTION_OPTIONS:,}" in p for p in _problems(parse_jobfile(many)))
    spread = "".join(f"[global]\ng{i}=1\n" for i in range(MAX_SECTION_OPTIONS + 1)) + "[j]\n"
    assert any("the global sections set more than" in p for p in _problems(parse_jobfile(spread)))
    lines = "[j]\n" + "x=1\n" * (MAX_OPTION_LINES + 1)
    assert any(f"more than {MAX_OPTION_LINES:,} option lines" in p for p in _problems(parse_jobfile(lines)))


def test_a_job_file_at_the_bounds_is_checked_and_estimated_fast():
    text = ("[global]\nsize=4k\nrw=write\n" + "".join(f"o{i}=1\n" for i in range(1000))
            + "".join(f"[j{i}]\n" + "".join(f"k{k}=v\n" for k in range(15)) for i in range(MAX_JOBS)))
    started = time.process_time()  # this process's CPU: a loaded machine does not inflate it
    for bs in ("4k", "8k", "16k", "32k", "64k"):  # a sweep: each point is checked and estimated
        issues = PLUGIN.check_options({"bs": bs}, text, {}, replace(CTX, job_file="worst.fio"))
        assert not [i for i in issues if "more than" in i.message]
        PLUGIN.estimate_seconds({"bs": bs}, text, {}, "worst.fio")
        PLUGIN.longest_seconds({"bs": bs}, text, {}, "worst.fio")
    assert time.process_time() - started < 10  # minutes before (every job copied every global option)


def test_a_read_job_file_is_never_changed_by_what_is_done_with_it():
    text = "[global]\nbs=4k\n[a]\nrw=read\n"
    jf = parse_jobfile(text, "same.fio")
    jf.override({"bs": "1m"}, Origin("options"))
    jf.set("a", "rw", "write")
    again = parse_jobfile(text, "same.fio")
    assert again.jobs() == [("a", {"bs": "4k", "rw": "read"})]


def test_job_options_see_own_options_over_the_globals_before_them():
    jf = parse_jobfile("[global]\nbs=4k\ntimeout=5\n[a]\nruntime=9\n[global]\nbs=1m\n[b]\n")
    (_, a), (_, b) = jf.jobs()
    assert isinstance(a, JobOptions)
    assert a == {"bs": "4k", "runtime": "9"} and b == {"bs": "1m", "runtime": "5"}
    assert a.get("size", "none") == "none" and "runtime" in a and len(a) == 2 and sorted(a) == ["bs", "runtime"]


def test_filesize_alone_counts_every_file():
    # fio moves filesize x nrfiles when no size is given (100 GiB here, checked with ioengine=null)
    assert file_bytes({"filesize": "1g", "nrfiles": "100"}) == 100 * 2**30
    assert file_bytes({"size": "10m", "nrfiles": "10"}) == 10 * 2**20  # size is shared by the files
    assert file_bytes({"filesize": "1m-2m", "nrfiles": "10"}) == 20 * 2**20  # a range: its upper end
    expected, longest = job_file_seconds(parse_jobfile("[j]\nrw=write\nfilesize=1g\nnr_files=100\n"))
    assert expected > 100 * 2**30 / (400 * 2**20) and longest >= expected
