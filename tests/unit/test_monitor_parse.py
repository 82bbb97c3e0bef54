"""The monitor parser on sampler output built from synthetic /proc snapshots: exact numbers, bad input."""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsbench.core.errors import ParseError
from fsbench.monitor.parse import PEAK_WINDOW_S, analyse, delta, parse_result, peak_rate
from fsbench.monitor.samples import read_raw
from fsbench.monitor.script import SCRIPT, US, Client, sampler_argv
from tests.unit.test_monitor_samples_speedup import read_raw_as_before  # noqa: F401 (a fixture)

# every input these tests give read_raw is also read by the reader it replaced, and must read the same
pytestmark = pytest.mark.usefixtures("read_raw_as_before")

MiB = 1024 * 1024


@dataclass
class P:
    """One process in a snapshot."""

    pid: int
    name: str
    start: int  # clock ticks after boot
    utime: int
    stime: int = 0
    rss_kb: int = 1024
    hwm_kb: int | None = None
    comm: str | None = None  # what the kernel shows, when it differs from the watched name
    state: str = "S"  # /proc/PID/stat's state letter (Z: a zombie)
    cmdline: tuple[str, ...] | None = None  # printed as the sampler does for pids of the client's name
    own: bool | None = None  # the run's marker in its environment: m (True), n (False), no line (unknown)


@dataclass
class Snap:
    """One sample of a synthetic host."""

    t: float
    cpu: tuple[int, ...] = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    mem_total_kb: int = 8 * 1024 * 1024
    mem_avail_kb: int = 6 * 1024 * 1024
    disks: dict[str, tuple[int, int]] = field(default_factory=lambda: {"sda": (0, 0)})
    nets: dict[str, tuple[int, int]] = field(default_factory=lambda: {"lo": (0, 0), "eth0": (0, 0)})
    procs: list[P] = field(default_factory=list)


def block(seq: int, s: Snap) -> str:
    """Exactly what the sampler prints for one sample, /proc files in their kernel formats."""
    out = [f"@ {s.t:.2f} {seq}", "cpu  " + " ".join(map(str, s.cpu))]
    for p in s.procs:
        out.append(f"p {p.pid} {p.name}")
        if p.cmdline is not None:
            out.append(f"c {p.pid} " + US.join(p.cmdline) + US)
    out += [f"{'m' if p.own else 'n'} {p.pid}" for p in s.procs if p.own is not None]
    out += [f"MemTotal:       {s.mem_total_kb} kB", f"MemFree:        {s.mem_avail_kb // 2} kB",
            f"MemAvailable:   {s.mem_avail_kb} kB", "Buffers:           15548 kB", "HugePages_Total:       0"]
    for i, (name, (rd, wr)) in enumerate(s.disks.items()):
        out.append(f"   8       {i} {name} 10 0 {rd} 5 20 0 {wr} 7 0 12 12 0 0 0 0 0 0")
    out += ["Inter-|   Receive                                                |  Transmit",
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls"
            " carrier compressed"]
    out += [f"{n:>6}: {rx} 10 0 0 0 0 0 0 {tx} 10 0 0 0 0 0 0" for n, (rx, tx) in s.nets.items()]
    for p in s.procs:
        out.append(f"{p.pid} ({p.comm or p.name}) {p.state} 1 {p.pid} {p.pid} 0 -1 4194560 100 0 0 0 {p.utime} {p.stime} "
                   f"0 0 20 0 3 0 {p.start} 123456789 {p.rss_kb // 4} 18446744073709551615 1 1 0 0 0 0 0")
        out += [f"Name:\t{(p.comm or p.name)[:15]}", "Umask:\t0022", "State:\tS (sleeping)", f"Tgid:\t{p.pid}",
                f"Pid:\t{p.pid}", "PPid:\t1", f"VmPeak:\t  {p.rss_kb * 2} kB",
                f"VmHWM:\t  {p.hwm_kb if p.hwm_kb is not None else p.rss_kb} kB", f"VmRSS:\t  {p.rss_kb} kB",
                "Threads:\t3", "Cpus_allowed_list:\t0-1", "nonvoluntary_ctxt_switches:\t2"]
    out.append(f". {seq}")
    return "\n".join(out) + "\n"


def raw(*snaps: Snap, ncpu: int | None = 2, watch: tuple[str, ...] = ("ossfs",),
        client: tuple[str, tuple[str, ...]] | None = None, marker: bool = False) -> str:
    head = "#fsbench-monitor 1 pid=42 interval=1" + (f" ncpu={ncpu}" if ncpu is not None else "")
    head += " marker=1\n" if marker else "\n"
    head += "".join(f"#watch {w}\n" for w in watch)
    head += f"#client {US.join([client[0], *client[1]])}\n" if client else ""
    return head + "".join(block(i + 1, s) for i, s in enumerate(snaps))


def rows(text: str, **kw) -> dict[tuple[str, str, str], float]:
    """Summary rows keyed by (job, metric, stat)."""
    return {(r["job"], r["metric"], r["stat"]): r["value"] for r in analyse(text, "h1", **kw).summary}


def series(text: str, scope: str, metric: str) -> list[tuple[float, float]]:
    return [(r["t"], r["value"]) for r in analyse(text, "h1").series if r["scope"] == scope and r["metric"] == metric]


def cpu(user: int, system: int, idle: int, iowait: int = 0, steal: int = 0) -> tuple[int, ...]:
    return (user, 0, system, idle, iowait, 0, 0, steal, 0, 0)


def test_host_cpu_is_percent_of_one_core():
    # 2 cores over 2 s = 400 ticks: 300 busy -> 1.5 cores -> 150 %
    text = raw(Snap(100.0, cpu(1000, 500, 5000)), Snap(102.0, cpu(1200, 600, 5080, iowait=20)))
    assert series(text, "host", "cpu_usage") == [(2.0, 150.0)]
    got = rows(text)
    assert got["host", "cpu_usage", "mean"] == 150.0 and got["host", "cpu_usage", "max"] == 150.0


def test_host_cpu_mean_is_time_weighted_and_max_is_the_busiest_interval():
    text = raw(Snap(10.0, cpu(0, 0, 0)), Snap(11.0, cpu(200, 0, 0)), Snap(14.0, cpu(200, 0, 600)))
    assert series(text, "host", "cpu_usage") == [(1.0, 200.0), (4.0, 0.0)]
    got = rows(text)
    assert got["host", "cpu_usage", "mean"] == pytest.approx(50.0)  # 200 % for 1 s, 0 % for 3 s
    assert got["host", "cpu_usage", "max"] == 200.0


def test_a_process_cpu_peak_is_over_a_second_not_one_short_interval():
    # a busy thread on a loaded host: dense 0.1 s intervals, then the stop sample 20 ms later whose read
    # of /proc/PID/stat came late (3 ticks in 20 ms reads 150 % for one thread). The series keeps what the
    # samples say; the peak is the busiest second, the mean the whole window's.
    ts, ticks = [100.0 + 0.1 * i for i in range(13)] + [101.22], [10 * i for i in range(13)] + [123]
    snaps = [Snap(t, procs=[P(7, "burn", start=9000, utime=u)]) for t, u in zip(ts, ticks)]
    text = raw(*snaps, watch=("burn",))
    assert series(text, "burn", "cpu_usage")[-1][1] == pytest.approx(150.0)
    got = rows(text, expected=("burn",))
    assert got["burn", "cpu_usage", "max"] == pytest.approx(103 / 1.02)  # the last 1.02 s: ten 0.1 s and the 20 ms
    assert got["burn", "cpu_usage", "mean"] == pytest.approx(123 / 1.22)


def test_peak_rate_is_the_busiest_stretch_of_at_least_the_window():
    assert peak_rate([], 1.0) is None
    assert peak_rate([(50.0, 0.5)], 1.0) == 100.0  # shorter than the window: the whole rate
    # 1 s at 0, 1 s at 200, 0.1 s at 900: the busiest stretch of a second or more is the 200 one with
    # the spike (290 over 1.1 s), not the 0.1 s spike alone
    assert peak_rate([(0.0, 1.0), (200.0, 1.0), (90.0, 0.1)], 1.0) == pytest.approx(290 / 1.1)
    # ten 0.1 s pieces at 100 then one at 300: the last second holds nine at 100 and the 300
    pieces = [(10.0, 0.1)] * 10 + [(30.0, 0.1)]
    assert peak_rate(pieces, PEAK_WINDOW_S) == pytest.approx(120.0)


@given(st.lists(st.tuples(st.floats(0, 1000), st.floats(0.01, 2)), min_size=1, max_size=30))
@settings(max_examples=200, deadline=None)
def test_peak_rate_is_the_best_of_every_stretch_and_lies_between_the_mean_and_the_highest_piece(raw_pieces):
    pieces = [(rate * span, span) for rate, span in raw_pieces]
    peak = peak_rate(pieces, 1.0)
    mean = sum(a for a, _ in pieces) / sum(s for _, s in pieces)
    assert mean - 1e-6 <= peak <= max(rate for rate, _ in raw_pieces) + 1e-6
    stretches = [pieces[i:j] for i in range(len(pieces)) for j in range(i + 1, len(pieces) + 1)]
    wide = [sum(a for a, _ in r) / sum(s for _, s in r) for r in stretches if sum(s for _, s in r) >= 1.0]
    assert peak == pytest.approx(max(wide) if wide else mean, abs=1e-6)  # the short cut misses none


def test_host_cpu_without_cpu_count_uses_clock_ticks():
    text = raw(Snap(10.0, cpu(0, 0, 0)), Snap(12.0, cpu(100, 50, 250)), ncpu=None)
    assert series(text, "host", "cpu_usage") == [(2.0, 75.0)]  # 150 ticks / (100 Hz x 2 s)


def test_memory_used_and_peak():
    text = raw(Snap(1.0, mem_avail_kb=6 * 1024 * 1024), Snap(2.0, mem_avail_kb=5 * 1024 * 1024),
               Snap(3.0, mem_avail_kb=7 * 1024 * 1024))
    assert [v for _, v in series(text, "host", "memory_used")] == [2 * 1024 * MiB, 3 * 1024 * MiB, 1024 * MiB]
    assert rows(text)["host", "memory_peak", "max"] == 3 * 1024 * MiB


def test_process_cpu_sums_its_pids():
    a0, b0 = P(100, "ossfs", start=50, utime=1000, stime=100), P(101, "ossfs", start=60, utime=10)
    a1, b1 = P(100, "ossfs", start=50, utime=1080, stime=120), P(101, "ossfs", start=60, utime=60)
    text = raw(Snap(1000.0, procs=[a0, b0]), Snap(1001.0, procs=[a1, b1]))
    assert series(text, "ossfs", "cpu_usage") == [(1.0, 150.0)]  # (100 + 50) ticks in 1 s
    got = rows(text)
    assert got["ossfs", "cpu_usage", "mean"] == 150.0
    assert [r["operation"] for r in analyse(text, "h1").summary if r["job"] == "ossfs"] == ["process"] * 3


def test_a_zombie_is_not_a_running_client():
    # a FUSE client that exited after its unmount but was not reaped (PID 1 of a container) stays in
    # /proc as a zombie: no CPU, no memory, and it must not appear as a process of the next target
    z0, z1 = P(100, "juicefs", start=50, utime=10, state="Z"), P(100, "juicefs", start=50, utime=10, state="Z")
    live0, live1 = P(200, "s3fs", start=60, utime=10), P(200, "s3fs", start=60, utime=30)
    text = raw(Snap(1000.0, procs=[z0, live0]), Snap(1001.0, procs=[z1, live1]), watch=("juicefs", "s3fs"))
    assert {r["job"] for r in analyse(text, "h1").summary if r["operation"] == "process"} == {"s3fs"}


MOUNT = ("juicefs", "mount", "-d", "redis://127.0.0.1/1", "/mnt/jfs")
BENCH = ("juicefs", "bench", "/mnt/jfs/fsbench-run/case", "-p", "4")
STATS = ("juicefs", "stats", "/mnt/jfs", "--interval", "1")


def test_the_client_is_only_the_process_holding_its_mount():
    # the mount's supervisor and its worker, a bench and a stats collector: all four are called juicefs
    def snap(t: float, k: int) -> Snap:
        return Snap(t, procs=[P(10, "juicefs", 5, 100 + 10 * k, rss_kb=1000, cmdline=MOUNT),
                              P(11, "juicefs", 6, 200 + 20 * k, rss_kb=300_000, cmdline=(f"/usr/bin/{MOUNT[0]}",
                                                                                          *MOUNT[1:])),
                              P(20, "juicefs", 7, 50 + 100 * k, rss_kb=500_000, cmdline=BENCH),
                              P(30, "juicefs", 8, 1 + k, rss_kb=40_000, cmdline=STATS)])
    client = ("juicefs", ("mount", "/mnt/jfs/"))  # a trailing slash on either side still matches
    text = raw(snap(100.0, 0), snap(101.0, 1), watch=(), client=client)
    got = rows(text)
    assert got["juicefs", "cpu_usage", "mean"] == 30.0  # (10 + 20) ticks in 1 s: not the bench's 100
    assert got["juicefs", "memory_peak", "max"] == 301_000 * 1024
    assert {r["job"] for r in analyse(text, "h1").summary} == {"host", "juicefs"}
    # also watched by name: every juicefs process is kept apart, as `juicefs (all)`
    both = rows(raw(snap(100.0, 0), snap(101.0, 1), watch=("juicefs",), client=client))
    assert both["juicefs", "cpu_usage", "mean"] == 30.0
    assert both["juicefs (all)", "cpu_usage", "mean"] == 131.0  # 10 + 20 + 100 + 1
    assert both["juicefs (all)", "memory_peak", "max"] == 841_000 * 1024


@pytest.mark.parametrize("cmdline, marked, client", [
    (("juicefs mount -d redis://127.0.0.1/1 /mnt/jfs",), False, True),  # rewritten into one title (JuiceFS)
    (("juicefs mount -d --log /var/tmp/fsbench/run/juicefs.lo", "", ""), True, True),  # ... cut short: this run's
    (("juicefs mount -d --log /var/tmp/fsbench/run/juicefs.lo", "", ""), False, False),  # ... another run's
    (("juicefs mount -d --log /var/tmp/fsbench/run/juicefs.lo",), True, False),  # not padded: not cut
    (("juicefs mount -d redis://127.0.0.1/1 /mnt/jfs2", "", ""), False, False),  # another run's mount
    (("juicefs mount -d redis://127.0.0.1/1 /mnt/jfs2",), True, False),  # another mount, in full
    (("juicefs objbench --secret-key **** s3://b", "", ""), True, False),  # shorter title, no `mount`
    (("juicefs stats /mnt/jfs",), True, False),
    (("juicefs", "bench", "/mnt/jfs"), True, False),
])
def test_a_client_title_is_read_as_its_words(cmdline, marked, client):
    from fsbench.monitor.samples import is_client

    assert is_client([*cmdline, ""], Client("juicefs", ("mount", "/mnt/jfs")), marked) is client


def test_the_sampler_checks_the_marker_every_command_of_a_run_has():
    from fsbench.monitor.script import SCRIPT
    from fsbench.run.leftovers import MARKER

    assert f"{MARKER}=${MARKER}" in SCRIPT


def _owned(own: bool | None, ghost: bool | None, **kw) -> dict:
    """One of the run's s3fs processes (100 ticks a second, 10 MiB) beside another's (50, 500 MiB)."""
    def snap(t: float, k: int) -> Snap:
        return Snap(t, procs=[P(10, "s3fs", 5, 100 * k, rss_kb=10 * 1024, own=own),
                              P(20, "s3fs", 6, 50 * k, rss_kb=500 * 1024, own=ghost)])
    m = analyse(raw(snap(100.0, 0), snap(101.0, 1), watch=("s3fs",), marker=True), "h1", **kw)
    return {"rows": {(r["job"], r["metric"], r["stat"]): r for r in m.summary}, "warnings": m.warnings}


def test_a_name_counts_only_the_runs_own_processes_when_it_has_any():
    got = _owned(True, False)["rows"]
    assert got["s3fs", "cpu_usage", "mean"]["value"] == 100.0  # not 150: the other one is another run's
    assert got["s3fs", "memory_peak", "max"]["value"] == 10 * MiB
    assert not any("none started" in r.get("warnings", "") for r in got.values())
    # an environment that could not be read is not shown to be the run's: left out as well
    assert _owned(True, None)["rows"]["s3fs", "memory_peak", "max"]["value"] == 10 * MiB


@pytest.mark.parametrize("own, ghost, unknown", [(False, False, ""), (None, False, " (1 with an environment fsbench "
                                                                                   "could not read)")])
def test_a_name_none_of_whose_processes_is_the_runs_counts_them_all_flagged(own, ghost, unknown):
    got = _owned(own, ghost)
    why = (f"process 's3fs': 2 processes of that name on h1, none started by this run{unknown}: the figures may "
           "include other users' processes")
    assert got["rows"]["s3fs", "cpu_usage", "mean"]["value"] == 150.0
    assert got["rows"]["s3fs", "memory_peak", "max"]["value"] == 510 * MiB
    for key in (("s3fs", "cpu_usage", "mean"), ("s3fs", "cpu_usage", "max"), ("s3fs", "memory_peak", "max")):
        assert got["rows"][key]["warnings"].startswith(why)  # beside each number; the sample count may follow
    assert "none started" not in got["rows"]["host", "memory_peak", "max"].get("warnings", "") and got["warnings"] == []


def test_another_targets_name_none_of_whose_processes_is_the_runs_counts_nothing():
    # a case on rclone watching juicefs, the name of another target's client: another run's mount is no ghost row
    got = _owned(False, False, expected={"rclone"})
    assert {k[0] for k in got["rows"]} == {"host"} and got["warnings"] == []  # nor "never seen"
    # the run's own process of that name (left by an earlier case) still counts
    assert _owned(True, False, expected={"rclone"})["rows"]["s3fs", "memory_peak", "max"]["value"] == 10 * MiB


def test_a_sampler_without_the_runs_marker_counts_every_process_as_before():
    # marker=0 (or an older raw file): nothing says whose a process is, so nothing is left out or flagged
    def snap(t: float, k: int) -> Snap:
        return Snap(t, procs=[P(10, "s3fs", 5, 100 * k), P(20, "s3fs", 6, 50 * k)])
    m = analyse(raw(snap(100.0, 0), snap(101.0, 1), watch=("s3fs",)), "h1")
    assert {(r["job"], r["metric"], r["stat"]): r["value"] for r in m.summary}["s3fs", "cpu_usage", "mean"] == 150.0
    assert not any("none started" in r.get("warnings", "") for r in m.summary) and m.warnings == []


def test_a_process_is_the_runs_when_any_scan_read_its_marker():
    from fsbench.monitor.processes import owners

    # only the second scan could read its environment: the run's in every sample; the ghost's reads said no
    snaps = [Snap(100.0 + k, procs=[P(10, "s3fs", 5, 100 * k, rss_kb=1024, own=(None, True, None)[k]),
                                    P(20, "s3fs", 6, 50 * k, rss_kb=9 * 1024, own=(False, None, None)[k])])
             for k in (0, 1, 2)]
    text = raw(*snaps, watch=("s3fs",), marker=True)
    assert owners(read_raw(text), "h1").own_only == {"s3fs"}
    assert series(text, "s3fs", "cpu_usage") == [(1.0, 100.0), (2.0, 100.0)]
    assert series(text, "s3fs", "memory_rss") == [(0.0, MiB), (1.0, MiB), (2.0, MiB)]


def test_the_client_rule_stays_and_the_all_scope_counts_the_runs_own():
    # the run's mount and its juicefs stats (both marked) beside another run's mount of the same path
    other = P(30, "juicefs", 8, 0, rss_kb=900_000, cmdline=MOUNT, own=False)

    def snap(t: float, k: int) -> Snap:
        return Snap(t, procs=[P(10, "juicefs", 5, 100 * k, rss_kb=1000, cmdline=MOUNT, own=True),
                              P(20, "juicefs", 7, 10 * k, rss_kb=40_000, cmdline=STATS, own=True), other])
    text = raw(snap(100.0, 0), snap(101.0, 1), watch=("juicefs",), client=("juicefs", ("mount", "/mnt/jfs")),
               marker=True)
    got = rows(text)
    assert got["juicefs (all)", "memory_peak", "max"] == 41_000 * 1024  # the run's two, not the other mount
    # the client is decided by its command line alone, as before (another run cannot mount the same path)
    assert got["juicefs", "memory_peak", "max"] == 901_000 * 1024


def test_a_client_whose_words_never_match_falls_back_to_its_name_and_says_so():
    procs = [P(20, "juicefs", 7, 50, cmdline=BENCH)]
    text = raw(Snap(100.0, procs=procs), Snap(101.0, procs=[P(20, "juicefs", 7, 150, cmdline=BENCH)]), watch=(),
               client=("juicefs", ("mount", "/mnt/other")))
    m = analyse(text, "h1")
    assert any("had mount /mnt/other in its command line" in w for w in m.warnings)
    assert rows(text)["juicefs", "cpu_usage", "mean"] == 100.0


def test_a_client_never_seen_is_said():
    m = analyse(raw(Snap(1.0), Snap(2.0), watch=(), client=("ceph-fuse", ("/mnt/c",))), "h1")
    assert m.warnings == ["process 'ceph-fuse' was never seen on h1 (names match /proc/PID/comm, 15 characters)"]


def test_custom_clock_ticks():
    before, after = P(7, "ossfs", start=1, utime=0), P(7, "ossfs", start=1, utime=250)
    text = raw(Snap(10.0, procs=[before]), Snap(11.0, procs=[after]))
    assert rows(text, clk_tck=250)["ossfs", "cpu_usage", "mean"] == 100.0


def test_rss_is_summed_per_sample_and_peak_is_the_highest_sum():
    s1 = [P(1, "ossfs", 5, 0, rss_kb=100 * 1024), P(2, "ossfs", 5, 0, rss_kb=50 * 1024)]
    s2 = [P(1, "ossfs", 5, 0, rss_kb=300 * 1024), P(2, "ossfs", 5, 0, rss_kb=50 * 1024)]
    s3 = [P(1, "ossfs", 5, 0, rss_kb=120 * 1024)]
    text = raw(Snap(10.0, procs=s1), Snap(11.0, procs=s2), Snap(12.0, procs=s3))
    assert [v / MiB for _, v in series(text, "ossfs", "memory_rss")] == [150, 350, 120]
    assert rows(text)["ossfs", "memory_peak", "max"] == 350 * MiB


def test_hwm_counts_only_when_reached_while_monitored():
    # started before monitoring with an old 900 MiB peak: that peak belongs to an earlier case
    old = [P(1, "ossfs", 5, 0, rss_kb=100 * 1024, hwm_kb=900 * 1024) for _ in range(2)]
    assert rows(raw(Snap(10.0, procs=[old[0]]), Snap(11.0, procs=[old[1]])))["ossfs", "memory_peak", "max"] == 100 * MiB
    # the peak grew between samples (a spike the samples missed): VmHWM tells
    grew = [P(1, "ossfs", 5, 0, rss_kb=100 * 1024, hwm_kb=hwm * 1024) for hwm in (900, 950)]
    got = rows(raw(Snap(10.0, procs=[grew[0]]), Snap(11.0, procs=[grew[1]])))
    assert got["ossfs", "memory_peak", "max"] == 950 * MiB
    # born after the first sample: its whole VmHWM is inside the window
    new = P(1, "ossfs", 1050, 0, rss_kb=100 * 1024, hwm_kb=400 * 1024)
    assert rows(raw(Snap(10.0), Snap(11.0, procs=[new])))["ossfs", "memory_peak", "max"] == 400 * MiB


def test_process_born_during_an_interval_counts_from_its_start():
    # born at 10.5 s (1050 ticks), 50 ticks of CPU by 11.0 s: one full core while it ran
    text = raw(Snap(10.0), Snap(11.0, procs=[P(9, "ossfs", start=1050, utime=50)]),
               Snap(12.0, procs=[P(9, "ossfs", start=1050, utime=150)]))
    assert series(text, "ossfs", "cpu_usage") == [(1.0, 100.0), (2.0, 100.0)]
    assert rows(text)["ossfs", "cpu_usage", "mean"] == 100.0


def test_process_born_just_before_a_sample_is_not_a_rate():
    text = raw(Snap(10.0), Snap(11.0, procs=[P(9, "ossfs", start=1098, utime=2)]))
    assert series(text, "ossfs", "cpu_usage") == []
    assert ("ossfs", "cpu_usage", "mean") not in rows(text)


def test_disappearing_pids():
    a = [P(1, "ossfs", 5, u) for u in (0, 100, 200)]
    b = [P(2, "ossfs", 5, u) for u in (0, 50)]
    text = raw(Snap(10.0, procs=[a[0], b[0]]), Snap(11.0, procs=[a[1], b[1]]), Snap(12.0, procs=[a[2]]),
               Snap(13.0), Snap(14.0))
    # pid 2 is gone at 12 s: only pid 1's 100 ticks; at 13 s nothing of that name: no value, not 0 %
    assert series(text, "ossfs", "cpu_usage") == [(1.0, 150.0), (2.0, 100.0)]
    assert rows(text)["ossfs", "cpu_usage", "mean"] == 125.0
    assert series(text, "ossfs", "memory_rss")[-1][0] == 2.0


def test_reused_pid_is_a_new_process():
    first = P(7, "ossfs", start=100, utime=5000)
    again = P(7, "ossfs", start=1050, utime=40)  # same pid, born at 10.5 s: fewer ticks is no negative delta
    text = raw(Snap(10.0, procs=[first]), Snap(11.0, procs=[again]))
    assert series(text, "ossfs", "cpu_usage") == [(1.0, 80.0)]


def test_process_that_took_the_name_by_exec_waits_for_a_baseline():
    late = [P(3, "ossfs", start=10, utime=u) for u in (7000, 7100)]
    text = raw(Snap(10.0), Snap(11.0, procs=[late[0]]), Snap(12.0, procs=[late[1]]))
    assert series(text, "ossfs", "cpu_usage") == [(2.0, 100.0)]


def test_pid_taken_by_another_program_since_the_last_scan_is_ignored():
    mine = [P(4, "ossfs", start=5, utime=u) for u in (0, 100)]
    other = P(4, "ossfs", start=1050, utime=3, comm="bash")  # the sampler still lists pid 4 as ossfs
    text = raw(Snap(10.0, procs=[mine[0]]), Snap(11.0, procs=[mine[1]]), Snap(12.0, procs=[other]))
    assert series(text, "ossfs", "cpu_usage") == [(1.0, 100.0)]
    assert [t for t, _ in series(text, "ossfs", "memory_rss")] == [0.0, 1.0]


def test_odd_comm_and_long_names():
    name = "a-very-long-daemon-name"
    p0 = P(5, name, 1, 0, comm=name[:15])
    p1 = P(5, name, 1, 30, comm=name[:15])
    odd0, odd1 = P(6, "x) y (z", 1, 0), P(6, "x) y (z", 1, 10)
    text = raw(Snap(1.0, procs=[p0, odd0]), Snap(2.0, procs=[p1, odd1]), watch=(name, "x) y (z"))
    got = rows(text)
    assert got[name, "cpu_usage", "mean"] == 30.0 and got["x) y (z", "cpu_usage", "mean"] == 10.0


def test_disk_rates_count_whole_disks_once():
    disks0 = {"sda": (0, 0), "sda1": (0, 0), "dm-0": (0, 0), "loop0": (0, 0), "nvme0n1": (0, 0), "nvme0n1p1": (0, 0)}
    disks1 = {"sda": (2048, 4096), "sda1": (2048, 4096), "dm-0": (2048, 4096), "loop0": (999, 999),
              "nvme0n1": (1024, 0), "nvme0n1p1": (1024, 0)}
    text = raw(Snap(1.0, disks=disks0), Snap(3.0, disks=disks1))
    assert series(text, "host", "disk_read") == [(2.0, (2048 + 1024) * 512 / 2)]
    assert series(text, "host", "disk_write") == [(2.0, 4096 * 512 / 2)]


def test_network_rates_skip_loopback_and_undo_a_32bit_wrap():
    n0 = {"lo": (0, 0), "eth0": (2**32 - 1000, 10), "eth1": (0, 0)}
    n1 = {"lo": (10**9, 10**9), "eth0": (500, 4010), "eth1": (100, 0)}
    text = raw(Snap(1.0, nets=n0), Snap(2.0, nets=n1))
    assert series(text, "host", "net_rx") == [(1.0, 1600.0)]
    assert series(text, "host", "net_tx") == [(1.0, 4000.0)]


def test_counter_reset_gives_no_rate_instead_of_a_huge_one():
    text = raw(Snap(1.0, nets={"eth0": (10**12, 0)}), Snap(2.0, nets={"eth0": (5, 0)}),
               Snap(3.0, nets={"eth0": (1005, 0)}))
    assert series(text, "host", "net_rx") == [(2.0, 1000.0)]
    assert delta(2**32 - 1, 4) == 5 and delta(5, 3) is None and delta(3, 5) == 2


def test_truncated_final_block_is_dropped():
    full = raw(*[Snap(10.0 + i, cpu(100 * i, 0, 100 * i), procs=[P(1, "ossfs", 5, 50 * i)]) for i in range(4)])
    for cut in (len(full) - 3, len(full) - 200, full.rindex("@ ") + 5):
        m = analyse(full[:cut], "h1")
        assert m.samples == 3 and not m.warnings
        assert rows(full[:cut])["ossfs", "cpu_usage", "mean"] == 50.0


def test_garbled_blocks_are_skipped_with_a_warning():
    good = [block(i + 1, Snap(10.0 + i, cpu(10 * i, 0, 10 * i))) for i in range(4)]
    half = good[1][: good[1].index("\n", len(good[1]) // 2) + 1]  # the sampler was cut after a line
    text = good[0] + half + good[2] + "@ 13.00\n. 4\n" + good[3] + block(6, Snap(9.0))
    res = parse_result(text, "h1")
    assert res.meta["samples"] == 3
    assert any("incomplete or garbled" in w for w in res.warnings)
    assert any("backwards" in w for w in res.warnings)


def test_one_sample_gives_memory_and_a_warning():
    res = parse_result(raw(Snap(1.0, procs=[P(1, "ossfs", 5, 0, rss_kb=2048)])), "h1")
    assert {(r["job"], r["metric"]) for r in res.rows} == {("host", "memory_peak"), ("ossfs", "memory_peak")}
    assert any("only one complete sample" in w for w in res.warnings)


def test_watched_name_never_seen_is_a_warning():
    res = parse_result(raw(Snap(1.0), Snap(2.0), watch=("ossfs", "juicefs")), "h1")
    assert sum("never seen" in w for w in res.warnings) == 2


@pytest.mark.parametrize("text, reason", [
    ("", "not fsbench monitor output"),
    ("random words\nand more\n", "not fsbench monitor output"),
    ("#fsbench-monitor 1 pid=3 interval=1 ncpu=2\n#watch x\n@ 12.00 1\ncpu  1 2 3 4\n", "no complete sample"),
])
def test_nothing_usable_is_a_parse_error(text, reason):
    with pytest.raises(ParseError, match=reason):
        analyse(text, "h1", source="raw/monitor-h1.txt")


def test_rows_follow_the_tidy_contract():
    text = raw(Snap(1.0, procs=[P(1, "ossfs", 5, 0)]), Snap(2.0, cpu(10, 0, 10), procs=[P(1, "ossfs", 5, 10)]))
    for r in analyse(text, "h1").summary:
        assert r["tool"] == "monitor" and r["host"] == "h1"
        assert (r["metric"], r["unit"]) in {("cpu_usage", "%"), ("memory_peak", "B")}
        assert r["stat"] in ({"mean", "max"} if r["metric"] == "cpu_usage" else {"max"})
        assert r["operation"] == ("host" if r["job"] == "host" else "process")


def test_sampler_script_is_valid_sh_and_arguments_stay_arguments(tmp_path):
    argv = sampler_argv(0.5, ["ossfs", "$(touch pwned) ;x", "*"], max_s=10.2)
    assert argv[3:5] == ["fsbench-monitor", "/bin/sh"] and argv[5] == SCRIPT
    assert argv[6:] == ["500", "11", "250", "", "", "100", "", "ossfs", "$(touch pwned) ;x", "*"]
    client = Client("$(touch pwned2)", ("/mnt/a b", "$(touch pwned3)"))
    argv = sampler_argv(0.5, ["ossfs"], max_s=10, client=client)
    assert argv[9:] == ["$(touch pwned2)", "/mnt/a b\x1f$(touch pwned3)", "100", "", "ossfs"]
    out = subprocess.run(sampler_argv(0.2, [], max_s=0.1, client=client), cwd=tmp_path, capture_output=True,
                         text=True, timeout=30).stdout
    assert "#client $(touch pwned2)\x1f/mnt/a b\x1f$(touch pwned3)\n" in out and list(tmp_path.iterdir()) == []
    assert read_raw(out).client == client
    assert subprocess.run(["/bin/sh", "-n", "-c", argv[2]]).returncode == 0
    assert subprocess.run(["/bin/sh", "-n", "-c", argv[5]]).returncode == 0
    out = subprocess.run(sampler_argv(0.2, ["$(touch pwned) ;x", "*"], max_s=0.1), cwd=tmp_path,
                         capture_output=True, text=True, timeout=30).stdout
    assert list(tmp_path.iterdir()) == [] and "#watch $(touch pwned) ;x\n#watch *\n" in out
    assert analyse(out, "h1").samples >= 1
    with pytest.raises(ValueError):
        sampler_argv(0, ["ossfs"])
    with pytest.raises(ValueError):
        sampler_argv(1, ["a/b"])
    with pytest.raises(ValueError):
        sampler_argv(1, [], client=Client("juicefs", ("a\x1fb",)))


_SAMPLE_TEXT = raw(*[Snap(10.0 + i, cpu(70 * i, 9 * i, 100 * i), nets={"eth0": (1000 * i, 10 * i)},
                          procs=[P(1, "ossfs", 5, 40 * i), P(2 + i, "ossfs", 1000 + 100 * i, i)]) for i in range(5)])


@settings(max_examples=300, deadline=None)
@given(cut=st.integers(0, len(_SAMPLE_TEXT)), pos=st.integers(0, len(_SAMPLE_TEXT)),
       junk=st.text(st.sampled_from(list("@.p 0123456789-:()\nabcx#")), max_size=40))
def test_mutated_input_gives_finite_rows_or_a_parse_error(cut, pos, junk):
    text = _SAMPLE_TEXT[:pos] + junk + _SAMPLE_TEXT[pos:cut]
    try:
        m = analyse(text, "h1")
    except ParseError:
        return
    for r in m.summary + m.series:
        assert math.isfinite(r["value"]) and r["value"] >= 0
