"""What the relay's program sends to the controller: frames, coalesced; the frames of a step held until it ended.

Part of the relay's program (fsbench.transport.relay_agent), sent beside it to the relay host and run there with
`python3`: the standard library only.

Frames of many children leave together. Output alone waits up to BATCH_S for more (a relay's hosts' samples of
one tick leave together), or up to its command's own lag when its start frame gave one (a sampler's samples
carry their own clock: a second's samples of all of a relay's hosts leave in one write, where hosts whose ticks
fall 0.1 s apart sent one each); an end, a failure, a ready frame and a command's first stdout wait LINGER_S,
for the same news of the step's other hosts: one packet to the controller instead of one each. Frames waiting
beyond QUEUE_MAX bytes leave at once.

A step's commands (fsbench.transport.relay_steps: the same short command on every host, waited for together) go
further: each of their start frames names a group, and every frame of the group's commands is held until the
controller said the group is whole (frame C) and all of them ended. They then leave in one write: one packet
a relay and step however many hosts it serves, where the ends of commands that end a few milliseconds apart
each cost the controller a packet. A group that holds more than HOLD_MAX bytes, or that the controller
releases (frame R: a command overran its timeout, and its process group's id is wanted), streams as usual.
"""

import os
import select
import struct
import threading
import time

HEADER = struct.Struct(">BII")
BATCH_S, LINGER_S = 0.1, 0.002
#: frames waiting beyond this many bytes leave at once (a fast stream is not held in memory for its batch)
QUEUE_MAX = 1 << 18
#: a group's frames held beyond this many bytes leave at once (and the rest of the group streams)
HOLD_MAX = 1 << 20


class Group:
    def __init__(self):
        self.ids, self.left, self.parts, self.size, self.whole = [], set(), [], 0, False


class Out:
    """Frames waiting to go to the controller; any thread may add, the main loop writes them in one go."""

    def __init__(self, fd, wake_fd):
        self.fd, self.wake_fd = fd, wake_fd
        self.lock = threading.Lock()
        self.parts = []
        self.size = 0
        self.due_at = None  # when the waiting frames must leave, at the latest
        self.urgent_at = None
        self.groups = {}  # group id -> Group
        self.held = {}  # command id -> its group's id

    def join(self, gid, ident):
        """The command's frames are the group's from now on (its start frame named the group)."""
        with self.lock:
            group = self.groups.setdefault(gid, Group())
            group.ids.append(ident)
            group.left.add(ident)
            self.held[ident] = gid

    def close_group(self, gid):
        """The controller started every command of the group: once they all ended, their frames leave."""
        with self.lock:
            group = self.groups.setdefault(gid, Group())
            group.whole = True
            if not group.left:
                self._release(gid)

    def release(self, gid):
        """The group's frames leave now, and its commands stream from now on."""
        with self.lock:
            if gid in self.groups:
                self._release(gid)

    def _release(self, gid):
        group = self.groups.pop(gid)
        for ident in group.ids:
            self.held.pop(ident, None)
        if group.parts:
            self._queue(b"".join(group.parts), True)

    def add(self, kind, ident, payload=b"", urgent=False, lag=BATCH_S):
        """A frame of command ident; output (not urgent) may wait up to `lag` seconds for more."""
        frame = HEADER.pack(ord(kind), ident, len(payload)) + payload
        with self.lock:
            gid = self.held.get(ident)
            if gid is None:
                self._queue(frame, urgent or kind in "XFY", lag)
            else:
                group = self.groups[gid]
                group.parts.append(frame)
                group.size += len(frame)
                if kind in "XF":
                    group.left.discard(ident)
                if (group.whole and not group.left) or group.size > HOLD_MAX:
                    self._release(gid)
        if threading.current_thread() is not threading.main_thread():
            try:
                os.write(self.wake_fd, b"x")
            except OSError:
                pass

    def _queue(self, data, urgent, lag=BATCH_S):
        self.parts.append(data)
        self.size += len(data)
        now = time.monotonic()
        if self.due_at is None or now + lag < self.due_at:
            self.due_at = now + lag
        if (urgent or self.size > QUEUE_MAX) and self.urgent_at is None:
            self.urgent_at = now

    def due_in(self):
        """Seconds until the waiting frames must leave (0: now), None when none waits."""
        with self.lock:
            if not self.parts:
                return None
            due = self.due_at or 0.0
            if self.urgent_at is not None:
                due = min(due, self.urgent_at + LINGER_S)
            return max(0.0, due - time.monotonic())

    def flush(self):
        with self.lock:
            data, self.parts, self.size, self.due_at, self.urgent_at = b"".join(self.parts), [], 0, None, None
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:  # stdout may share its file description with the non-blocking stdin
                select.select([], [self.fd], [], 1.0)
                continue
            view = view[n:]
