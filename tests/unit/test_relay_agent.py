"""The relay's program (fsbench/transport/relay_agent.py) run as a real process: its frames, its children, its end."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fsbench.transport import relay_agent
from fsbench.transport.relay_agent import HEADER

AGENT = Path(relay_agent.__file__)
GRACE_S = 0.5


class Agent:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # a grace of 0.5 s between TERM and KILL instead of 5 s: the same steps, sooner
        self.proc = subprocess.Popen([sys.executable, "-u", str(AGENT), str(GRACE_S)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, cwd=folder)
        self.buf = b""

    def send(self, kind: str, ident: int, payload: bytes = b"") -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(HEADER.pack(ord(kind), ident, len(payload)) + payload)
        self.proc.stdin.flush()

    def start(self, ident: int, argv: list[str], stdin: bytes | None = None, ready: list[str] | None = None,
              group: int | None = None, lag: float | None = None) -> None:
        spec = {"argv": argv, "stdin": stdin is not None, "ready": ready, "group": group, "lag": lag}
        self.send("S", ident, json.dumps(spec).encode())
        if stdin is not None:  # as the controller sends it: chunks, then an empty frame
            for at in range(0, len(stdin), 1 << 18):
                self.send("I", ident, stdin[at:at + (1 << 18)])
            self.send("I", ident)

    def frames_until(self, done, timeout: float = 10.0) -> list[tuple[str, int, bytes]]:
        """Every frame read until done(frames) is true."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        frames: list[tuple[str, int, bytes]] = []
        self.reads: list[tuple[float, int]] = []  # when each read came, and how many frames had come before it
        limit = time.monotonic() + timeout
        while not done(frames):
            assert time.monotonic() < limit, f"no end within {timeout} s: {frames}"
            if select.select([fd], [], [], 0.2)[0]:
                data = os.read(fd, 1 << 16)
                assert data, f"the agent ended: {frames}"
                self.reads.append((time.monotonic(), len(frames)))
                self.buf += data
            while len(self.buf) >= HEADER.size:
                kind, ident, length = HEADER.unpack_from(self.buf)
                if len(self.buf) < HEADER.size + length:
                    break
                frames.append((chr(kind), ident, self.buf[HEADER.size:HEADER.size + length]))
                self.buf = self.buf[HEADER.size + length:]
        return frames


def ended(*idents: int):
    return lambda frames: {i for k, i, _ in frames if k in "XF"} >= set(idents)


def joined(frames, kind: str, ident: int) -> bytes:
    return b"".join(p for k, i, p in frames if k == kind and i == ident)


@pytest.fixture
def agent(tmp_path):
    folder = tmp_path / "relay"
    folder.mkdir()
    a = Agent(folder)
    yield a
    if a.proc.poll() is None:
        a.proc.kill()
    a.proc.wait()


def test_output_status_and_signal_of_each_child(agent):
    agent.start(1, ["sh", "-c", "echo out; echo err >&2; exit 3"])
    agent.start(2, ["sh", "-c", "kill -s KILL $$"])
    agent.start(3, ["/no/such/program"])
    frames = agent.frames_until(ended(1, 2, 3))
    assert joined(frames, "O", 1) == b"out\n" and joined(frames, "E", 1) == b"err\n"
    status = {i: json.loads(p)["status"] for k, i, p in frames if k == "X"}
    assert status == {1: 3, 2: -9}
    assert b"/no/such/program" in joined(frames, "F", 3)


def test_stdin_is_fed_then_closed(agent):
    data = bytes(range(256)) * 1000
    agent.start(1, ["sh", "-c", "cat; echo end >&2"], stdin=data)
    frames = agent.frames_until(ended(1))
    assert joined(frames, "O", 1) == data and joined(frames, "E", 1) == b"end\n"


def test_a_large_input_goes_through_whole_and_in_linear_time(agent):
    """32 MiB in 256 KiB frames (a tool's binary put on a host behind a relay): its digest on the other side,
    within seconds (a buffer grown by copies of itself copies gigabytes)."""
    import hashlib

    data = os.urandom(1 << 20) * 32
    started = time.monotonic()
    agent.start(1, ["sha256sum"], stdin=data)
    frames = agent.frames_until(ended(1), timeout=60)
    assert joined(frames, "O", 1).split()[0].decode() == hashlib.sha256(data).hexdigest()
    assert time.monotonic() - started < 20


def test_input_to_a_child_that_stopped_reading_goes_nowhere(agent):
    agent.start(1, ["sh", "-c", "exec 0<&-; echo closed"], stdin=b"x" * (1 << 20))
    frames = agent.frames_until(ended(1))
    assert joined(frames, "O", 1) == b"closed\n"


def test_terminate_ends_a_child_and_ready_is_said(agent, tmp_path):
    flag = tmp_path / "up"
    agent.start(1, ["sh", "-c", f"sleep 0.3; touch {flag}; exec sleep 60"], ready=["test", "-e", str(flag)])
    frames = agent.frames_until(lambda fs: any(k == "Y" for k, _, _ in fs))
    assert not any(k == "X" for k, _, _ in frames)
    agent.send("T", 1)
    frames = agent.frames_until(ended(1))
    assert [json.loads(p)["status"] for k, i, p in frames if k == "X"] == [-15]


def test_the_end_of_stdin_stops_every_child_and_the_agent(agent, tmp_path):
    pids = tmp_path / "pids"
    # one child ignores TERM: the agent must KILL it after its grace period, then exit
    agent.start(1, ["sh", "-c", f"echo $$ >> {pids}; exec sleep 60"])
    agent.start(2, ["sh", "-c", f"trap '' TERM; echo $$ >> {pids}; while :; do sleep 0.1; done"])
    limit = time.monotonic() + 5
    while (not pids.exists() or len(pids.read_text().split()) < 2) and time.monotonic() < limit:
        time.sleep(0.05)
    started = [int(p) for p in pids.read_text().split()]
    assert agent.proc.stdin is not None
    agent.proc.stdin.close()
    assert agent.proc.wait(timeout=GRACE_S + 5) == 0
    for pid in started:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_frames_of_many_children_arrive_whole(agent):
    for i in range(1, 41):
        agent.start(i, ["sh", "-c", f"head -c {i * 3000} /dev/zero | tr '\\0' x"])
    frames = agent.frames_until(ended(*range(1, 41)))
    for i in range(1, 41):
        assert joined(frames, "O", i) == b"x" * (i * 3000)


def test_the_program_holds_its_folders_lock_for_its_life(agent):
    lock = agent.folder / "lock"
    agent.start(1, ["true"])
    agent.frames_until(ended(1))  # it runs, so its lock is in place
    held = subprocess.run(["flock", "-n", str(lock), "true"], check=False, timeout=10)
    assert held.returncode == 1 and not (agent.folder / "lock.tmp").exists()
    assert agent.proc.stdin is not None
    agent.proc.stdin.close()
    agent.proc.wait(timeout=10)
    assert subprocess.run(["flock", "-n", str(lock), "true"], check=False, timeout=10).returncode == 0


def test_a_groups_frames_are_held_until_it_is_whole_and_every_command_ended_then_leave_together(agent):
    """A step's commands on a relay's hosts (fsbench.transport.relay_steps): one write back, not one a host."""
    started = time.monotonic()
    for i, pause in ((1, 0), (2, 0.2), (3, 0.4)):
        agent.start(i, ["sh", "-c", f"echo pgid >&2; sleep {pause}; echo out {i}; exit {i}"], group=7)
    agent.start(4, ["sh", "-c", "echo alone"])  # not of the group: not held
    agent.send("C", 7)
    frames = agent.frames_until(ended(1, 2, 3, 4))
    assert [f for f in frames if f[1] == 4][0][0] == "O"
    first_of_group = min(n for n, f in enumerate(frames) if f[1] in (1, 2, 3))
    came = [t for t, before in agent.reads if before <= first_of_group][-1]
    assert came - started >= 0.4  # nothing of the group before its slowest command ended
    last_of_group = max(n for n, f in enumerate(frames) if f[1] in (1, 2, 3))
    assert not [before for _, before in agent.reads if first_of_group < before <= last_of_group]  # one write
    assert {i: json.loads(p)["status"] for k, i, p in frames if k == "X"} == {1: 1, 2: 2, 3: 3, 4: 0}
    assert [joined(frames, "O", i) for i in (1, 2, 3)] == [b"out 1\n", b"out 2\n", b"out 3\n"]


def test_a_released_group_streams_and_an_unclosed_group_is_held(agent):
    agent.start(1, ["sh", "-c", "echo pgid >&2; exec sleep 60"], group=3)
    agent.start(2, ["true"], group=3)
    time.sleep(0.5)
    assert not select.select([agent.proc.stdout], [], [], 0)[0]  # not whole yet (no C), 2's end is held
    agent.send("R", 3)  # as the controller does when a command of the step overran its timeout
    frames = agent.frames_until(lambda fs: any(k == "E" and i == 1 for k, i, _ in fs) and ended(2)(fs))
    agent.send("T", 1)
    frames += agent.frames_until(ended(1))
    assert json.loads(joined(frames, "X", 1))["status"] == -15


def test_a_group_holding_more_than_its_limit_lets_it_go(agent):
    from fsbench.transport.relay_frames import HOLD_MAX

    agent.start(1, ["sh", "-c", f"head -c {HOLD_MAX + 1000} /dev/zero"], group=5)
    agent.start(2, ["sleep", "60"], group=5)
    agent.send("C", 5)
    frames = agent.frames_until(ended(1), timeout=20)  # while 2 still runs
    assert len(joined(frames, "O", 1)) == HOLD_MAX + 1000 and not ended(2)(frames)
    agent.send("T", 2)
    agent.frames_until(ended(2))


def test_output_with_a_lag_waits_for_its_relays_other_output_but_its_first_and_its_end_come_at_once(agent):
    """A case's samplers (a lag of 1 s: each sample carries its host's clock): the samples of a relay's hosts whose
    ticks fall 0.2 s apart (1.2, 1.4 and 1.6 s after their start) leave in one write, where the default batch of 0.1 s sent one each; a sampler's first
    sample (awaited as the case starts) and its end leave at once."""
    started = time.monotonic()
    for i in (1, 2, 3):
        agent.start(i, ["sh", "-c", f"echo first {i}; sleep {1.0 + 0.2 * i}; echo tick {i}; exec sleep 60"], lag=1.0)
    firsts = agent.frames_until(lambda fs: {i for k, i, _ in fs if k == "O"} == {1, 2, 3})
    assert time.monotonic() - started < 0.8  # not held for the lag
    frames = agent.frames_until(lambda fs: len([f for f in fs if f[0] == "O"]) == 3)
    assert [joined(frames, "O", i) for i in (1, 2, 3)] == [b"tick 1\n", b"tick 2\n", b"tick 3\n"]
    assert len(agent.reads) == 1  # the three ticks in one write
    assert [joined(firsts, "O", i) for i in (1, 2, 3)] == [b"first 1\n", b"first 2\n", b"first 3\n"]
    agent.start(4, ["sh", "-c", "echo first; sleep 0.2; echo last"], lag=30.0)
    began = time.monotonic()
    ends = agent.frames_until(ended(4))
    assert time.monotonic() - began < 3 and joined(ends, "O", 4) == b"first\nlast\n"  # the end takes all along
    for i in (1, 2, 3):
        agent.send("T", i)
    agent.frames_until(ended(1, 2, 3))


def test_output_beyond_the_queues_limit_leaves_without_waiting_for_its_lag(agent):
    from fsbench.transport.relay_frames import QUEUE_MAX

    agent.start(1, ["sh", "-c", f"echo first; sleep 0.2; head -c {2 * QUEUE_MAX} /dev/zero; exec sleep 60"],
                lag=30.0)
    began = time.monotonic()
    frames = agent.frames_until(lambda fs: len(joined(fs, "O", 1)) >= QUEUE_MAX + 6)
    assert time.monotonic() - began < 5  # not after the lag of 30 s
    agent.send("T", 1)
    frames += agent.frames_until(ended(1))
    assert len(joined(frames, "O", 1)) == 2 * QUEUE_MAX + 6
