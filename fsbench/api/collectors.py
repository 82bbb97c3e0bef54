"""The collector plug-in contract: a command beside a case on its hosts, an optional step that turns its
output into something readable on the controller, and a parser into series and rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from fsbench.api.tool_hooks import DeclaresColumns, DeclaresOperations, DeclaresOrder, DeclaresPrimaryMetrics

#: the time series columns, the same as the monitor's (monitor-<host>.csv)
SERIES_COLUMNS = ["t", "host", "scope", "metric", "value", "unit"]


@dataclass
class Collected:
    """What a collector's output gave: a time series, tidy rows (summaries), warnings."""

    series: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ToolWindow:
    """When the case's tool ran, as a collector saw it: its duration, and when each line of the
    collector's output arrived, in seconds from the tool's start (negative: before it)."""

    duration_s: float
    line_times: tuple[float, ...] = ()

    def time_of(self, line: int) -> float | None:
        """When output line `line` (0-based) arrived, or None when it was not seen arriving."""
        return self.line_times[line] if 0 <= line < len(self.line_times) else None


class CollectorSpec(Protocol):
    """A scenario's collector as its kind sees it (fsbench.scenario.model.Collector)."""

    @property
    def name(self) -> str: ...

    @property
    def command(self) -> str | None: ...

    @property
    def interval_s(self) -> float: ...

    @property
    def options(self) -> Mapping[str, object]: ...


@runtime_checkable
class CollectorKind(Protocol):
    """A kind of collector; one module under fsbench/collectors/ (or a package's entry point)."""

    @property
    def name(self) -> str:
        """The kind's name in scenarios (`kind: juicefs-stats`)."""
        ...

    @property
    def tool(self) -> str:
        """The `tool` of its rows in the tidy table ("" when it has no parser: its output is only kept)."""
        ...

    @property
    def target_kinds(self) -> tuple[str, ...]:
        """The target kinds it applies to (empty: any)."""
        ...

    def check(self, collector: CollectorSpec) -> list[tuple[tuple[Any, ...], str, str]]:
        """Problems of a collector of this kind: (key path below it, message, hint)."""
        ...

    def command(self, collector: CollectorSpec, values: dict[str, str]) -> list[str]:
        """argv started on each host before the case's tool and stopped after it; its stdout is kept."""
        ...

    def after(self, collector: CollectorSpec, output: str) -> list[str] | None:
        """argv run on the controller once the output (a local file) is complete, or None; its stdout is
        kept beside the output (juicefs profile replaying an access log). Called once, just before the
        command runs: it may prepare the command's input beside the output (never change the output)."""
        ...

    def parse(self, collector: CollectorSpec, output: str, after: str | None, host: str) -> Collected:
        """The series and rows of one host's output (and the after step's); raises ValueError when the
        output is unusable (the case keeps its own results, the collector's problem is a warning)."""
        ...


@runtime_checkable
class HasTail(Protocol):
    """How long it keeps running after the case's tool ends (a sampler's next line), before it is stopped."""

    def tail_s(self, collector: CollectorSpec) -> float: ...


@runtime_checkable
class ParsesLines(Protocol):
    """Parse with the files given as streams of lines (after: None when there is none), so a huge output
    costs no memory; a kind without it gets texts, and an output over the session's limit is kept unparsed."""

    def parse_lines(self, collector: CollectorSpec, output: Iterable[str], after: Iterable[str] | None,
                    host: str) -> Collected: ...


@runtime_checkable
class ParsesWindow(Protocol):
    """Parse the streams of lines knowing when the tool ran (None: the runner did not say), so its means
    cover the tool's run, not the idle time around it; preferred over ParsesLines."""

    def parse_window(self, collector: CollectorSpec, output: Iterable[str], after: Iterable[str] | None,
                    host: str, window: ToolWindow | None) -> Collected: ...


#: every optional hook of a collector kind; the registry checks the signature of each one a plug-in has
COLLECTOR_HOOKS: tuple[type, ...] = (HasTail, ParsesLines, ParsesWindow, DeclaresPrimaryMetrics, DeclaresOperations,
                                      DeclaresColumns, DeclaresOrder)
