"""`juicefs profile` beside a case: the client's access log (`cat MOUNT/.accesslog`) recorded while the
case runs, then replayed on the controller with `juicefs profile LOG --interval 0` into totals per FUSE
operation, as seed 003 does by hand.

Rows (tool `juicefs-profile`, job = the collector's name), per operation: `ops` (count),
`latency_mean` (s) and `time` (s, the total). Where the replay is not possible (no juicefs on the
controller), the same totals are counted from the log itself, with a warning saying so.

The recording ends with a kill, so its last line may be cut, and `juicefs profile` panics on a line
without its `<duration>` (1.4.2 does: "slice bounds out of range"). The replay then reads a copy of the
log's whole lines (`collector-NAME.whole.txt`, made only when the last line is cut); the recording
itself stays as it was received.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from fsbench.api.collectors import Collected, CollectorKind, CollectorSpec
from fsbench.core.tidy import measurement
from fsbench.tools.common import split_lines

TOOL = "juicefs-profile"
_ROW = re.compile(r"^([a-z_]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+\s*$")
_LOG = re.compile(r"^\d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d\.\d+ \[[^\]]*\] ([a-z_]+) .*<(\d+(?:\.\d+)?)>\s*$")


class JuiceFSProfile:
    """The access log of the target's mount, replayed by `juicefs profile --interval 0`."""

    name = "juicefs-profile"
    tool = TOOL
    target_kinds = ("juicefs",)
    #: how reports show its rows: the most time first, as juicefs profile lists them
    order_by = "time"
    primary_metrics = ("ops", "latency_mean", "time")
    #: its own table's columns, for a view with `columns: metrics`
    columns = (("Count", ("ops",)), ("Average", ("latency_mean",)), ("Total", ("time",)))

    def check(self, collector: CollectorSpec) -> list[tuple[tuple, str, str]]:
        return []

    def command(self, collector: CollectorSpec, values: dict[str, str]) -> list[str]:
        # .accesslog is a virtual file at the mount's root: it gives the log while someone reads it
        return ["cat", values["target.path"].rstrip("/") + "/.accesslog"]

    def after(self, collector: CollectorSpec, output: str) -> list[str] | None:
        options = dict(collector.options)
        return [str(options.get("binary", "juicefs")), "profile", str(whole_lines(Path(output))), "--interval", "0"]

    def tail_s(self, collector: CollectorSpec) -> float:
        """The log's last lines reach the reader a moment after the operations."""
        return 0.5

    def parse(self, collector: CollectorSpec, output: str, after: str | None, host: str) -> Collected:
        return self.parse_lines(collector, output, after, host)

    def parse_lines(self, collector: CollectorSpec, output: str | Iterable[str], after: str | Iterable[str] | None,
                    host: str) -> Collected:
        """The output and the replay as texts or as the lines of their files (read as streams)."""
        name = collector.name or "profile"
        got = Collected()
        totals = parse_profile(after or "")
        seen_text = False
        if not totals:
            totals, seen_text = _count(output)
            if totals:
                got.warnings.append("juicefs profile did not replay the access log; its totals were counted from "
                                    "the log itself")
        if not totals and seen_text:
            raise ValueError("neither juicefs profile's table nor access log lines were found")
        for op, (count, mean_s, total_s) in totals.items():
            got.rows.append(measurement(TOOL, op, "ops", float(count), host=host, job=name))
            got.rows.append(measurement(TOOL, op, "latency_mean", mean_s, host=host, job=name))
            got.rows.append(measurement(TOOL, op, "time", total_s, host=host, job=name))
        if not totals:
            got.warnings.append("the access log is empty: no FUSE operation reached the mount during the case")
        return got


def _lines(text: str | Iterable[str]) -> Iterable[str]:
    return text.splitlines() if isinstance(text, str) else split_lines(text)


#: bytes read at a time from the end of a log while looking for its last line break
_TAIL_BLOCK = 64 * 1024


def whole_lines(path: Path) -> Path:
    """`path` when it is empty, absent or ends with a line break; else a copy of its whole lines beside it
    (`<stem>.whole.txt`, copied by the kernel), which an earlier copy of the same log is replaced by."""
    try:
        size = path.stat().st_size
    except OSError:
        return path
    keep = _last_line_end(path, size)
    if keep == size:
        return path
    copy = path.with_name(f"{path.stem}.whole.txt")
    with open(path, "rb") as src, open(copy, "wb") as dst:
        left = keep
        while left > 0:
            try:
                n = os.copy_file_range(src.fileno(), dst.fileno(), left)
            except OSError:  # a file system without it: through user space
                dst.write(src.read(left))
                break
            if n == 0:
                break
            left -= n
    return copy


def _last_line_end(path: Path, size: int) -> int:
    """The length of the file's part up to and with its last line break (0 when it has none)."""
    with open(path, "rb") as fh:
        end = size
        while end > 0:
            start = max(0, end - _TAIL_BLOCK)
            fh.seek(start)
            at = fh.read(end - start).rfind(b"\n")
            if at >= 0:
                return start + at + 1
            end = start
    return 0


def parse_profile(text: str | Iterable[str]) -> dict[str, tuple[int, float, float]]:
    """`juicefs profile --interval 0`'s table (a text or its lines): operation -> (count, average s, total s)."""
    out = {}
    for line in _lines(text):
        m = _ROW.match(line.strip())
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)) / 1e6, int(m.group(4)) / 1e6)
    return out


def count_log(text: str | Iterable[str]) -> dict[str, tuple[int, float, float]]:
    """The same totals from the access log's lines (`... open (...) - OK <0.000023>`)."""
    return _count(text)[0]


def _count(text: str | Iterable[str]) -> tuple[dict[str, tuple[int, float, float]], bool]:
    """count_log's totals, and whether the log held any text; line by line, only the totals are held."""
    count: dict[str, int] = defaultdict(int)
    total: dict[str, float] = defaultdict(float)
    seen_text = False
    for line in _lines(text):
        stripped = line.strip()
        seen_text = seen_text or bool(stripped)
        m = _LOG.match(stripped)
        if m:
            count[m.group(1)] += 1
            total[m.group(1)] += float(m.group(2))
    order = sorted(count, key=lambda op: -total[op])
    return {op: (count[op], total[op] / count[op], total[op]) for op in order}, seen_text


PLUGIN: CollectorKind = JuiceFSProfile()
