"""The relay's program: runs on a relay host, starts the commands the controller sends, streams their output back.

Sent as text and run with `python3` (standard library only), it runs argv lists as its children (OpenSSH's
client to each host through a master per host, or the relay host's own commands) and knows nothing of hosts.
Its stdin and stdout carry frames:

    type (1 byte) | id (4 bytes, big-endian) | length (4 bytes, big-endian) | payload

in:  S start id, JSON {"argv": [...], "stdin": bool, "ready": argv or null, "session": bool, "group": N or null,
       "lag": seconds its output may wait for more, or null (relay_frames.BATCH_S)};
     I input bytes for id's stdin (empty: its end); T terminate id (TERM to the child, KILL 5 s later);
     C group id is whole (every command of it started); R release group id (its frames leave now)
out: O / E stdout / stderr bytes of id; X id ended, JSON {"status": N} (negative: its signal); F id could
     not start (the reason); Y id is ready (its "ready" argv exited 0: a master that accepts commands)

Frames of many children leave together, and a group's once all of its commands ended (relay_frames.Out, a module
sent beside this one). When stdin ends (the controller closed the channel or
died), or on TERM, every ssh client gets TERM, then KILL after 5 s, and the program exits; the relay host's own
commands are stopped by their dead man's switch once it is gone: nothing it started outlives it.
"""

import contextlib
import fcntl
import json
import os
import queue
import selectors
import signal
import subprocess
import sys
import threading
import time

try:  # beside it: in the relay's folder on a relay host, in fsbench/transport here
    from relay_frames import BATCH_S, HEADER, Out
except ImportError:  # imported as a module of fsbench (its tests)
    from fsbench.transport.relay_frames import BATCH_S, HEADER, Out

CHUNK = 1 << 16
KILL_AFTER_S, READY_POLL_S, READY_LIMIT_S = 5.0, 0.05, 60.0


class Child:
    def __init__(self, ident, proc, session, lag=BATCH_S):
        self.ident, self.proc, self.session, self.lag = ident, proc, session, lag
        # its open output streams, when to KILL it, its stdin's chunks (given input), whether it printed yet
        self.open_streams, self.kill_at, self.feed, self.spoke = 2, None, None, False


class Agent:
    def __init__(self, fd_in, fd_out, kill_after_s=KILL_AFTER_S):
        self.fd_in, self.kill_after_s = fd_in, kill_after_s
        self.sel = selectors.DefaultSelector()
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        self.wake_r = wake_r
        self.out = Out(fd_out, wake_w)
        self.children = {}
        self.ending = []  # children whose output ended, not yet reaped
        self.buf = bytearray()
        self.stdin_open = True
        self.sel.register(fd_in, selectors.EVENT_READ, ("in", None))
        self.sel.register(wake_r, selectors.EVENT_READ, ("wake", None))

    def start(self, ident, spec):
        if spec.get("group") is not None:  # before any frame of it: a step's frames leave together
            self.out.join(spec["group"], ident)
        try:
            # "session": a command of this host itself, in a session of its own, as sshd would start it (its
            # `setsid -w` then waits for it and reports how it ended); ssh's clients stay in the program's group
            proc = subprocess.Popen(spec["argv"], stdin=subprocess.PIPE if spec.get("stdin") else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=bool(spec.get("session")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.out.add("F", ident, str(exc).encode())
            return
        lag = spec.get("lag")
        child = Child(ident, proc, bool(spec.get("session")), float(lag) if isinstance(lag, (int, float)) else BATCH_S)
        self.children[ident] = child
        assert proc.stdout is not None and proc.stderr is not None
        for fd, kind in ((proc.stdout.fileno(), "O"), (proc.stderr.fileno(), "E")):
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, (kind, child))
        if spec.get("stdin"):
            child.feed = queue.SimpleQueue()
            threading.Thread(target=feed, args=(proc, child.feed), daemon=True).start()
        if spec.get("ready"):
            threading.Thread(target=self.wait_ready, args=(child, spec["ready"]), daemon=True).start()

    def wait_ready(self, child, argv):
        limit = time.monotonic() + READY_LIMIT_S
        while child.proc.poll() is None and time.monotonic() < limit:
            if ready(argv):
                self.out.add("Y", child.ident)
                return
            time.sleep(READY_POLL_S)

    def terminate(self, ident):
        child = self.children.get(ident)
        if child is not None and child.proc.poll() is None:
            signal_child(child.proc, signal.SIGTERM)
            child.kill_at = time.monotonic() + self.kill_after_s

    def read_child(self, kind, child, fd):
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.out.add(kind, child.ident, data, urgent=kind == "O" and not child.spoke, lag=child.lag)
            child.spoke = child.spoke or kind == "O"
            return
        self.sel.unregister(fd)
        child.open_streams -= 1
        if child.open_streams == 0:
            self.ending.append(child)

    def reap(self):
        now = time.monotonic()
        for child in list(self.ending):
            status = child.proc.poll()
            if status is not None:
                self.ending.remove(child)
                del self.children[child.ident]
                self.out.add("X", child.ident, json.dumps({"status": status}).encode())
        for child in self.children.values():
            if child.kill_at is not None and now >= child.kill_at and child.proc.poll() is None:
                signal_child(child.proc, signal.SIGKILL)
                child.kill_at = None

    def read_controller(self):
        data = os.read(self.fd_in, CHUNK)
        if not data:
            self.stdin_open = False
            self.sel.unregister(self.fd_in)
            return
        self.buf += data  # a bytearray: a long input frame grows it in place, not by copies of it
        while len(self.buf) >= HEADER.size:
            kind, ident, length = HEADER.unpack_from(self.buf)
            if len(self.buf) < HEADER.size + length:
                break
            payload = bytes(self.buf[HEADER.size:HEADER.size + length])
            del self.buf[:HEADER.size + length]
            if kind == ord("I"):
                child = self.children.get(ident)
                if child is not None and child.feed is not None:
                    child.feed.put(payload)
            elif kind == ord("S"):
                try:
                    spec = json.loads(payload.decode())
                except ValueError as exc:
                    self.out.add("F", ident, f"a start frame that is not JSON: {exc}".encode())
                    continue
                self.start(ident, spec)
            elif kind == ord("T"):
                self.terminate(ident)
            elif kind == ord("C"):
                self.out.close_group(ident)
            elif kind == ord("R"):
                self.out.release(ident)

    def loop(self):
        while self.stdin_open:
            busy = self.ending or any(c.kill_at is not None for c in self.children.values())
            wait = 0.02 if busy else 1.0
            due = self.out.due_in()
            for key, _ in self.sel.select(wait if due is None else min(wait, due)):
                what, child = key.data
                if what == "in":
                    self.read_controller()
                elif what == "wake":
                    try:
                        os.read(self.wake_r, CHUNK)
                    except BlockingIOError:
                        pass
                else:
                    self.read_child(what, child, key.fd)
            self.reap()
            try:
                if self.out.due_in() == 0.0:
                    self.out.flush()
            except BrokenPipeError:  # the controller is gone (SIGPIPE is ignored: a child's closed stdin is not)
                break
        with contextlib.suppress(BrokenPipeError):
            self.out.flush()
        self.stop_all()

    def stop_all(self):
        """The controller is gone: every ssh client (and master) gets TERM, then KILL, and each host's dead man's
        switch stops what its session ran. A command of the relay host itself is left to its own switch, which
        fires once this program is gone (a TERM to its `setsid -w` would end only that waiting parent)."""
        ssh = [c for c in self.children.values() if not c.session]
        for child in ssh:
            if child.proc.poll() is None:
                signal_child(child.proc, signal.SIGTERM)
        limit = time.monotonic() + self.kill_after_s
        while time.monotonic() < limit and any(c.proc.poll() is None for c in ssh):
            time.sleep(0.05)
        for child in ssh:
            if child.proc.poll() is None:
                signal_child(child.proc, signal.SIGKILL)
                child.proc.wait()


def ready(argv):
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10).returncode == 0
    return False


def signal_child(proc, sig):
    with contextlib.suppress(OSError):
        proc.send_signal(sig)


def feed(proc, chunks):
    """The controller's input frames into the child's stdin, until the empty one; a child that stopped reading
    makes the rest go nowhere (it ends as it will, and says so)."""
    broken = False
    while True:
        chunk = chunks.get()
        if not chunk:
            break
        if not broken:
            try:
                proc.stdin.write(chunk)
            except OSError:  # BrokenPipeError: the child closed it
                broken = True
    with contextlib.suppress(OSError):
        proc.stdin.close()


def hold_lock():
    """An flock on ./lock for the program's life: to a later relay's start on this host, the proof that this
    folder is in use. Locked before it is renamed into place: a `lock` that exists was locked from the start."""
    fd = os.open("lock.tmp", os.O_CREAT | os.O_WRONLY, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename("lock.tmp", "lock")
    return fd


def main():
    lock = hold_lock()  # noqa: F841 - held open until the program ends
    os.set_blocking(0, False)
    agent = Agent(0, 1, float(sys.argv[1]) if len(sys.argv) > 1 else KILL_AFTER_S)  # the tests' shorter grace

    def stop(signum, frame):  # TERM (its session's dead man's switch): its children first, then itself
        agent.stop_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    # a child's end wakes the loop at once (its exit status is then read without waiting for a poll)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(agent.out.wake_fd)
    agent.loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
