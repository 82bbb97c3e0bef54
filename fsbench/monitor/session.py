"""Monitor one host during a case: the sampler runs through the host's transport, raw output first."""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Sequence
from pathlib import Path

from fsbench.api.streams import STOP_S, Stream, Streams
from fsbench.api.transport import Transport
from fsbench.core.errors import CommandResult, FsbenchError
from fsbench.core.file_growth import GROWTH
from fsbench.core.tidy import ParseResult
from fsbench.monitor.parse import SERIES_COLUMNS, analyse
from fsbench.monitor.script import FIRST_INTERVAL_S, Client, sampler_argv

#: how long start() waits for the baseline sample, and stop() for the transport to end the sampler
FIRST_SAMPLE_S = 10.0
#: how often a wait for a sample looks at its file when no write was said (a writer other than CappedOutput)
FALLBACK_S = 0.05
#: how late a sample may reach the controller while the case runs (each carries its host's clock; the first one
#: and the last one come at once): through relays a second's samples of a relay's hosts then come in one packet
SAMPLES_LAG_S = 1.0


class MonitorSession:
    """Samples /proc on one host from start() to stop(); stop() returns the summary rows."""

    def __init__(self, transport: Transport, host: str, interval_s: float, processes: list[str], raw_path: Path,
                 *, max_s: float = 86400.0, clk_tck: int = 100, client: Client | None = None,
                 expected: set[str] | None = None, folders: Sequence[tuple[int, str]] = (),
                 first_interval_s: float = FIRST_INTERVAL_S, whole_samples: bool | None = None):
        self.transport, self.host = transport, host
        self.interval_s, self.processes = interval_s, list(processes)
        self.raw_path = Path(raw_path)
        self.csv_path = self.raw_path.parent / f"monitor-{host}.csv"
        self.stderr_path = self.raw_path.with_name(self.raw_path.name + ".stderr")
        # folders: (the host's clock tick when its start began, folder) of each service fsbench started on the
        # host, whose processes are the run's even when their title overwrote the run's marker
        # each sample in one write where it leaves the host as packets (SSH); on this machine (no remote
        # folders) its pieces come through a pipe, and awk would only be loaded from disk after each drop.
        # whole_samples: that choice made by the caller (bench/monitor_cost.py measures the SSH hosts' form here)
        whole = transport.remote_base is not None if whole_samples is None else whole_samples
        self.argv = sampler_argv(interval_s, self.processes, max_s, client=client, folders=folders,
                                 first_interval_s=first_interval_s, whole_samples=whole)
        self.max_s, self.clk_tck = max_s, clk_tck
        #: watched names whose absence is warned about (None: all; see fsbench.run.monitor_expect)
        self.expected = None if expected is None else set(expected) | ({client.name} if client else set())
        self._streams: Streams | None = None  # the sampler's command, with the other hosts' of its case
        self._index = 0
        self._summary: ParseResult | None = None

    def prepare(self) -> Stream:
        """The sampler's command, for a Streams of the case's hosts (then attach()): its raw file exists first."""
        self.raw_path.parent.mkdir(parents=True, exist_ok=True)
        self.raw_path.touch()
        return Stream(self.host, self.transport, list(self.argv), self.raw_path, self.stderr_path, lag_s=SAMPLES_LAG_S)

    def attach(self, streams: Streams, index: int) -> None:
        """The sampler runs as streams' index-th command (started with the other hosts' samplers)."""
        if self._streams is not None:
            raise RuntimeError(f"monitor on {self.host} already started")
        self._streams, self._index = streams, index

    def start(self, wait_first_sample: bool = True) -> bool:
        """Start the sampler alone in the background; True once its baseline sample is on disk."""
        if self._streams is not None:
            raise RuntimeError(f"monitor on {self.host} already started")
        # the timeout is only a backstop: the sampler ends itself after max_s, its stop ends it earlier
        self.attach(Streams([self.prepare()], timeout=self.max_s + 60.0, name="monitor"), 0)
        return self.wait_first_sample() if wait_first_sample else True

    @property
    def result(self) -> CommandResult | None:
        """The sampler's command's result once it ended (None before)."""
        return None if self._streams is None else self._streams.result(self._index)

    def running(self) -> bool:
        """Whether the sampler's command still runs."""
        return self._streams is not None and self._streams.alive(self._index)

    def wait_first_sample(self) -> bool:
        """Wait (up to FIRST_SAMPLE_S) for the sampler's baseline sample; True once it is on disk."""
        # without a baseline taken before the case begins, its first interval would be lost
        return self._wait_for_end_marker(0, FIRST_SAMPLE_S)

    def stop(self, final_sample: bool = True) -> ParseResult:
        """Stop the sampler (it takes one last sample as it goes) and summarise. A stop of one session stops
        every sampler started with it (its Streams), all hosts in one step.

        `final_sample` is kept for callers; the sampler always samples once more when stopped.
        """
        if self._summary is not None:
            return self._summary
        if self._streams is None:
            raise RuntimeError(f"monitor on {self.host} was never started")
        # stopping the sampler makes it take its last sample on the way out (its TERM trap), so the
        # case's tail is measured without waiting for the next interval
        late = self._streams.stop()
        warnings = []
        if self.host in late:
            warnings.append(f"monitor on {self.host}: the sampler did not stop within {STOP_S:.0f}s")
        self._summary = self._summarise(warnings)
        return self._summary

    def __enter__(self) -> MonitorSession:
        self.start()
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.stop(final_sample=exc_type is None)

    def _wait_for_end_marker(self, offset: int, limit_s: float) -> bool:
        """Wait for a sample that starts after byte `offset` of the raw file and is complete.

        The file stays open and is read only when it grew. The wait sleeps until the transport's writer says
        the file grew (fsbench.core.file_growth), looking anyway every FALLBACK_S for a writer that does not
        say: on 32 hosts the first samples take a second or more to come, and each host's wait looked at its
        file every 2 to 10 ms until then (6,000 to 9,000 looks a case at 32 hosts)."""
        deadline = time.monotonic() + limit_s
        with GROWTH.watch(self.raw_path) as grew, open(self.raw_path, "rb") as fh:
            fh.seek(offset)
            seen = b""
            while True:
                grew.clear()  # before the look: a write after it sets it again
                if os.fstat(fh.fileno()).st_size > offset + len(seen):
                    seen += fh.read()
                    if _complete_sample_in(seen):
                        return True
                now = time.monotonic()
                if now > deadline or not self.running():
                    return _complete_sample_in(seen + fh.read())  # what came since the last look
                grew.wait(min(FALLBACK_S, deadline - now))

    def _summarise(self, warnings: list[str]) -> ParseResult:
        res = self.result
        if res is not None and not (res.interrupted or res.exit_status == 0):
            warnings.append(f"monitor sampler ended badly {res.describe()}")
        text = self.raw_path.read_text(errors="replace")
        try:
            m = analyse(text, self.host, clk_tck=self.clk_tck, source=str(self.raw_path), expected=self.expected)
        except FsbenchError as exc:
            # monitoring is a by-product of the case: without it the case's own results still stand
            return ParseResult(warnings=warnings + [str(exc)], meta={"raw": str(self.raw_path)})
        write_series(self.csv_path, m.series)
        return ParseResult(rows=m.summary, warnings=warnings + m.warnings,
                           meta={"raw": str(self.raw_path), "series": str(self.csv_path), "samples": m.samples})


def _complete_sample_in(data: bytes) -> bool:
    """Whether data holds a sample's start line and, after it, its end line."""
    start = 0 if data.startswith(b"@ ") else data.find(b"\n@ ")
    return start >= 0 and data.find(b"\n. ", start) >= 0


def write_series(path: Path, rows: list[dict]) -> None:
    """The time series as CSV (t, host, scope, metric, value, unit)."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=SERIES_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
