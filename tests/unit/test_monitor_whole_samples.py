"""The sampler behind awk: each sample reaches the reader as one piece, its exit status and its last sample kept."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fsbench.monitor.samples import read_raw
from fsbench.monitor.script import WHOLE_SAMPLES, sampler_argv


def _read_as_it_comes(argv: list[str], seconds: float, env: dict[str, str] | None = None) -> tuple[bytes, int, int]:
    """Read the sampler's output as sshd would, a read as soon as some is there; then TERM its group."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
                            env=env)
    assert proc.stdout is not None
    fd, reads, data = proc.stdout.fileno(), 0, b""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.05)[0]:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            reads, data = reads + 1, data + chunk
    os.killpg(proc.pid, signal.SIGTERM)
    data += proc.stdout.read()
    return data, reads, proc.wait(timeout=30)


def test_each_sample_is_one_piece_and_a_term_still_gets_the_last_one():
    data, reads, status = _read_as_it_comes(sampler_argv(0.1, ["sh", "python3"]), 1.5)
    samples = read_raw(data.decode()).samples
    assert len(samples) >= 5 and data.endswith(b". %d\n" % samples[-1].seq)
    assert status == 0 and b"#fsbench-monitor-exit" not in data
    # the sampler alone writes a sample in five pieces or more (a printf, a `cat` write per file, a printf)
    assert reads <= 2 * len(samples) + 2, (reads, len(samples))


def test_the_sampler_s_exit_status_is_passed_on_and_its_lines_kept_whole():
    inner = 'echo "#fsbench-monitor 1"; i=0; while [ $i -lt 3 ]; do i=$((i + 1)); echo "@ 1.$i $i"; ' \
            'seq 1 3000; echo ". $i"; done; printf "cut"; exit 3'
    r = subprocess.run(["/bin/sh", "-c", WHOLE_SAMPLES, "fsbench-monitor", "/bin/sh", inner], capture_output=True,
                       timeout=30)
    plain = subprocess.run(["/bin/sh", "-c", inner], capture_output=True, timeout=30)
    assert r.returncode == 3 and r.stdout == plain.stdout  # the cut last line too, as it was


def test_without_awk_the_sampler_streams_as_it_writes(tmp_path: Path):
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("sh", "cat", "sleep", "tr", "grep", "ls"):
        (tools / tool).symlink_to(shutil.which(tool) or tool)
    env = {**os.environ, "PATH": str(tools)}
    data, _, status = _read_as_it_comes(sampler_argv(0.1, ["sh"], shell="/bin/sh"), 1.5, env)
    # the pipe to awk would have failed (`awk: not found`) and passed on nothing; how many pieces come is not
    # asserted: on a loaded machine the sampler's pieces can meet in the pipe before a read
    assert status == 0 and len(read_raw(data.decode()).samples) >= 5


def test_a_term_to_the_group_waits_for_the_sampler_s_last_sample_and_its_status():
    """Every shell of the pipe waits for the sampler on TERM: its trap's last sample and exit status come
    through, and it is reaped by its own parent (not left to init, its CPU uncounted)."""
    inner = ('trap \'i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; echo ". 2"; exit 5\' TERM; '
             'echo "@ 1 1"; echo ". 1"; while :; do sleep 0.05; done')
    proc = subprocess.Popen(["/bin/sh", "-c", WHOLE_SAMPLES, "fsbench-monitor", "/bin/sh", inner],
                            stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"@ 1 1\n"
    os.killpg(proc.pid, signal.SIGTERM)
    out = proc.stdout.read()
    assert proc.wait(timeout=30) == 5 and out == b". 1\n. 2\n"
    with pytest.raises(ProcessLookupError):  # nothing of the group outlived the pipe's first shell
        os.killpg(proc.pid, 0)


def test_a_sampler_on_this_machine_runs_without_awk_and_one_across_ssh_behind_it(tmp_path: Path):
    """Whole samples matter where they leave the host as packets; on this machine the pieces come through a pipe,
    and awk (with its libraries) would be read from disk again after every case's cache drop."""
    from fsbench.monitor.script import MAGIC, SCRIPT
    from fsbench.monitor.session import MonitorSession
    from fsbench.transport.local import LocalTransport

    plain = sampler_argv(0.1, ["sh"], whole_samples=False)
    assert plain[:4] == ["/bin/sh", "-c", SCRIPT, MAGIC] and WHOLE_SAMPLES not in plain
    assert plain[4:] == sampler_argv(0.1, ["sh"])[6:]  # the sampler's own arguments, the same either way

    class Remote(LocalTransport):
        remote_base = "/tmp/fsbench-x"  # a host reached over SSH has its work folders somewhere

    here = MonitorSession(LocalTransport(), "local", 0.1, ["sh"], tmp_path / "here.txt")
    there = MonitorSession(Remote(), "h1", 0.1, ["sh"], tmp_path / "there.txt")
    assert here.argv[2] == SCRIPT and there.argv[2] == WHOLE_SAMPLES
    # a caller may choose (bench/monitor_cost.py measures the SSH hosts' form on this machine)
    assert MonitorSession(LocalTransport(), "local", 0.1, ["sh"], tmp_path / "x.txt", whole_samples=True).argv[2] \
        == WHOLE_SAMPLES
    # the sampler alone streams its samples and ends on TERM with its last one, as behind awk
    assert here.start()
    time.sleep(0.5)
    summary = here.stop()
    assert here.result is not None and here.result.interrupted and not summary.warnings
    assert summary.meta["samples"] >= 4 and {"cpu_usage", "memory_peak"} <= {r["metric"] for r in summary.rows}
