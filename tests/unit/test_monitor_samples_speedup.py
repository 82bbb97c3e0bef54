"""read_raw reads every input exactly as the line-by-line reader it replaced for speed (issue 35) did.

The reference is a faithful copy of that reader (`git show 1cb5c69:fsbench/monitor/samples.py`, its read_raw
renamed _reference_read_raw), kept here only, as test code: the line-by-line reading itself; what moved
unchanged (the header lines, the pid scan, is_client) is taken from the modules. The dataclasses it fills are
the module's, so the two results compare field by field, and by repr (which shows the order of every dict). The inputs: real
sampler files (tests/golden/monitor/inputs, their first samples), every input the monitor parser's own
tests give read_raw (they use the read_raw_as_before fixture), blocks built to take each branch, and a few
hundred seeded mutations of the real files.

One difference is intended, and the reference has it too: U+0085, U+2028 and U+2029 no longer end a line
(str.splitlines() cut there, and a process whose name held one lost its sample's block).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import pytest

import fsbench.monitor.parse
from fsbench.monitor import samples
from fsbench.monitor.samples import Proc, Raw, Sample, read_raw
from fsbench.monitor.scan import PidScan, is_client
from fsbench.monitor.script import COMM_LEN, US, Client
from tests.paths import GOLDEN

INPUTS = sorted((GOLDEN / "monitor" / "inputs").glob("*.txt"))


def same(text: str) -> Raw | None:
    """read_raw(text), checked equal to the reference's; None when the reference fails (int() of a digit
    str.isdigit() takes, or of one over Python's 4300 digits) and read_raw fails the same way."""
    try:
        expected = _reference_read_raw(text)
    except ValueError as e:
        with pytest.raises(ValueError) as raised:
            read_raw(text)
        assert str(raised.value) == str(e)
        return None
    got = read_raw(text)
    assert got == expected, f"read_raw differs from the reference on {text[:300]!r}"
    assert repr(got) == repr(expected), f"read_raw's order differs from the reference's on {text[:300]!r}"
    return got


def assert_reads_as_before(text: str) -> Raw:
    """same(text) in read_raw's place: its result, or the reference's error raised again."""
    got = same(text)
    return got if got is not None else _reference_read_raw(text)


@pytest.fixture
def read_raw_as_before(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Every read_raw of the test (analyse's too) checked against the reference."""
    for module in (samples, fsbench.monitor.parse, request.module):
        if getattr(module, "read_raw", None) is read_raw:
            monkeypatch.setattr(module, "read_raw", assert_reads_as_before)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_real_files_read_as_before(path):
    raw = same(path.read_text())
    assert raw is not None and len(raw.samples) in (3, 10) and not raw.warnings


STAT = "{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194560 100 0 0 0 {utime} 7 0 0 20 0 3 0 {start} 12345 {rss} 18 1 1 0"
STATUS = "Name:\t{comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{pid}\nPid:\t{pid}\nPPid:\t1\nVmPeak:\t  9 kB\n" \
         "VmHWM:\t  {hwm} kB\nVmRSS:\t  {rss} kB\nThreads:\t3\nnonvoluntary_ctxt_switches:\t2"
MEMINFO = "MemTotal:       8000 kB\nMemFree:        4000 kB\nMemAvailable:   6000 kB\nHugePages_Total:       0"
DISKS = "   8       0 sda 10 0 300 5 20 0 700 7 0 12 12 0 0 0 0\n 259       1 nvme0n1p1 1 2 3 4 5 6 7 8 9 10 11"
NETS = "Inter-|   Receive                                                |  Transmit\n" \
       " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls\n" \
       "    lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n  eth0: 5000 10 0 0 0 0 0 0 7000 10 0 0 0 0 0 0"


def proc(pid: int = 10, comm: str = "juicefs", state: str = "S", utime: int = 40, start: int = 500, rss: int = 1024,
         hwm: int = 2048) -> str:
    """A process's stat and status lines, as /proc prints them."""
    return STAT.format(**locals()) + "\n" + STATUS.format(**locals())


def block(seq: int = 1, t: float = 100.0, scan: str = "p 10 juicefs\nc 10 juicefs\x1fmount\x1f/mnt/jfs\x1f\nm 10",
          body: str | None = None, end: str | None = None) -> str:
    """A sample block as the sampler prints it; body replaces all between the cpu and pid scan lines and the end."""
    if body is None:
        body = "\n".join([MEMINFO, DISKS, NETS, proc()])
    return "\n".join([f"@ {t:.2f} {seq}", "cpu  100 0 50 800 10 0 0 0 0 0", scan, body, end or f". {seq}"]) + "\n"


HEAD = "#fsbench-monitor 1 pid=42 interval=1 ncpu=2 scan=500 marker=1\n#watch juicefs\n#watch redis-server\n" \
       f"#client juicefs{US}mount{US}/mnt/jfs\n#folder 400 /var/tmp/fsbench/r1/services/redis\n"


ZOMBIE = proc(11, state="Z") + "\n" + proc(12, state="X")
ODD_COMMS = "p 20 a (b) c)\np 21 x) R (y\np 22 a-very-long-daemon-name\np 23 \n" + "\n".join(
    [proc(20, "a (b) c)"), proc(21, "x) R (y"), proc(22, "a-very-long-dae"), proc(23, "")])
# pid 10 twice (reused: another start), then its first start's lines again (a known key keeps its place)
REUSED = "\n".join([proc(10, start=500), proc(10, start=900, rss=3), proc(10, start=500, utime=99, rss=5)])
BRANCHES = {
    "two samples": HEAD + block(1) + block(2, 101.0),
    "zombies": HEAD + block(body="\n".join([MEMINFO, NETS, ZOMBIE])),
    "comms with spaces and parentheses, cut at 15": HEAD + block(scan=ODD_COMMS.split("\n2")[0], body=ODD_COMMS),
    "pid reused": HEAD + block(body=REUSED) + block(2, 101.0, body=proc(10, start=900)),
    "stat fields that are not numbers": HEAD + block(body=proc().replace(" 40 7 ", " 40 x ")),
    "pid taken by another program": HEAD + block(body=proc(10) + "\n" + proc(10, "bash", start=700)),
    "status without its stat line": HEAD + block(body=STATUS.format(pid=10, comm="juicefs", hwm=1, rss=2)),
    "status of an unknown pid, or one with zeros": HEAD + block(body=proc(10) + "\nPid:\t99\nVmRSS:\t 7 kB\n"
                                                                  "Pid:\t010\nVmHWM:\t 8 kB\nPid:\t 10 \nVmRSS:\t²"),
    "VmRSS odd values": HEAD + block(body=proc(10) + "\nVmRSS:\nVmRSS:\t x kB\nVmHWM:\t\u0661 kB\nVmRSS:12"),
    "truncated at the end": HEAD + block(1) + block(2, 101.0)[:-40],
    "cut mid-line, a block inside a block": HEAD + block(1)[:200] + "\n" + block(2, 101.0) + block(3, 102.0),
    "an end without a block": HEAD + ". 1\n" + block(1) + ". 1\n. 2\n",
    "seq mismatch": HEAD + block(1, end=". 2") + block(2, 101.0, end=".  2 ") + block(3, 102.0, end=". 3 x"),
    "head lines": HEAD + "@ 1\n. 1\n@ x 2\n. 2\n@ nan 3\n. 3\n@ inf 4\n. 4\n@ 1 1 1\n. 1\n@ 1_0 1\n. 1\n@ 5 \u0661\n. 1\n",
    "time going backwards": HEAD + block(1, 100.0) + block(2, 99.0) + block(3, 100.0) + block(4, 99.99),
    "meminfo without kB or odd": HEAD + block(body="MemTotal: 5\nMemFree:\t7 kB \nX: 1 MB\nY:2 kB\nZ: 3kB\n"
                                               "Active(anon):  4 kB\n_a: 1\n1a: 2\nK: \u0661\u0662 kB\nName:  5\n" + NETS),
    "disk lines with too few or odd fields": HEAD + block(body=MEMINFO + "\n   8 0 sda 1 2 3 4 5 6\n8 0 sdb 1 2 x 4 5 6 7"
                                                          "\n\t8\t0\tsdc\t1\t2\t3\t4\t5\t6\t7\n1000 0 sdd 1 2 3 4 5 6 7 8\n"
                                                          " 8 0 sde 1 2 3 4 5 6 7 \x1f\n" + NETS),
    "disk lines after a stat line, in net and in status": HEAD + block(body=MEMINFO + "\n" + NETS + "\n" + DISKS + "\n"
                                                                       + STAT.format(pid=10, comm="juicefs", state="S",
                                                                                     utime=1, start=2, rss=3)
                                                                       + "\n" + DISKS + "\n" + proc() + "\n" + DISKS),
    "net header lines": HEAD + block(body=MEMINFO + "\nInter-|\n face |x: 1 2 3 4 5 6 7 8 9\n" + NETS + "\nInter-|\n"
                                     "  eth1: 1 2 3 4 5 6 7 8\n  eth2 1 2 3 4 5 6 7 8 9\n  eth3: 1 2 3 4 5 6 7 8 x\n"
                                     "cpu  9 9 9 9\n   8 0 sda 1 2 3 4 5 6 7\n12 (abc: 1 2 3 4 5 6 7 8 9\n" + proc()),
    "sections in another order": HEAD + block(body="\n".join([proc(), NETS, MEMINFO, DISKS, "Inter-|", "cpu  1 2 3",
                                                              "Name:\tx", "Inter-|", "  eth9: 1 2 3 4 5 6 7 8 9"])),
    "a stat-like line that is not": HEAD + block(body="12 (abc\n" + MEMINFO + "\n13 (x) S\n" + NETS + "\n14 (y\n" + proc()),
    "header lines inside a block": HEAD + block(body=MEMINFO + "\n#watch later\n#client juicefs\x1fother\n"
                                                "#folder 10 /srv\n" + NETS + "\n#\n" + proc()) + "#fsbench-monitor x=1\n",
    "pid scan lines, odd ones and late ones": HEAD + block(scan="p 10 juicefs\np 11\np x y\nc 10\nc 11 a\x1fb\nm 10 x\n"
                                                            "n 11\nm 12\nw 10 1\nw 11 2\nw 12 0\nw 13 x\nq 1 a\np1 2",
                                                       body=MEMINFO + "\np 30 juicefs\nm 30\n" + proc(10) + "\n" + proc(11)),
    "line breaks splitlines() also cuts at": (HEAD + block(1) + block(2, 101.0)).replace("\n", "\r\n").replace(
        "MemFree", "Mem\x1eFree").replace("VmRSS", "\u2028VmRSS").replace("Pid:", "Pid:\x0c"),
    "Unicode line breaks in a process's name": HEAD + block(scan="p 10 ju\u2028ice\x85fs\u2029\nm 10",
                                                            body="\n".join([MEMINFO, NETS, proc(comm="ju\u2028ice\x85fs\u2029")])),
    "a digit isdigit() takes but int() does not": HEAD + block(scan="p \u00b2 juicefs"),
    "a header number isdigit() takes": "#folder \u00b2 /srv\n" + HEAD + block(),
    "a number over Python's 4300 digits": HEAD + block(body="X: " + "9" * 5000 + " kB\n" + NETS),
    "a number over 4300 digits where it is not read": HEAD + block(body=MEMINFO + "\n" + STAT.format(
        pid=10, comm="juicefs", state="S", utime=1, start=2, rss=3) + "\nX: " + "9" * 5000 + "\n   8 0 sda 1 2 "
        + "9" * 5000 + " 4 5 6 7\n" + NETS + "\n  eth0: " + "9" * 5000 + " 1 2 3 4 5 6 7 8"),
    "nothing usable": "random words\nand more\n",
    "empty": "",
    "a header alone": HEAD,
}


@pytest.mark.parametrize("text", BRANCHES.values(), ids=BRANCHES.keys())
def test_each_branch_reads_as_before(text):
    same(text)


def _mutated(text: str, rnd: random.Random) -> str:
    """text with a few lines dropped, doubled, cut short, shuffled within their block, or put in from elsewhere."""
    lines = text.splitlines()
    for _ in range(rnd.randint(1, 6)):
        i = rnd.randrange(len(lines))
        kind = rnd.randrange(5)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2:
            lines[i] = lines[i][:rnd.randrange(len(lines[i]) + 1)]
        elif kind == 3:
            j = min(len(lines), i + rnd.randint(2, 40))
            window = lines[i:j]
            rnd.shuffle(window)
            lines[i:j] = window
        else:
            lines.insert(i, rnd.choice(lines))
        if not lines:
            break
    return "\n".join(lines) + rnd.choice(["", "\n"])


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_seeded_mutations_of_real_files_read_as_before(path):
    text, rnd = path.read_text(), random.Random(35)
    for _ in range(150):
        same(_mutated(text, rnd))


def test_seeded_mutations_of_built_blocks_read_as_before():
    rnd = random.Random(35)
    texts = list(BRANCHES.values())[:-3]
    for _ in range(300):
        same(_mutated(rnd.choice(texts), rnd))


# the lines the branches are made of, as a seeded soup: every order, in and out of blocks
SOUP = sorted({line for text in BRANCHES.values() for line in text.splitlines() if len(line) < 200})


def test_seeded_soups_of_lines_read_as_before():
    rnd = random.Random(35)
    for _ in range(2000):
        same("\n".join(rnd.choice(SOUP) for _ in range(rnd.randint(0, 30))))


# --- the reference: the reader before issue 35, as it was ---------------------------------------------------------

_STAT_LINE = re.compile(r"^(\d+) \((.*)\) (\S) (.*)$")
_DISK_LINE = re.compile(r"^\s*\d+\s+\d+\s+\S+(\s+\d+){7,}\s*$")
_KV_LINE = re.compile(r"^([A-Za-z_][\w()]*):\s+(\d+)(?:\s+kB)?\s*$")


def _reference_lines(text: str) -> list[str]:
    """text.splitlines() without the Unicode line breaks: the one intended change (see the module's doc)."""
    lines = re.split(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e]", text)
    return lines[:-1] if lines[-1] == "" else lines


def _reference_read_raw(text: str) -> Raw:
    """Split raw text into complete samples; incomplete or garbled blocks become warnings."""
    raw = Raw()
    block: list[str] | None = None
    incomplete = 0
    for line in _reference_lines(text):
        if line.startswith("#"):
            samples._header_line(line, raw)  # moved unchanged: the reading around it is what changed
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
    scan = PidScan(folders)  # moved unchanged to fsbench.monitor.scan
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


def test_a_process_name_with_a_unicode_line_break_keeps_its_sample():
    name = "ju\u2028ice\x85fs\u2029"
    raw = read_raw(HEAD.replace("#watch juicefs", f"#watch {name}") + block(scan=f"p 10 {name}\nm 10", body="\n".join(
        [MEMINFO, NETS, proc(comm=name)])))
    assert not raw.warnings and len(raw.samples) == 1
    sample = raw.samples[0]
    assert sample.mem["MemTotal"] == 8000 * 1024
    assert [(p.pid, p.name, p.rss) for p in sample.procs.values()] == [(10, name, 1024 * 1024)]
