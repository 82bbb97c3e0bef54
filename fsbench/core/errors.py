"""Errors that carry data: where it went wrong, what was expected, what to do next."""

from __future__ import annotations

from dataclasses import dataclass, field


class FsbenchError(Exception):
    """Base of every error fsbench raises on purpose."""

    exit_code = 2


@dataclass
class Issue:
    """One problem found in a scenario: file:line, key path, message and a hint."""

    file: str
    line: int | None
    path: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        text = f"{where}: {self.path or '<top>'}: {self.message}"
        return f"{text}\n    -> {self.hint}" if self.hint else text


class ScenarioError(FsbenchError):
    """The scenario is invalid; carries every issue found, not just the first."""

    exit_code = 3

    def __init__(self, issues: list[Issue]):
        self.issues = list(issues)
        super().__init__("\n".join(str(i) for i in self.issues))


class ParseError(FsbenchError):
    """A tool output had no usable result."""

    exit_code = 1

    def __init__(self, tool: str, file: str, reason: str):
        self.tool, self.file, self.reason = tool, file, reason
        super().__init__(f"{tool} output {file}: {reason}")


class PreflightError(FsbenchError):
    """Checks before the first case failed; nothing ran."""

    exit_code = 4

    def __init__(self, failures: list[tuple[str, str, str]]):
        # (host, check, detail)
        self.failures = list(failures)
        lines = [f"  {h:<16} {c:<18} {d}" for h, c, d in self.failures]
        super().__init__("preflight failed, nothing ran:\n" + "\n".join(lines))


class RunDirError(FsbenchError):
    """A run directory is missing, incomplete or of an unknown schema."""

    exit_code = 2


@dataclass
class CommandResult:
    """What one command did on one host: argv, exit status, output tails, timing."""

    host: str
    argv: list[str]
    exit_status: int | None
    stdout_tail: str = ""
    stderr_tail: str = ""
    duration_s: float = 0.0
    timed_out: bool = False
    interrupted: bool = False
    extra: dict = field(default_factory=dict)

    @classmethod
    def not_run(cls, host: str, argv: list[str], exc: BaseException, duration_s: float = 0.0) -> CommandResult:
        """A command that could not run on its host (the host dead, its connection refused): a failed result
        that says why, in place of the error."""
        text = str(exc) or type(exc).__name__
        return cls(host, list(argv), None, "", text, duration_s,
                   extra={"error": text, "error_type": type(exc).__name__})

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out and not self.interrupted

    def describe(self, shown: str | None = None) -> str:
        """A one-paragraph account for logs and failed-case reasons (`shown`: the command as named there)."""
        import shlex

        state = (
            "timed out" if self.timed_out
            else "interrupted" if self.interrupted
            else f"exit status {self.exit_status}"
        )
        tail = (self.stderr_tail or self.stdout_tail).strip().splitlines()[-5:]
        text = f"on {self.host}: `{shown or shlex.join(self.argv)}` {state} after {self.duration_s:.1f}s"
        if not tail and not self.timed_out and not self.interrupted and self.exit_status not in (0, None):
            return text + ", with no output on stdout or stderr"  # the status is all there is to go on
        return text + ("\n  " + "\n  ".join(tail) if tail else "")


class CommandFailed(FsbenchError):
    """A command that had to succeed did not."""

    def __init__(self, result: CommandResult, what: str = "command"):
        self.result = result
        super().__init__(f"{what} failed {result.describe()}")
