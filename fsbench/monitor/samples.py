"""Read the sampler's raw output (format in fsbench.monitor.script) into typed samples; no arithmetic here.

The controller reads one such file per host and case (issue 35: its cost per host should stay flat), so the
text is read for speed: as one string, in which regular expressions find the lines that can count and skip
the others in C (3 of a process's 55 status lines count), and each distinct meminfo or diskstats line is
parsed once per file (most repeat from sample to sample). Which lines count, and how, is exactly what the
former line-by-line reading had (tests/unit/test_monitor_samples_speedup.py keeps it, and compares), but for
one mended fault: U+0085, U+2028 and U+2029 no longer end a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fsbench.monitor.scan import PidScan, is_client
from fsbench.monitor.script import COMM_LEN, MAGIC, US, Client

_STAT_LINE = re.compile(r"^(\d+) \((.*)\) (\S) (.*)$")
_DISK_LINE = re.compile(r"^\s*\d+\s+\d+\s+\S+(?:\s+\d+){7,}\s*$")
_KV_LINE = re.compile(r"^([A-Za-z_][\w()]*):\s+(\d+)(\s+kB)?\s*$")
_HEADER_KV = re.compile(r"(\w+)=(\S+)")
#: the single-byte line breaks besides "\n" that end a line here (as str.splitlines() does). The Unicode ones
#: (U+0085, U+2028, U+2029) do not: the sampler turns only single bytes into "\n", so one of those in a process's
#: name or command line is part of that line, and cutting there lost the sample's block
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_OTHER_LINE_END = re.compile("\r\n|[" + re.escape("".join(_OTHER_BREAKS)) + "]")
# These search the text, in which a "\n" comes before every line (one is put before the first)
_MARK = re.compile(r"\n(#[^\n]*|@ [^\n]*|\. [^\n]*)")  # a header line, or a block's first or last line
#: where a block's section may change: net/dev's header, a process's stat line (or what starts like one) or status
_SECTION_CHANGE = re.compile(r"\n(?:Inter-\||Name:|\d+ \()")
#: in a process's status, what can count: its Pid, VmRSS and VmHWM, or another section's first line
_STATUS_LINE = re.compile(r"\n((?:Pid:|VmRSS:|VmHWM:|Name:|\d|cpu |Inter-\|)[^\n]*)")
_ANY_LINE = re.compile(r"\n([^\n]*)")
#: a meminfo line (_MEMINFO, key, bytes, 0), a diskstats line (_DISKSTATS, device, sectors read, written), or not
_Counter = tuple[int, str, int, int]
_NEITHER, _MEMINFO, _DISKSTATS = 0, 1, 2


@dataclass
class Proc:
    """One process in one sample: the watched name it matched, CPU ticks and memory."""

    pid: int
    name: str
    start: int = -1  # starttime, clock ticks after boot: with pid, tells a reused pid apart
    ticks: int | None = None  # utime + stime of all its threads
    rss: int | None = None  # bytes
    hwm: int | None = None  # bytes, peak RSS since the process started
    client: bool = False  # of the client's name, with the client's words in its command line
    #: this run's (True: its marker, or its working folder a service's and started after it), not (False:
    #: no marker), or unknown / not checked (None)
    own: bool | None = None


@dataclass
class Sample:
    """One complete block: the host's counters and the watched processes at uptime t."""

    seq: int
    t: float
    cpu: list[int] | None = None
    mem: dict[str, int] = field(default_factory=dict)  # bytes
    disks: dict[str, tuple[int, int]] = field(default_factory=dict)  # sectors read, written
    nets: dict[str, tuple[int, int]] = field(default_factory=dict)  # bytes received, sent
    procs: dict[tuple[int, int], Proc] = field(default_factory=dict)  # (pid, start) -> Proc


@dataclass
class Raw:
    """Everything usable in one raw file."""

    header: dict[str, str] = field(default_factory=dict)
    watched: list[str] = field(default_factory=list)
    client: Client | None = None
    #: (the host's clock tick when its start began, folder) of each service fsbench started on the host
    folders: list[tuple[int, str]] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_raw(text: str) -> Raw:
    """Split raw text into complete samples; incomplete or garbled blocks become warnings."""
    raw = Raw()
    if any(b in text for b in _OTHER_BREAKS):  # rare: a few substring searches are cheaper than a regex pass
        text = _OTHER_LINE_END.sub("\n", text)  # "\n" alone between the lines
    text = "\n" + text
    head: str | None = None  # the open block's "@ " line
    spans: list[tuple[int, int]] = []  # where its other lines are: header lines among them are not its own
    counters: dict[str, _Counter] = {}  # the file's meminfo and diskstats lines, parsed once each
    after = incomplete = 0
    for mark in _MARK.finditer(text):
        if head is not None and mark.start() > after:
            spans.append((after, mark.start()))
        after, line = mark.end(), mark.group(1)
        if line[0] == "#":
            _header_line(line, raw)
        elif line[0] == "@":
            incomplete += head is not None
            head, spans = line, []
        elif head is not None:
            sample = _sample(head, text, spans, raw, counters)
            if sample is None or line[2:].strip() != str(sample.seq):
                incomplete += 1
            elif raw.samples and sample.t < raw.samples[-1].t:
                raw.warnings.append(f"sample {sample.seq}: time went backwards, dropped")
            else:
                raw.samples.append(sample)
            head = None
    if head is not None:
        incomplete += 1  # the sampler was stopped mid-sample: the usual end, not worth a warning alone
    if incomplete > 1:
        raw.warnings.append(f"{incomplete} incomplete or garbled sample blocks skipped")
    return raw


def _header_line(line: str, raw: Raw) -> None:
    if line.startswith("#watch "):
        raw.watched.append(line[len("#watch "):])
    elif line.startswith("#client "):
        name, *words = line[len("#client "):].split(US)
        if name:
            raw.client = Client(name, tuple(w for w in words if w))
    elif line.startswith("#folder "):
        since, _, folder = line[len("#folder "):].partition(" ")
        if since.isdigit() and folder:
            raw.folders.append((int(since), folder))
    elif line.startswith("#" + MAGIC):
        raw.header.update(dict(_HEADER_KV.findall(line)))


def _sample(head_line: str, text: str, spans: list[tuple[int, int]], raw: Raw,
            counters: dict[str, _Counter]) -> Sample | None:
    """A block's sample: its "@ " line, and its other lines as spans of text (a "\n" before each line)."""
    head = head_line.split()
    if len(head) != 3:
        return None
    try:
        sample = Sample(seq=int(head[2]), t=float(head[1]))
    except ValueError:
        return None
    if sample.t != sample.t or sample.t in (float("inf"), float("-inf")):
        return None
    reader = _Reader(sample, PidScan(raw.folders), raw.client, counters)
    for start, end in spans:
        reader.read(text, start, end)
    return sample


class _Reader:
    """A block's lines, read in order: the section they are in ("mem": the pid scan, meminfo and diskstats;
    "net"; a process's "stat" line; its "status"), and the process whose status it is."""

    def __init__(self, sample: Sample, scan: PidScan, client: Client | None, counters: dict[str, _Counter]) -> None:
        self.sample, self.scan, self.client, self.counters = sample, scan, client, counters
        self.section = "mem"
        self.status: Proc | None = None
        self.newest: dict[str, tuple[int, int]] = {}  # str(pid) -> its newest key in sample.procs

    def read(self, text: str, pos: int, end: int) -> None:
        """text[pos:end], a "\n" before each line."""
        while pos < end:
            if self.section in ("mem", "net"):  # every line can count: those up to a change come as a list
                change = _SECTION_CHANGE.search(text, pos, end)
                stop = end if change is None else change.start()
                if stop > pos:
                    lines = text[pos + 1:stop].split("\n")
                    if self.section == "mem":
                        self.mem_lines(lines)
                    else:
                        self.net_lines(lines)
                found = None if change is None else _ANY_LINE.match(text, stop, end)
            else:  # in a status, the lines that can count; after a stat line, the next (Name:, from the sampler)
                found = (_STATUS_LINE if self.section == "status" else _ANY_LINE).search(text, pos, end)
            if found is None:
                return
            self.line(found.group(1))
            pos = found.end()

    def mem_lines(self, lines: list[str]) -> None:
        """Lines of "mem" before a change: a meminfo, diskstats, cpu or pid scan line (none is one of the others,
        so which is tried first does not matter); the pid scan is over once meminfo has begun."""
        sample, counters = self.sample, self.counters
        for line in lines:
            kind, key, a, b = counters.get(line) or counters.setdefault(line, _counter(line))
            if kind == _MEMINFO:
                sample.mem[key] = a
            elif kind == _DISKSTATS:
                sample.disks[key] = (a, b)
            elif line.startswith("cpu "):
                sample.cpu = _ints(line.split()[1:])
            elif not sample.mem:
                self.scan.read(line)

    def net_lines(self, lines: list[str]) -> None:
        for line in lines:
            if line.startswith("cpu "):
                self.sample.cpu = _ints(line.split()[1:])
            elif not line.startswith(" face |"):
                _net(line, self.sample)

    def line(self, line: str) -> None:
        """A line that may change the section, or any of "stat" or "status" (never a pid scan or meminfo line):
        no line passes two of the tests before the last three (prefixes, a digit), so the commonest come first."""
        if self.section == "status" and line.startswith(("Pid:", "VmRSS:", "VmHWM:")):
            self.status = self.status_line(line)
        elif line.startswith("Name:"):
            self.section, self.status = "status", None
        elif (m := _STAT_LINE.match(line)) is not None:
            self.section = "stat"
            self.process(int(m.group(1)), m.group(2), line)
        elif line.startswith("cpu "):
            self.sample.cpu = _ints(line.split()[1:])
        elif line.startswith("Inter-|"):
            self.section = "net"
        elif line.startswith(" face |"):
            pass
        elif self.section == "status":
            self.status = self.status_line(line)
        elif self.section == "net":
            _net(line, self.sample)
        elif (counter := _diskstats(line))[0] == _DISKSTATS:  # not _counter: a meminfo line is none here
            self.sample.disks[counter[1]] = (counter[2], counter[3])

    def process(self, pid: int, comm: str, line: str) -> None:
        procs = self.sample.procs
        proc = _stat(pid, comm, line, self.scan.names)
        if proc is not None:
            if (pid, proc.start) not in procs:  # a new key goes last; a known one keeps its place
                self.newest[str(pid)] = (pid, proc.start)
            procs[pid, proc.start] = proc
        # as it always was: the last entry, which is proc only when its key is new (or proc is None: the one before)
        last = next(reversed(procs.values()), None)
        if last is None or last.pid != pid:
            return
        last.own = self.scan.own(last.pid, last.start)
        if self.client and last.name == self.client.name:
            last.client = is_client(self.scan.cmdlines.get(last.pid), self.client, bool(last.own))

    def status_line(self, line: str) -> Proc | None:
        key, _, value = line.partition(":")
        if key == "Pid":
            # status comes right after its pid's stat line, so the newest entry for that pid is the one
            newest = self.newest.get(value.strip())
            return None if newest is None else self.sample.procs[newest]
        if self.status is not None and key in ("VmRSS", "VmHWM"):
            parts = value.split()
            if parts and parts[0].isdigit():
                setattr(self.status, "rss" if key == "VmRSS" else "hwm", int(parts[0]) * 1024)
        return self.status


def _counter(line: str) -> _Counter:
    if (m := _KV_LINE.match(line)) is not None:
        key, value, kb = m.groups()
        return _MEMINFO, key, int(value) * (1024 if kb else 1), 0
    return _diskstats(line)


def _diskstats(line: str) -> _Counter:
    if _DISK_LINE.match(line):
        parts = line.split()
        sectors = _ints([parts[5], parts[9]])
        if sectors is not None:
            return _DISKSTATS, parts[2], sectors[0], sectors[1]
    return _NEITHER, "", 0, 0


def _stat(pid: int, comm: str, line: str, names: dict[int, str]) -> Proc | None:
    # comm may hold spaces and parentheses: the fields start after the last ')'
    rest = line[line.rfind(")") + 2:].split(None, 20)  # the 20th field is the last one used
    name = names.get(pid)
    if name is None or len(rest) < 20:
        return None
    if rest[0] in ("Z", "X"):
        return None  # a zombie (a client that exited and was not reaped yet) is not a running process
    if comm != name and not (len(comm) == COMM_LEN and name.startswith(comm)):
        return None  # the pid was reused by another program since the sampler's last pid scan
    vals = _ints([rest[11], rest[12], rest[19]])
    if vals is None:
        return None
    return Proc(pid, name, start=vals[2], ticks=vals[0] + vals[1])


def _net(line: str, sample: Sample) -> None:
    iface, sep, rest = line.partition(":")
    parts = rest.split(None, 9)  # the 9th field is the last one used
    if not sep or len(parts) < 9:
        return
    try:
        sample.nets[iface.strip()] = (int(parts[0]), int(parts[8]))
    except ValueError:
        pass


def _ints(parts: list[str]) -> list[int] | None:
    try:
        return [int(p) for p in parts]
    except ValueError:
        return None
