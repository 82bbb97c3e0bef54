"""Read the sampler's raw output (format in fsbench.monitor.script) into typed samples; no arithmetic here."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from fsbench.monitor.scan import PidScan, is_client
from fsbench.monitor.script import COMM_LEN, MAGIC, US, Client

_STAT_LINE = re.compile(r"^(\d+) \((.*)\) (\S) (.*)$")
_DISK_LINE = re.compile(r"^\s*\d+\s+\d+\s+\S+(\s+\d+){7,}\s*$")
_KV_LINE = re.compile(r"^([A-Za-z_][\w()]*):\s+(\d+)(?:\s+kB)?\s*$")
_HEADER_KV = re.compile(r"(\w+)=(\S+)")


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
    block: list[str] | None = None
    incomplete = 0
    for line in text.splitlines():
        if line.startswith("#"):
            _header_line(line, raw)
        elif line.startswith("@ "):
            if block is not None:
                incomplete += 1
            block = [line]
        elif block is not None and line.startswith(". "):
            sample = _sample(block, raw.client, raw.folders)
            if sample is None or line[2:].strip() != str(sample.seq):
                incomplete += 1
            elif raw.samples and sample.t < raw.samples[-1].t:
                raw.warnings.append(f"sample {sample.seq}: time went backwards, dropped")
            else:
                raw.samples.append(sample)
            block = None
        elif block is not None:
            block.append(line)
    if block is not None:
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


def _sample(lines: list[str], client: Client | None = None,
            folders: Sequence[tuple[int, str]] = ()) -> Sample | None:
    head = lines[0].split()
    if len(head) != 3:
        return None
    try:
        sample = Sample(seq=int(head[2]), t=float(head[1]))
    except ValueError:
        return None
    if sample.t != sample.t or sample.t in (float("inf"), float("-inf")):
        return None
    scan = PidScan(folders)
    section = "mem"
    status: Proc | None = None
    for line in lines[1:]:
        if line.startswith("cpu "):
            sample.cpu = _ints(line.split()[1:])
        elif section == "mem" and not sample.mem and scan.read(line):
            continue
        elif line.startswith("Inter-|"):
            section = "net"
        elif line.startswith(" face |"):
            continue
        elif (m := _STAT_LINE.match(line)) is not None:
            section = "stat"
            _stat(int(m.group(1)), m.group(2), line, scan.names, sample)
            proc = next(reversed(sample.procs.values()), None)
            if proc is None or proc.pid != int(m.group(1)):
                continue
            proc.own = scan.own(proc.pid, proc.start)
            if client and proc.name == client.name:
                proc.client = is_client(scan.cmdlines.get(proc.pid), client, bool(proc.own))
        elif line.startswith("Name:"):
            section, status = "status", None
        elif section == "status":
            status = _status(line, status, sample)
        elif section == "net":
            _net(line, sample)
        elif _DISK_LINE.match(line):
            parts = line.split()
            sectors = _ints([parts[5], parts[9]])
            if sectors is not None:
                sample.disks[parts[2]] = (sectors[0], sectors[1])
        elif section == "mem" and (m := _KV_LINE.match(line)) is not None:
            scale = 1024 if line.rstrip().endswith("kB") else 1
            sample.mem[m.group(1)] = int(m.group(2)) * scale
    return sample


def _stat(pid: int, comm: str, line: str, names: dict[int, str], sample: Sample) -> None:
    # comm may hold spaces and parentheses: the fields start after the last ')'
    rest = line[line.rfind(")") + 2:].split()
    name = names.get(pid)
    if name is None or len(rest) < 20:
        return
    if rest[0] in ("Z", "X"):
        return  # a zombie (a client that exited and was not reaped yet) is not a running process
    if comm != name and not (len(comm) == COMM_LEN and name.startswith(comm)):
        return  # the pid was reused by another program since the sampler's last pid scan
    vals = _ints([rest[11], rest[12], rest[19]])
    if vals is None:
        return
    key = (pid, vals[2])
    sample.procs[key] = Proc(pid, name, start=vals[2], ticks=vals[0] + vals[1])


def _status(line: str, current: Proc | None, sample: Sample) -> Proc | None:
    key, _, value = line.partition(":")
    if key == "Pid":
        pid = value.strip()
        # status comes right after its pid's stat line, so the newest entry for that pid is the one
        matches = [p for p in sample.procs.values() if str(p.pid) == pid]
        return matches[-1] if matches else None
    if current is not None and key in ("VmRSS", "VmHWM"):
        parts = value.split()
        if parts and parts[0].isdigit():
            setattr(current, "rss" if key == "VmRSS" else "hwm", int(parts[0]) * 1024)
    return current


def _net(line: str, sample: Sample) -> None:
    iface, sep, rest = line.partition(":")
    parts = rest.split()
    if not sep or len(parts) < 9:
        return
    vals = _ints([parts[0], parts[8]])
    if vals is not None:
        sample.nets[iface.strip()] = (vals[0], vals[1])


def _ints(parts: list[str]) -> list[int] | None:
    try:
        return [int(p) for p in parts]
    except ValueError:
        return None
