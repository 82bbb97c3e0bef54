"""One collector on one host during a case: started before the tool, stopped after it, output first."""

from __future__ import annotations

import csv
import threading
import time
from collections.abc import Sequence
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
from fsbench.api.streams import Stream, Streams
from fsbench.api.transport import Transport
from fsbench.collectors.line_clock import LineClock
from fsbench.core.errors import CommandResult, FsbenchError, ParseError
from fsbench.tools.common import open_text, path_lines

AFTER_TIMEOUT_S = 600.0
#: characters of an output given as a text to a kind without parse_lines (the others read files as streams)
MAX_TEXT = 32 << 20
#: how often a writer that does not tell what it writes is looked at (fsbench.collectors.line_clock)
LINE_CLOCK_S = 0.05


class CollectorSession:
    """A collector's command on a host from its case's start to its stop (CollectorSessions runs a case's together);
    finish() parses what it wrote."""

    def __init__(self, collector: CollectorSpec, kind: CollectorKind, host: str, transport: Transport, argv: list[str],
                 raw_dir: Path, max_s: float, env: dict[str, str] | None = None):
        self.collector, self.kind, self.host, self.transport, self.argv = collector, kind, host, transport, argv
        self.name = collector.name or kind.name
        raw_dir.mkdir(parents=True, exist_ok=True)
        self.output = raw_dir / f"collector-{self.name}.txt"
        self.stderr = raw_dir / f"collector-{self.name}.stderr"
        self.series_path = raw_dir / f"collector-{self.name}-{host}.csv"
        self.max_s, self.env = max_s, env or None
        #: the arrival time of each output line; when the tool started and ended (the runner says)
        self.clock = LineClock(self.output)
        self.tool_start: float | None = None
        self.tool_end: float | None = None
        self._streams: Streams | None = None
        self._index = 0
        (raw_dir / f"collector-{self.name}.command").write_text(" ".join(argv) + "\n")

    @property
    def line_times(self) -> list[float]:
        return self.clock.times

    def prepare(self) -> Stream:
        """The collector's command, for a Streams of the case's collectors (then attach()); its lines are timed
        from now on."""
        self.clock.start()
        return Stream(self.host, self.transport, list(self.argv), self.output, self.stderr, env=self.env)

    def attach(self, streams: Streams, index: int) -> None:
        """The command runs as streams' index-th."""
        self._streams, self._index = streams, index

    @property
    def result(self) -> CommandResult | None:
        """The command's result once it ended (None before)."""
        return None if self._streams is None else self._streams.result(self._index)

    def tail_s(self) -> float:
        """How long the collector may go on after the tool ended to catch its end (a sampler's next line)."""
        return float(self.kind.tail_s(self.collector)) if isinstance(self.kind, HasTail) else 0.0

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


class CollectorSessions:
    """A case's collectors on their hosts: started together, their lines timed, stopped together.

    Through relays every host's command starts from the caller's thread and all stop in one step
    (fsbench.api.streams); a transport of another kind runs each in a thread of its own. Lines are timed as their
    writer writes them; one thread looks at the outputs whose writer does not say (none of fsbench's transports).
    Each collector had two threads of its own a host: its command's and its line clock's."""

    def __init__(self, sessions: Sequence[CollectorSession]):
        self.sessions = list(sessions)
        self._streams: Streams | None = None
        self._looks: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> None:
        if not self.sessions:
            return
        # the timeout is only a backstop for the hosts of a thread each: the case's end stops every collector
        self._streams = Streams([c.prepare() for c in self.sessions], name="collector",
                                timeout=max(c.max_s for c in self.sessions))
        for i, c in enumerate(self.sessions):
            c.attach(self._streams, i)
        self._looks = threading.Thread(target=self._look, name="collector-lines", daemon=True)
        self._looks.start()

    def _look(self) -> None:
        waiting = [c.clock for c in self.sessions]
        while waiting and not self._stopping.wait(LINE_CLOCK_S):
            waiting = [clock for clock in waiting if not clock.look()]

    def stop(self) -> None:
        """Let the collectors catch the case's end (the longest of their kinds' `tail_s`, less once every command
        ended), then end them all and time their last lines."""
        if self._streams is None:
            return
        for c in self.sessions:
            c.mark_tool_end()  # a runner that did not mark the end: the tool ended when the collectors are stopped
        deadline = time.monotonic() + max(c.tail_s() for c in self.sessions)
        streams, everyone = self._streams, len(self.sessions)
        while time.monotonic() < deadline and len(streams.ended()) < everyone:
            time.sleep(min(LINE_CLOCK_S, max(0.0, deadline - time.monotonic())))
        streams.stop()
        self._stopping.set()
        if self._looks is not None:
            self._looks.join()
        for c in self.sessions:
            c.clock.close()


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
