"""A case whose tool writes nothing skips the quiet wait after it: nothing can arrive at the store later; the tool
host's page cache is read while the other side jobs start."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

from fsbench.core.errors import CommandResult
from fsbench.run.side_jobs import QuietSideJob, SideJobs, Validity
from fsbench.validity.case import CaseValidity
from fsbench.validity.pagecache import facts_argv


class _Tool:
    def __init__(self, writes: bool) -> None:
        self._writes = writes

    def writes(self, options: dict, job_file_text: str, jobs: object, job_file: str) -> bool:
        return self._writes


def _validity(writes: bool, tmp_path: Path) -> CaseValidity:
    sc = SimpleNamespace(settings=SimpleNamespace(validity={}), targets={"t": SimpleNamespace(services=(), path="/mnt/t")},
                         services={}, resolve_hosts=lambda names: list(names))
    case = SimpleNamespace(tool="fio", options={}, job_file_text="", jobs=(), job_file="", target="t", hosts=("h",),
                           drop_caches=False)
    return CaseValidity(sc, case, {}, {"h": None}, tmp_path, (_Tool(writes), None))  # type: ignore[arg-type, dict-item]


def test_a_reading_tool_does_not_wait_for_the_store_to_go_quiet(tmp_path: Path) -> None:
    waited: list[bool] = []
    for writes in (False, True):
        v = _validity(writes, tmp_path)
        v.watch.settle = lambda: waited.append(True)  # type: ignore[method-assign]
        v.settle()
    assert waited == [True]  # only the writing case waited


class _ReadingTool(_Tool):
    """A tool that says what it reads (DeclaresWorkingSet): the page cache is read at its start."""

    def read_working_set(self, options: dict, job_file_text: str, jobs: object, job_file: str) -> float:
        return 1e6


class _SlowMeminfo:
    """A host whose /proc/meminfo takes 0.2 s to read; notes when the read began."""

    host = "h"

    def __init__(self) -> None:
        self.began: list[float] = []

    def run(self, argv: list[str], **_: object) -> CommandResult:
        if argv[:3] == facts_argv("")[:3]:  # the page cache's facts: /proc/meminfo, then the file system's type
            self.began.append(time.monotonic())
            time.sleep(0.2)
            return CommandResult("h", argv, 0, extra={"stdout": "MemTotal: 1000 kB\nCached: 10 kB\n@@\next4\n"})
        return CommandResult("h", argv, 0, extra={"stdout": ""})


class _SlowStart(QuietSideJob):
    """A side job whose start takes 0.2 s (a monitor waiting for its baseline sample)."""

    def __init__(self) -> None:
        self.ended = 0.0

    def start(self) -> str | None:
        time.sleep(0.2)
        self.ended = time.monotonic()
        return None


def test_the_page_cache_is_read_while_the_other_side_jobs_start(tmp_path: Path) -> None:
    host = _SlowMeminfo()
    v = _validity(False, tmp_path)
    v.plugins, v.transport = (_ReadingTool(False), None), host  # type: ignore[assignment]
    slow = _SlowStart()
    jobs = SideJobs([Validity(v, threading.Event()), slow])
    began = time.monotonic()
    assert jobs.start() is None
    jobs.tool_start()
    took = time.monotonic() - began
    jobs.tool_end()
    jobs.stop()
    # the read began before the slow start ended, and the two took the time of one, not of both
    assert len(host.began) == 1 and host.began[0] < slow.ended and took < 0.35, (took, host.began)
    assert v.host is not None and v.host.mem_total == 1000 * 1024 and v.host.cached == 10 * 1024


def test_a_case_whose_side_jobs_did_not_all_start_waits_for_the_page_cache_read(tmp_path: Path) -> None:
    host = _SlowMeminfo()
    v = _validity(False, tmp_path)
    v.plugins, v.transport = (_ReadingTool(False), None), host  # type: ignore[assignment]
    jobs = SideJobs([Validity(v, threading.Event())])
    began = time.monotonic()
    jobs.start()
    jobs.stop()  # no tool ran: the read that started is still waited for, so no command outlives the case
    assert time.monotonic() - began >= 0.2 and len(host.began) == 1
