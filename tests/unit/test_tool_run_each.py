"""ToolRun.each: a tool on several hosts at once, where the first host to fail stops the others."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from fsbench.run.tool_run import ToolRun
from fsbench.transport.local import LocalTransport


def _each(tmp_path, per_host: dict[str, list[str]], cancel: threading.Event | None = None):
    case = SimpleNamespace(tool="nnbench", timeout_s=120.0)
    run = ToolRun(case, cancel or threading.Event(), {}, lambda r: None)  # type: ignore[arg-type]
    transports = {h: LocalTransport(h) for h in per_host}
    works = {h: str(tmp_path) for h in per_host}
    raws = {h: tmp_path / h for h in per_host}
    for folder in raws.values():
        folder.mkdir()
    started = time.monotonic()
    result = run.each(per_host, transports, works, raws.__getitem__)  # type: ignore[arg-type]
    return result, time.monotonic() - started, raws


def test_a_host_that_fails_stops_the_others_waiting_for_it_and_stands_for_the_case(tmp_path):
    # client2 fails at once; client1 and client3 would wait for it (at a barrier) until the case's timeout
    result, took, raws = _each(tmp_path, {"client1": ["sleep", "60"], "client2": ["sh", "-c", "exit 3"],
                                          "client3": ["sleep", "60"]})
    assert took < 20, took
    assert result.exit_status == 3 and "client2" in result.describe(), result.describe()
    assert (raws["client2"] / "exit_status").read_text() == "3\n"


def test_every_host_ok_gives_the_longest_run(tmp_path):
    result, _, raws = _each(tmp_path, {"a": ["sleep", "0.1"], "b": ["sleep", "0.6"]})
    assert result.ok and result.duration_s >= 0.5
    assert (raws["a"] / "exit_status").read_text() == "0\n"


def test_the_case_cancel_reaches_every_host(tmp_path):
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    result, took, _ = _each(tmp_path, {"a": ["sleep", "60"], "b": ["sleep", "60"]}, cancel)
    assert took < 20 and not result.ok
