"""vdbench runs that stopped: I/O errors, Data Validation errors and parameter errors told apart.

vdbench ends every failed run through the same RuntimeException, so the reason is read from what
else it printed. The inputs under tests/golden/vdbench/inputs are built from the message formats
of vdbench 5.04.07 (errorlog.html's header, `op: read lun: ... errno: EIO: 'I/O error'`, `Read error
using file`, "'data_errors=N' requested. Abort rd=rd1 after last error."); no vdbench binary was run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fsbench.core.errors import ParseError
from fsbench.tools.vdbench import parse_path
from tests.golden.golden import check_golden
from tests.paths import FIXTURES, GOLDEN

INPUTS = GOLDEN / "vdbench" / "inputs"
RAW_ABORT = INPUTS / "constructed_50407_sd_aborted_by_read_errors"
FS_ABORT = INPUTS / "constructed_50407_fs_read_errors_after_format"
VDB = FIXTURES / "public" / "vdbench"


def test_read_errors_before_any_report_are_not_a_parameter_error() -> None:
    # vdbench died before flushing its reports: summary/totals/flatfile show no RD at all, which is
    # what a parameter error looks like; errorlog.html and status.html say otherwise
    with pytest.raises(ParseError) as info:
        parse_path(RAW_ABORT)
    reason = info.value.reason
    assert info.value.file == str(RAW_ABORT) and info.value.tool == "vdbench"
    assert "parameter error" not in reason
    assert reason.startswith("vdbench stopped on I/O errors of the storage (5 read errors; the first: read of "
                             "/dev/sdc at lba 81604378624 (4096 bytes): EIO: 'I/O error')")
    assert reason.endswith("'data_errors=5' requested. Abort rd=rd1 after last error.")
    # the same reason whichever report is given
    for name in ("logfile.html", "summary.html", "totals.html"):
        with pytest.raises(ParseError, match=r"I/O errors of the storage \(5 read errors"):
            parse_path(RAW_ABORT / name)


def test_read_errors_after_a_finished_rd_keep_its_rows() -> None:
    result = parse_path(FS_ABORT)
    check_golden(result.rows, GOLDEN / "vdbench" / f"{FS_ABORT.name}.csv")
    assert {r["job"] for r in result.rows} == {"format_for_rd1"}
    assert result.meta["io_errors"] == 3 and result.meta["completed"] is False
    assert result.warnings[0] == "RD rd1 (occurrence 0) did not finish: 2 interval(s), no average row"
    assert result.warnings[1].startswith("vdbench stopped on I/O errors of the storage (3 read errors; the first: "
                                         "read of /mnt/jfs/vdb/vdb.1_3.dir/vdb_f0007.file at lba 65536")
    # "    avg_2-3 1616.0  4.915   8.3 2.91 ... 50.50 ..." of format_for_rd1
    rate = {(r["operation"], r["metric"]): r["value"] for r in result.rows}
    assert rate[("all", "rate")] == 1616.0 and rate[("write", "bandwidth")] == 50.5 * 1048576


def test_a_console_log_alone_counts_file_system_read_errors(tmp_path: Path) -> None:
    # no errorlog.html: the console's "Read error using file ..." lines tell the story
    shutil.copyfile(FS_ABORT / "logfile.html", tmp_path / "console.log")
    result = parse_path(tmp_path / "console.log", hosts=False)
    assert any(w.startswith("vdbench stopped on I/O errors of the storage (3 read errors; the first: read of "
                            "/mnt/jfs/vdb/vdb.1_3.dir/vdb_f0007.file)") for w in result.warnings)


def test_data_validation_errors(tmp_path: Path) -> None:
    shutil.copytree(RAW_ABORT, tmp_path / "run")
    errorlog = tmp_path / "run" / "errorlog.html"
    errorlog.write_text(errorlog.read_text().split("10:12:05")[0]
                        + "10:12:05.301 localhost-0: 10:12:05.300 Time of first corruption: Mon Jun 03 2024 10:12:05.300 UTC\n"
                        "10:12:05.301 localhost-0: 10:12:05.300 At least one Data Validation error has been detected.\n")
    with pytest.raises(ParseError, match="stopped on Data Validation errors"):
        parse_path(tmp_path / "run")


@pytest.mark.parametrize("rel, reason", [
    ("hero0906-jiaoben/50406_fs_parmfile_eof_error",
     "vdbench stopped on a parameter error: Unexpected EOF in parameter file."),
    ("insummus-vdbench/50405_invalid_execution_parameter",
     "vdbench stopped on a parameter error: Invalid execution parameter: 'help'"),
])
def test_parameter_errors_stay_parameter_errors(rel: str, reason: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_path(VDB / rel)
    assert info.value.reason == reason


def test_an_exception_after_the_run_started_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "status.html").write_text("<pre>\n06/03/2024-10:12:01-UTC \tStarting slaves\n")
    (tmp_path / "logfile.html").write_text("<pre>\njava.lang.RuntimeException: Slave localhost-0 aborting\n")
    with pytest.raises(ParseError) as info:
        parse_path(tmp_path)
    assert info.value.reason == "vdbench stopped on an error: Slave localhost-0 aborting"
