"""A watch on a mounted target while its case's tool runs: a fault of the system under test ends the case.

When a JuiceFS volume's metadata server is killed or stopped, or its bucket's disk fills up, the client
retries for minutes and the tool waits in the kernel: without a watch the case ends at its timeout
(minutes), and says only "timed out". The watch asks every `interval_s` on each host of the case whether
the mount still answers (a lookup of a new name in its root, which a FUSE client must ask its metadata
server: a dead or stopped server, or a dead client, leaves it without an answer or with an error), and, where the
target's object store is a folder (JuiceFS `storage: file`), whether that folder's file system still has
room for a block. Three misses in a row are a fault: the tool is stopped, the case fails with the fault in
its reason, and the target's later cases are not run (fsbench.run.runner). Between probes the watch only
waits: its cost is one lookup per host per interval (one metadata request every two seconds), and past 100
hosts each host is asked less often, so that a case's hosts together get at most LOOKUPS_PER_S (each a
command of the controller's and a metadata request inside the measurement).
"""

from __future__ import annotations

import posixpath
import secrets
import shlex
import threading
import time

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.core.cancel import Cancel
from fsbench.core.errors import FsbenchError
from fsbench.core.shell import sh
from fsbench.run.side_jobs import QuietSideJob
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.scenario.run_settings import Settings

#: seconds between probes, how long one probe may wait for an answer (settings.fault_interval and
#: fault_answer), misses in a row that make a fault: a lookup queued behind a heavy metadata load may take
#: seconds, so only three without an answer in 10 s each (over half a minute) call the system under test dead
INTERVAL_S, ANSWER_S, MISSES = 2.0, 10.0, 3
#: lookups a second the watch asks of a case's hosts together, at most: each is a command over SSH (about 1 ms of
#: the controller's CPU) and a metadata request to the system under test. Up to 100 hosts the watch asks every
#: fault_interval (2 s); past that, each host less often (every 20 s at 1,000 hosts, so a fault takes a minute
#: to be called instead of 6 s), where every 2 s would have sent 500 lookups a second to the metadata server
#: being measured and taken half a core of the controller
LOOKUPS_PER_S = 50
#: stat's words (in the C locale) for the healthy answer to the probe's lookup
NO_SUCH = "No such file or directory"
#: a folder object store with less room than a block (JuiceFS' 4 MiB) and a little more is full
FULL_BELOW_BYTES = 5 * 2**20


def mount_probe_argv(path: str, answer_s: float = ANSWER_S) -> list[str]:
    """A lookup of a name nobody made in the mount's root; exit 124 when it has no answer within answer_s.

    The name is new each time: no cache of the client or the kernel can answer it, so the client asks its
    metadata server (a `stat -f` is answered from the client's cache: JuiceFS' was, with its metadata server
    stopped). "No such file" is the healthy answer. The lookup runs in the background, its output in a file:
    a FUSE request the client has taken cannot be killed, and a stuck `stat` holding the probe's own output
    would hold the probe until the mount goes."""
    name = posixpath.join(path, f".fsbench-alive-{secrets.token_hex(6)}")
    return sh("\n".join([
        f"# does {path} answer a lookup within {answer_s:g}s?",
        'out=$(mktemp)',
        f'LC_ALL=C stat -c %i -- {shlex.quote(name)} > /dev/null 2> "$out" &',
        "p=$!",
        # polled every 20 ms: a healthy answer takes a millisecond or two, and a probe holds the case's end
        f"i=0 steps={max(1, round(answer_s * 50))}",
        'while kill -0 "$p" 2> /dev/null && [ "$i" -lt "$steps" ]; do sleep 0.02; i=$((i + 1)); done',
        'if kill -0 "$p" 2> /dev/null; then rm -f "$out"; exit 124; fi',
        'rc=0; wait "$p" || rc=$?',
        'cat "$out" >&2; rm -f "$out"',
        'exit "$rc"',
    ]))


def room_probe_argv(folder: str) -> list[str]:
    """The free bytes of the file system holding folder: available blocks and block size."""
    return ["stat", "-f", "-c", "%a %S", folder]


class TargetWatch(QuietSideJob):
    """Probes a mounted target during the tool's run (a side job: fsbench.run.side_jobs.SideJob).

    `tool_cancel` is what the tool's commands wait on: set on a fault, and on the run's own Ctrl-C.
    """

    def __init__(self, session: TargetSession, hosts: dict[str, Transport], run_cancel: threading.Event,
                 interval_s: float = INTERVAL_S, answer_s: float = ANSWER_S, misses: int = MISSES):
        self.session, self.hosts, self.run_cancel = session, hosts, run_cancel
        self.interval_s, self.answer_s, self.misses = interval_s, answer_s, misses
        self.tool_cancel = Cancel()
        self.fault: str | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._began = 0.0
        self._missed: dict[tuple[str, str], int] = {}

    # -- the side job's hooks (start and collect: QuietSideJob's, nothing to do) -----------------------
    def tool_start(self) -> None:
        self._began = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="fsbench-target-watch", daemon=True)
        self._thread.start()

    def tool_end(self) -> None:
        self._done.set()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(self.answer_s + 30)
        # the case's side jobs stop after its tool has ended: no tool command waits on tool_cancel any more
        self.tool_cancel.close()

    # -- the watch ------------------------------------------------------------------------------------
    def _loop(self) -> None:
        next_probe = time.monotonic() + self.interval_s
        while not self._done.is_set():
            if self.run_cancel.is_set():  # Ctrl-C reaches the tool through the watch
                self.tool_cancel.set()
                return
            if time.monotonic() >= next_probe:
                fault = self._probe()
                if fault and not self._done.is_set():
                    self.fault = f"{fault}: the case was stopped after {time.monotonic() - self._began:.0f}s"
                    self.session.fault = self.fault
                    # the tool waits in the kernel on the dead mount, where no signal reaches it: the client
                    # goes first (fsbench's own, by its tag), the kernel then fails those requests, and the tool
                    # ends on its TERM instead of outliving its KILL
                    for host, tr in self.hosts.items():
                        try:
                            self.session.abort_connection(host, tr)
                            self.session.stop_client(host, tr)
                        except FsbenchError:  # a lost host: its teardown says so; the tool is stopped all the same
                            pass
                    self.tool_cancel.set()
                    return
                next_probe = time.monotonic() + self.interval_s
            self._done.wait(0.05)

    def _probe(self) -> str | None:
        """The first fault found on any host (a probe that missed `misses` times in a row), or None. Every host
        is asked at once: one after the other, a round took a probe's time per host (20 ms and more: 1,000
        clients, half a minute a round), a dead host's 10 s held the others' probes back, and the case's end
        waited for the round it came in."""
        target = self.session.target
        first = next(iter(self.session.transports))

        def checks_of(host: str) -> list[tuple[str, str | None]]:
            tr = self.hosts[host]
            checks = [("mount", self._mount(host, tr))]
            store = self.session.plan(host).store
            if store is not None and store.storage == "file" and host == first:
                checks.append(("room", self._room(tr, store.bucket)))
            return checks

        hosts = list(self.hosts)
        faults = []
        for host, checks in zip(hosts, each(hosts, checks_of)):  # every host's misses counted, in their order
            for name, miss in checks:
                key = (host, name)
                self._missed[key] = self._missed.get(key, 0) + 1 if miss else 0
                if miss and self._missed[key] >= self.misses:
                    faults.append(f"target {target.name} on {host}: {miss} ({self.misses} times in a row)")
        return faults[0] if faults else None

    def _mount(self, host: str, tr: Transport) -> str | None:
        """Why the mount did not answer, or None."""
        path = self.session.target.path
        try:
            r = tr.run(mount_probe_argv(path, self.answer_s), timeout=self.answer_s + 10)
        except FsbenchError as exc:
            return f"cannot ask whether {path} answers ({exc})"
        if r.ok or (r.exit_status == 1 and NO_SUCH in r.stderr_tail):  # the answer: no such name
            return None
        if r.timed_out or r.exit_status == 124:
            services = ", ".join(self.session.target.services)
            return (f"the mount {path} gave no answer within {self.answer_s:g}s (its client, or a server it needs"
                    f"{f': {services}' if services else ''}, is down or stopped)")
        return f"the mount {path} fails: {(r.stderr_tail or r.stdout_tail).strip() or r.describe()}"

    def _room(self, tr: Transport, bucket: str) -> str | None:
        """Why the folder object store is full, or None (also when its room cannot be read)."""
        folder = posixpath.normpath(bucket)
        try:
            r = tr.run(room_probe_argv(folder), timeout=30)
        except FsbenchError:
            return None
        parts = r.extra.get("stdout", "").split()
        if not r.ok or len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None
        free = int(parts[0]) * int(parts[1])
        if free >= FULL_BELOW_BYTES:
            return None
        return (f"its object store {folder} is full ({free / 2**20:.1f} MiB free on its file system): the client "
                "cannot store a block")


def watch_of(session: TargetSession, hosts: list[str], transports: dict[str, Transport],
             run_cancel: threading.Event, settings: Settings) -> TargetWatch | None:
    """The watch of a case's hosts where its target is a mount; None where it is none (a folder, a URL), or
    when the scenario turned it off (settings.fault_answer: 0s)."""
    answer_s = settings.fault_answer_s
    mounted = session.mounted(hosts) if answer_s > 0 else []
    interval_s = watch_interval(settings.fault_interval_s, len(mounted))
    return TargetWatch(session, {h: transports[h] for h in mounted}, run_cancel, interval_s, answer_s) \
        if mounted else None


def watch_interval(asked_s: float, hosts: int) -> float:
    """Seconds between the watch's rounds on `hosts` hosts: the scenario's fault_interval, or longer, so that
    all of them together are asked at most LOOKUPS_PER_S times a second."""
    return max(asked_s, hosts / LOOKUPS_PER_S)
