"""A target's steps as messages name them, and the client's logs kept in targets/<target>/."""

from __future__ import annotations

import shlex
from pathlib import Path

from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError
from fsbench.core.secrets import redact_file
from fsbench.kinds import KindPlan


def script_name(argv: list[str]) -> str | None:
    """A kind's shell script named by its purpose in messages (its text is in the kind's module), else None."""
    return f"sh: {label(argv)}" if argv[:3] == ["/bin/sh", "-e", "-c"] and argv[3].startswith("# ") else None


def label(argv: list[str], short: bool = False) -> str:
    """A step for messages: a shell script by its first line when that is a comment, else the command."""
    if argv[:3] == ["/bin/sh", "-e", "-c"] and argv[3].startswith("# "):
        return argv[3].split("\n", 1)[0][2:]
    if short:
        return " ".join([Path(argv[0]).name, *argv[1:2]])
    return shlex.join([Path(argv[0]).name, *argv[1:]])


def fetch_logs(log_dir: Path | None, host: str, tr: Transport, plan: KindPlan) -> list[Path]:
    """Copy the client's logs into targets/<target>/ (masked); the copies that exist."""
    if log_dir is None:
        return []
    log_dir.mkdir(parents=True, exist_ok=True)
    copies = []
    for remote, local in plan.logs.items():
        target = log_dir / local.format(host=host)
        try:
            tr.fetch(remote, target)
        except FsbenchError:
            continue
        if target.exists():
            redact_file(target)
            copies.append(target)
    return copies

def log_tail(log_dir: Path | None, host: str, tr: Transport, plan: KindPlan, lines: int = 5) -> str:
    """The last lines of the client's log, for the message of a failed mount (fetched right away)."""
    for copy in fetch_logs(log_dir, host, tr, plan):
        tail = [line for line in copy.read_text(errors="replace").splitlines() if line.strip()][-lines:]
        if tail:
            name = copy.relative_to(log_dir.parent.parent) if log_dir else copy.name
            return f"; the end of its log ({name}):\n  " + "\n  ".join(tail)
    return ""


def address_missing(address: str, path: str, tr: Transport, host: str) -> str | None:
    """Why the target's path is not what its kind needs after setup (a folder, a device), or None."""
    if address == "directory" and not tr.is_dir(path):
        return (f"target path {path} is not an existing directory on {host} "
                "(create or mount it, or add a setup command that does)")
    if address == "device" and not tr.run(["test", "-e", path], timeout=30).ok:
        return f"target device {path} does not exist on {host}"
    return None
