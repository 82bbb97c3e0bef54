"""The wait for the store to go quiet after the tool (BackendWatch.settle): the quiet is counted from the end
snapshot, not from the call, and always proven by a read after it; an upload after the tool restarts it."""

from __future__ import annotations

import time
from pathlib import Path

from fsbench.core.errors import CommandResult
from fsbench.validity.counters import OpCount, Snapshot
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import BackendWatch, Source


class _Store:
    """A store's counter of uploaded bytes, read by a command; `uploads` moves it at given monotonic times."""

    host = "meta"

    def __init__(self) -> None:
        self.uploads: list[float] = []
        self.reads: list[float] = []

    def run(self, argv, *, stdout_path: Path | None = None, **_) -> CommandResult:
        now = time.monotonic()
        self.reads.append(now)
        assert stdout_path is not None
        stdout_path.write_text(str(sum(1 for t in self.uploads if t <= now)))
        return CommandResult("meta", list(argv), 0)


def _parse(text: str) -> Snapshot:
    n = int(text)
    return Snapshot(time.time(), {"put_object": OpCount(n, n * 4096, 0)})


def _ended(store: _Store, tmp_path: Path, quiet_s: float = 0.5, settle_s: float = 10.0) -> tuple[BackendWatch, float]:
    """A watch of the store around a tool that just ended, and when it ended."""
    src = Source("s3", "meta", "", store, tmp_path, argv=["counters"], parse=_parse)  # type: ignore[arg-type]
    watch = BackendWatch([src], Thresholds(quiet_s=quiet_s, settle_s=settle_s))
    watch.tool_start()
    watch.tool_end()
    return watch, time.monotonic()


def test_the_quiet_counts_from_the_tools_end_and_a_read_proves_it(tmp_path: Path) -> None:
    store = _Store()
    watch, ended = _ended(store, tmp_path)
    time.sleep(0.3)  # the case's other side jobs stop meanwhile
    watch.settle()
    took = time.monotonic() - ended
    assert watch.quiet and 0.5 <= took < 0.75, took  # from the end: not 0.3 + 0.5 and a poll's rounding
    assert any(t - ended >= 0.5 for t in store.reads)  # a read at or past the quiet proved it


def test_an_upload_between_the_tools_end_and_the_wait_is_seen_and_restarts_the_quiet(tmp_path: Path) -> None:
    store = _Store()
    watch, ended = _ended(store, tmp_path)
    store.uploads.append(ended + 0.1)  # a write-back upload after the tool
    time.sleep(0.6)  # past the quiet already, counted from the end: a read still shows the upload
    watch.settle()
    took = time.monotonic() - ended
    assert watch.quiet and took >= 0.6 + 0.5, took  # quiet again only 0.5 s after the read that saw it
    settled = watch.snaps["s3"]["settled"].minus(watch.snaps["s3"]["end"])
    assert settled["put_object"].requests == 1  # in the after window


def test_a_store_that_never_goes_quiet_ends_the_wait_at_its_limit(tmp_path: Path) -> None:
    store = _Store()
    watch, ended = _ended(store, tmp_path, settle_s=1.0)
    store.uploads.extend(ended + 0.15 * i for i in range(1, 20))
    watch.settle()
    assert not watch.quiet and 1.0 <= time.monotonic() - ended < 1.5
