"""One collector on one host during a case: started before the tool, stopped after it, output first."""

from __future__ import annotations

import csv
import os
import threading
import time
from pathlib import Path

from fsbench.api.collectors import (
    SERIES_COLUMNS,
    Collected,
    CollectorKind,
    CollectorSpec,
    HasTail,
    ParsesLines,
    ParsesWindow,
    ToolWindow,
)
from fsbench.api.transport import Transport
from fsbench.core.cancel import Cancel
from fsbench.core.errors import CommandResult, FsbenchError, ParseError
from fsbench.tools.common import open_text, path_lines

STOP_S = 20.0
AFTER_TIMEOUT_S = 600.0
#: characters of an output given as a text to a kind without parse_lines (the others read files as streams)
MAX_TEXT = 32 << 20
#: how often the line clock looks for new output lines (their arrival times place them around the tool's run)
LINE_CLOCK_S = 0.05


class CollectorSession:
    """Runs a collector's command on a host from start() to stop(); finish() parses what it wrote."""

    def __init__(self, collector: CollectorSpec, kind: CollectorKind, host: str, transport: Transport, argv: list[str],
                 raw_dir: Path, max_s: float, env: dict[str, str] | None = None):
        self.collector, self.kind, self.host, self.transport, self.argv = collector, kind, host, transport, argv
        self.name = collector.name or kind.name
        raw_dir.mkdir(parents=True, exist_ok=True)
        self.output = raw_dir / f"collector-{self.name}.txt"
        self.stderr = raw_dir / f"collector-{self.name}.stderr"
        self.series_path = raw_dir / f"collector-{self.name}-{host}.csv"
        self.max_s, self.env = max_s, env or None
        self.result: CommandResult | None = None
        self._cancel = Cancel()
        self._thread: threading.Thread | None = None
        #: monotonic arrival time of each output line, and when the tool started and ended (the runner says)
        self.line_times: list[float] = []
        self.tool_start: float | None = None
        self.tool_end: float | None = None
        self._clock: threading.Thread | None = None
        (raw_dir / f"collector-{self.name}.command").write_text(" ".join(argv) + "\n")

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"collector-{self.name}-{self.host}", daemon=True)
        self._thread.start()
        self._clock = threading.Thread(target=self._line_clock, name=f"collector-{self.name}-clock", daemon=True)
        self._clock.start()

    def mark_tool_start(self) -> None:
        """The case's tool starts now: the collector's means cover from here."""
        self.tool_start = time.monotonic()

    def mark_tool_end(self) -> None:
        """The case's tool ended now."""
        if self.tool_end is None:
            self.tool_end = time.monotonic()

    def window(self) -> ToolWindow | None:
        """The tool's run as the output's lines saw it, or None when the runner never said when it ran."""
        if self.tool_start is None or self.tool_end is None:
            return None
        return ToolWindow(max(0.0, self.tool_end - self.tool_start),
                          tuple(t - self.tool_start for t in self.line_times))

    def _line_clock(self) -> None:
        """Record when each line of the output arrives, until the collector has ended.

        The output is opened once (when the command has made it) and read only when it grew: opening and reading
        it every look cost 20 opens a second a host, 20,000 a second for a collector on 1,000 hosts."""
        offset = 0
        fh = None
        try:
            while True:
                done = self._thread is None or not self._thread.is_alive()
                if fh is None:
                    try:
                        fh = open(self.output, "rb")  # noqa: SIM115 - kept open across the loop, closed below
                    except OSError:
                        fh = None
                if fh is not None and os.fstat(fh.fileno()).st_size > offset:
                    fh.seek(offset)
                    data = fh.read()
                    offset += len(data)
                    now = time.monotonic()
                    self.line_times += [now] * data.count(b"\n")
                if done:
                    return
                time.sleep(LINE_CLOCK_S)
        finally:
            if fh is not None:
                fh.close()

    def _run(self) -> None:
        try:
            self.result = self.transport.run(self.argv, timeout=self.max_s, stdout_path=self.output,
                                             stderr_path=self.stderr, cancel=self._cancel, env=self.env)
        except FsbenchError as exc:  # a lost host: the case says so on its own, the collector only warns
            self.result = CommandResult(self.host, self.argv, None, stderr_tail=str(exc))

    def stop(self) -> None:
        """Let the collector catch the end of the case (its kind's `tail_s`: a sampler's next line), then end it."""
        self.mark_tool_end()  # a runner that did not mark the end: the tool ended when the collector is stopped
        wait = float(self.kind.tail_s(self.collector)) if isinstance(self.kind, HasTail) else 0.0
        if wait > 0 and self._thread is not None:
            self._thread.join(timeout=wait)
        self._cancel.set()
        if self._thread is not None:
            self._thread.join(timeout=STOP_S)
            if not self._thread.is_alive():  # its command's loop no longer waits on the cancel
                self._cancel.close()
        if self._clock is not None:
            self._clock.join(timeout=STOP_S)

    def finish(self, controller: Transport) -> Collected:
        """The after step on the controller (juicefs profile), then the kind's parser; problems are warnings."""
        warnings = []
        r = self.result
        if r is not None and not r.ok and not r.interrupted:
            warnings.append(f"collector {self.name} on {self.host} ended early {r.describe()}")
        after_path: Path | None = None
        after = self.kind.after(self.collector, str(self.output))
        if after:
            path = self.output.with_name(f"collector-{self.name}.after.txt")
            try:
                a = controller.run(after, timeout=AFTER_TIMEOUT_S, stdout_path=path,
                                   stderr_path=path.with_suffix(".stderr"))
                if a.ok:
                    after_path = path
                else:
                    warnings.append(f"collector {self.name}: `{' '.join(after)}` {a.describe()}")
            except FsbenchError as exc:
                warnings.append(f"collector {self.name}: `{' '.join(after)}` could not run: {exc}")
        try:
            got = self._parse(after_path)
        except (ValueError, ParseError) as exc:
            return Collected(warnings=warnings + [f"collector {self.name} on {self.host}: {exc}"])
        if got.series:
            with open(self.series_path, "w", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=SERIES_COLUMNS, extrasaction="ignore")
                writer.writeheader()
                writer.writerows(got.series)
        got.warnings = warnings + [f"collector {self.name} on {self.host}: {w}" for w in got.warnings]
        return got

    def _parse(self, after: Path | None) -> Collected:
        """The kind's parser over the output files: as streams of lines where it reads them so (parse_window,
        parse_lines), else as texts of at most MAX_TEXT characters (ValueError for a bigger one)."""
        kind = self.kind
        if isinstance(kind, (ParsesWindow, ParsesLines)):
            output = path_lines(self.name, self.output, missing_ok=True)
            after_lines = path_lines(self.name, after) if after is not None else None
            if isinstance(kind, ParsesWindow):
                return kind.parse_window(self.collector, output, after_lines, self.host, self.window())
            return kind.parse_lines(self.collector, output, after_lines, self.host)
        return self.kind.parse(self.collector, _bounded_text(self.output),
                               _bounded_text(after) if after is not None else None, self.host)


def _bounded_text(path: Path) -> str:
    """A file's text ('' when absent); ValueError naming it when it holds more than MAX_TEXT characters."""
    if not path.exists():
        return ""
    with open_text("collector", path) as f:
        text = f.read(MAX_TEXT + 1)
    if len(text) > MAX_TEXT:
        raise ValueError(f"{path} holds more than {MAX_TEXT >> 20} MiB, more than this kind's parser is given "
                         "(it reads whole texts); the file is kept, not parsed")
    return text
