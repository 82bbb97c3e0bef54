"""fio normal (human) output, fio 2.x and 3.x, local and client/server -> tidy rows.

Rows have the shape parse_json emits (same metrics, units, host/job/job_index/groupid), built by
rows_from_jobs(), which parse_terse shares. "ops" comes from the `issued rwts: total=r,w,t,s` line
(the same counter as JSON's total_ios). Host is "" (per-server blocks do not name their server) and
"all" for All clients. Run status group lines are group summaries and Disk stats are not
measurements: both are skipped. A direction whose block the output ends inside is left out with a
warning (its percentiles may be cut). With --status-interval (a job block repeated with the same pid)
only the last report counts; not detected in client/server output, where servers may share pids.

The text is read line by line (parse_lines takes any iterable of lines, such as an open file), and
only the current report is kept, so a huge --status-interval output needs little memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, vet
from fsbench.tools.fio.normal_blocks import DIR_LIKE, Block, read_block
from fsbench.tools.fio.parsed_jobs import ParsedJob, rows_from_jobs

TOOL = "fio"
#: at most this many "cannot read line N" warnings; the rest are counted
MAX_LINE_WARNINGS = 20
#: characters of job blocks kept unread while it is unknown whether a later report replaces them
BLOCK_BUDGET = 8 << 20
_HOST_PREFIX = re.compile(r"^<[^<>\s]*> ?")  # client/server: `<hostname> ` before server log lines
_VERSION = re.compile(r"^(fio-\d[\w.+-]*)\s*$|\bfio=(fio-\d[\w.+-]*)")
_JOB = re.compile(r"^(?P<name>.*?): \(groupid=(?P<gid>\d+), jobs=\d+\): err=\s*(?P<err>-?\d+)(?P<rest>.*)$")
_PID = re.compile(r"pid=(\d+)")
_ERRTEXT = re.compile(r"error=([^)]*)\)")
# universal line ends (\r\n, \r, \n), as a file opened in text mode splits them
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def text_lines(text: str) -> Iterator[str]:
    """The lines of a text, each with its line end ('\n'; none on a last line cut short), lazily."""
    text = text.removeprefix("\ufeff")
    for m in _LINE.finditer(text):
        line = m.group()
        yield line[:-2] + "\n" if line.endswith("\r\n") else line[:-1] + "\n" if line.endswith("\r") else line


def parse_text(text: str, source: str = "<string>") -> ParseResult:
    """Parse fio's normal output held in a string; ParseError when it holds no complete result block."""
    return parse_lines(text_lines(text), source)


def parse_lines(lines: Iterable[str], source: str = "<string>") -> ParseResult:
    """Parse fio's normal output line by line (lines keep their '\\n'; a last one without it was cut)."""
    try:
        return _parse(lines, source)
    except ParseError:
        raise
    except MemoryError:
        raise ParseError(TOOL, source, "the output does not fit in memory") from None
    except Exception as exc:  # noqa: BLE001 - the contract is "ParseError or rows", even for a bug of ours
        raise ParseError(TOOL, source, f"internal parser error ({type(exc).__name__}: {exc})") from exc


def _parse(lines: Iterable[str], source: str) -> ParseResult:
    parser = _Parser()
    cut = parser.consume(lines)
    parser.close(cut)
    out = parser.out
    if not parser.jobs:
        raise ParseError(TOOL, source, _no_result_reason(parser.first_line))
    rows_from_jobs(parser.jobs, out)
    vet(out)
    if not out.rows:
        if not any(d.complete for j in parser.jobs for d in j.directions) and parser.truncated:
            raise ParseError(TOOL, source, "the output ends before the first result block is complete "
                                           "(cut off, or fio was killed?)")
        if not out.warnings:
            out.warnings.append("fio moved no data in any job")
    return out


def _no_result_reason(first: str | None) -> str:
    if first is None:
        return "the output is empty: fio printed no result (option error or killed?)"
    return f"no fio result block (`<job>: (groupid=N, jobs=M): err= 0: ...`) found; the output starts with: {first!r}"


class _Parser:
    """Line-by-line state: job blocks of the current report, read when they are known to count.

    With --status-interval every report repeats every block and only the last counts, so blocks
    are stored as lines (up to BLOCK_BUDGET characters) and read at the end, or when the budget is
    exceeded (an output with many distinct jobs); a new report drops the stored blocks unread.
    """

    def __init__(self) -> None:
        self.client_server = False  # set by the first line only client/server mode prints
        self.out = ParseResult(meta={"fio_version": "", "reports": 0})
        self.jobs: list[ParsedJob] = []
        self.block: Block | None = None
        self.pending: list[Block] = []
        self.pending_chars = 0
        self.identities: set[tuple[str, int, int]] = set()
        self.truncated = False
        self.earlier_reports = 0
        self.first_line: str | None = None
        self.skipped_warnings = 0

    def line_warning(self, text: str) -> None:
        """A warning about one line; past MAX_LINE_WARNINGS they are only counted."""
        if len(self.out.warnings) < MAX_LINE_WARNINGS:
            self.out.warnings.append(text)
        else:
            self.skipped_warnings += 1

    def consume(self, lines: Iterable[str]) -> bool:
        """Read every line; True when the last one was cut short (no line end)."""
        # one loop with only cheap tests per line (a substring, the first characters): the
        # direction blocks are read later, a block at a time, and only those that count
        cut = False
        for no, raw in enumerate(lines, 1):
            cut = not raw.endswith(("\n", "\r"))  # only the last line can lack its end
            if self.first_line is None and raw.strip():
                self.first_line = raw.strip()[:200]
            line = raw
            if raw[:1] == "<" and (m := _HOST_PREFIX.match(raw)):
                self.client_server = True
                line = raw[m.end():]
            if cut and not (_JOB.match(line) or DIR_LIKE.match(line)):
                continue  # a line cut short cannot tell that the block before it is complete
            if not self.out.meta["fio_version"] and "fio" in line and (v := _VERSION.search(line)):
                self.out.meta["fio_version"] = v.group(1) or v.group(2)
            if "(groupid=" in line and (m := _JOB.match(line)):
                if m.group("name").strip() == "All clients":
                    self.client_server = True
                self._end_block(ended=True)
                self._start_job(m, no)
            elif line.startswith("hostname="):
                self.client_server = True  # client/server mode prints each server's banner first
            elif self.block is not None:
                if line.startswith(("Run status group", "Disk stats")):
                    self._end_block(ended=True)  # group summaries and disk stats follow the job blocks
                else:
                    self.block.lines.append(line)
                    self.pending_chars += len(line)
        return cut

    def _start_job(self, m: re.Match, no: int) -> None:
        try:
            pid = _PID.search(m.group("rest"))
            err_text = _ERRTEXT.search(m.group("rest"))
            job = ParsedJob(m.group("name").strip(), int(m.group("gid")), int(m.group("err")),
                            err_text.group(1).strip() if err_text else "", int(pid.group(1)) if pid else 0)
        except (ValueError, OverflowError) as exc:  # a number too long for int()
            self.line_warning(f"line {no}: cannot read the job line ({exc})")
            return
        identity = (job.name, job.groupid, job.pid)
        # --status-interval repeats every block (same pid): each report is cumulative, the last wins.
        # Not in client/server mode, where two servers may well print the same pid.
        if not self.client_server and job.pid and identity in self.identities:
            self.jobs, self.identities, self.pending, self.pending_chars = [], set(), [], 0
            self.earlier_reports += 1
        self.identities.add(identity)
        self.jobs.append(job)
        self.block = Block(job, no + 1)

    def _end_block(self, *, ended: bool) -> None:
        if self.block is None:
            return
        self.block.ended = ended
        self.pending.append(self.block)
        self.block = None
        if self.pending_chars > BLOCK_BUDGET:
            self._read_pending()

    def _read_pending(self) -> None:
        for block in self.pending:
            if read_block(block, self.line_warning):
                self.truncated = True
                op = block.job.directions[-1].op
                self.out.warnings.append(f"the output ends inside the {op} block of job {block.job.name!r}: "
                                         "that direction is left out (cut off?)")
        self.pending, self.pending_chars = [], 0

    def close(self, cut: bool) -> None:
        """At the end of the text: read the blocks that count; a direction still open may have lost lines."""
        self._end_block(ended=False)
        before = self.truncated
        self._read_pending()
        if cut and not (self.truncated and not before):
            self.truncated = True
            self.out.warnings.append("the output ends mid-line (cut off?); complete job blocks are kept")
        if self.earlier_reports:
            self.out.warnings.append(f"{self.earlier_reports + 1} reports (--status-interval): "
                                     "using the last, each is cumulative")
        if self.skipped_warnings:
            self.out.warnings.append(f"{self.skipped_warnings} more unreadable lines")
        self.out.meta["reports"] = self.earlier_reports + 1 if self.jobs else 0


