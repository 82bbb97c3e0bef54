"""A scripted, in-memory host for tests: it records every command and file operation and answers from rules.

For plug-in authors and fsbench's own unit tests: hand a Runner, a CaseRun, a TargetSession or a
ServiceManager fake hosts instead of real ones, script the answers, then read what fsbench did. Nothing
runs: no subprocess, no sshd, no file outside the local folders fsbench itself writes (raw/).

    hosts = fake_hosts("node1", "node2")            # one journal: the order of calls across hosts
    node1 = hosts["node1"]
    node1.on(["fio", "--version"], stdout="fio-3.33\\n")         # a prefix of argv
    node1.on(lambda argv: "--output-format=json" in argv, stdout=FIO_JSON)   # any predicate on argv
    node1.on(r"^mountpoint -q ", exit_status=1)                 # a regex on the command as one line
    node1.on(["umount"], then=lambda call: node1.dirs.discard(call.argv[-1]))  # a side effect
    node1.on(["fio"], then=interrupt)                           # Ctrl-C in the middle of the tool
    ...                                                         # run fsbench code with `hosts`
    assert node1.commands(["umount"]) == [["umount", "/mnt/x"]]
    assert [c.op for c in journal(hosts)] == [...]

Rules are tried newest first (a test's later rule overrides an earlier default); a rule matches a prefix of
argv, a regex searched in `shlex.join(argv)`, or a predicate. Its answer is an exit status, stdout and
stderr, optionally after `then(call)`: a callback that may change the fake's files, raise (FsbenchError: a
lost host; KeyboardInterrupt: Ctrl-C) or return a CommandResult of its own. A command no rule answers
succeeds with no output, unless the host is `strict` (then exit 127, and it is listed in `unanswered`).

Files live in memory (`files`, `dirs`): put_text and put_file write there, fetch copies into the local
folder fsbench asks for, and `workdir` is a folder on the fake host, as over SSH, so a case's outputs are
fetched into raw/ like a remote host's.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.core.errors import CommandResult

#: where the fake host keeps the work folders of commands (the tool's outputs until they are fetched)
WORK_ROOT = "/fake-work"


@dataclass
class Call:
    """One operation fsbench asked of a fake host: a command (`run`) or a file operation."""

    host: str
    op: str  # run, put_text, put_file, fetch, makedirs, remove_tree, is_dir, close
    argv: list[str] = field(default_factory=list)
    path: str = ""
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None


Matcher = list[str] | str | Callable[[list[str]], bool]


@dataclass
class Rule:
    """An answer to the commands that match."""

    match: Matcher
    exit_status: int | None = 0
    stdout: str = ""
    stderr: str = ""
    then: Callable[[Call], CommandResult | None] | None = None
    times: int | None = None  # how many commands it answers (None: all)

    def matches(self, argv: list[str]) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        if isinstance(self.match, list):
            return argv[:len(self.match)] == self.match
        if isinstance(self.match, str):
            return re.search(self.match, shlex.join(argv)) is not None
        return bool(self.match(argv))


class FakeTransport:
    """A host that exists only in memory; see the module's doc for how to script it."""

    #: its work folders live in memory: nothing for a run to remove at its end
    remote_base: str | None = None

    def __init__(self, host: str = "fake", *, journal: list[Call] | None = None, strict: bool = False):
        self.host = host
        self.rules: list[Rule] = []
        #: every call on this host, in order; `journal` (shared by fake_hosts) holds those of all hosts
        self.log: list[Call] = []
        self.journal = journal if journal is not None else []
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = {"/"}
        self.strict = strict
        self.unanswered: list[list[str]] = []
        #: what the real transports offer the runner too (a marker, an output cap); kept, never read here
        self.marker: dict[str, str] = {}
        self.output_cap = 0
        #: why the host was given up (a test sets it to play a host that stopped answering), else None
        self.dead: str | None = None
        self._lock = threading.Lock()  # a case runs several commands at once (monitors, per-host tools)

    # -- scripting ------------------------------------------------------------------------------
    def on(self, match: Matcher, *, exit_status: int | None = 0, stdout: str = "", stderr: str = "",
           then: Callable[[Call], CommandResult | None] | None = None, times: int | None = None) -> Rule:
        """Answer the commands that match (newest rule first); see the module's doc."""
        rule = Rule(match, exit_status, stdout, stderr, then, times)
        self.rules.insert(0, rule)
        return rule

    def commands(self, prefix: list[str] | None = None) -> list[list[str]]:
        """The argv of every command run so far (those starting with prefix, when given)."""
        return [c.argv for c in self.log if c.op == "run" and (prefix is None or c.argv[:len(prefix)] == prefix)]

    def ops(self, op: str) -> list[str]:
        """The paths of every file operation of one kind so far (put_text, fetch, remove_tree...)."""
        return [c.path for c in self.log if c.op == op]

    # -- the Transport protocol -----------------------------------------------------------------
    def run(self, argv: list[str], *, cwd: str | None = None, timeout: float | None = 60.0,
            env: dict[str, str] | None = None, stdout_path: Path | None = None,
            stderr_path: Path | None = None, cancel: threading.Event | None = None) -> CommandResult:
        """Answer argv from the first matching rule; its output goes where a real transport would put it."""
        call = self._record("run", argv=list(argv), cwd=cwd, env=dict(env or {}), timeout=timeout)
        with self._lock:
            rule = next((r for r in self.rules if r.matches(call.argv)), None)
            if rule is not None and rule.times is not None:
                rule.times -= 1
        if rule is None:
            if self.strict:
                self.unanswered.append(call.argv)
            rule = Rule([], 127 if self.strict else 0, stderr="no rule answers this command" if self.strict else "")
        result = rule.then(call) if rule.then is not None else None
        if result is None:
            interrupted = cancel is not None and cancel.is_set()
            result = CommandResult(self.host, call.argv, rule.exit_status, rule.stdout[-4000:], rule.stderr[-4000:],
                                   0.0, interrupted=interrupted)
            out = rule.stdout
        else:
            out = str(result.extra.get("stdout", result.stdout_tail))
        if stdout_path is not None:
            stdout_path.parent.mkdir(parents=True, exist_ok=True)
            stdout_path.write_text(out)
        else:
            result.extra.setdefault("stdout", out)
        if stderr_path is not None:
            stderr_path.parent.mkdir(parents=True, exist_ok=True)
            stderr_path.write_text(result.stderr_tail)
        return result

    def mark(self, marker: Mapping[str, str]) -> None:
        """Keep the run's marker (a test reads it in `marker`)."""
        self.marker = dict(marker)

    def cap_output(self, cap: int) -> None:
        """Keep the output cap (a test reads it in `output_cap`)."""
        self.output_cap = cap

    def workdir(self, raw_dir: Path, name: str) -> str:
        """A folder on the fake host, <WORK_ROOT>/<name>, as over SSH (the outputs are fetched from it)."""
        path = posixpath.join(WORK_ROOT, name)
        self.makedirs(path)
        return path

    def put_text(self, path: str, text: str) -> None:
        """Keep a text file in memory."""
        self._record("put_text", path=path)
        self.files[path] = text.encode()

    def put_file(self, local: Path, path: str, mode: int | None = None) -> None:
        """Keep a copy of a local file in memory."""
        self._record("put_file", path=path)
        self.files[path] = Path(local).read_bytes()

    def fetch(self, path: str, local: Path) -> bool:
        """Copy a file (or every file under a folder) of the fake host to local; False when there is none."""
        self._record("fetch", path=path)
        under = {p: data for p, data in self.files.items() if p.startswith(path.rstrip("/") + "/")}
        if path in self.files:
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(self.files[path])
            return True
        if not under and path not in self.dirs:
            return False
        for p, data in under.items():
            dest = local / posixpath.relpath(p, path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        local.mkdir(parents=True, exist_ok=True)
        return True

    def makedirs(self, path: str) -> None:
        """Add a folder and its parents."""
        self._record("makedirs", path=path)
        while path not in ("", "/"):
            self.dirs.add(path)
            path = posixpath.dirname(path)

    def remove_tree(self, path: str) -> None:
        """Forget a folder and everything under it."""
        self._record("remove_tree", path=path)
        inside = path.rstrip("/") + "/"
        self.dirs = {d for d in self.dirs if d != path and not d.startswith(inside)}
        self.files = {p: d for p, d in self.files.items() if p != path and not p.startswith(inside)}

    def is_dir(self, path: str) -> bool:
        """Whether the folder was made (makedirs) or given (`dirs`)."""
        self._record("is_dir", path=path)
        return path in self.dirs

    def close(self) -> None:
        """Nothing to release."""
        self._record("close")

    def _record(self, op: str, **fields: object) -> Call:
        # fields: Call's own by name (argv, path, cwd, env, timeout), from the typed methods above
        call = Call(self.host, op, **fields)  # type: ignore[arg-type]
        with self._lock:
            self.log.append(call)
            self.journal.append(call)
        return call


def fake_hosts(*names: str, strict: bool = False) -> dict[str, FakeTransport]:
    """Fake hosts sharing one journal (the order of calls across all of them)."""
    journal: list[Call] = []
    return {n: FakeTransport(n, journal=journal, strict=strict) for n in names}


def journal(hosts: dict[str, FakeTransport]) -> list[Call]:
    """Every call on the given fake hosts, in the order they came."""
    first = next(iter(hosts.values()), None)
    return list(first.journal) if first is not None else []


def interrupt(call: Call) -> CommandResult:
    """A `then` that presses Ctrl-C while the command runs."""
    raise KeyboardInterrupt


def result(call: Call, exit_status: int | None = 0, stdout: str = "", stderr: str = "") -> CommandResult:
    """A CommandResult for a `then` callback that decides the answer itself."""
    return CommandResult(call.host, call.argv, exit_status, stdout[-4000:], stderr[-4000:], 0.0,
                         extra={"stdout": stdout})
