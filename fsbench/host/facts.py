"""Host facts for hosts.csv: each fact is a command plus a pure parse function."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from fsbench.api.kinds import KindPlan
from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError
from fsbench.core.secrets import redact


@dataclass(frozen=True)
class Fact:
    """A named command and the function that turns its stdout into columns."""

    name: str
    argv: tuple[str, ...]
    parse: Callable[[str], dict]


def _kv(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            out[k.strip()] = v.strip().strip('"')
    return out


def parse_os_release(text: str) -> dict:
    """/etc/os-release -> os."""
    kv = _kv(text)
    return {"os": kv.get("PRETTY_NAME", kv.get("NAME", ""))}


def parse_cpuinfo(text: str) -> dict:
    """/proc/cpuinfo -> cpu_model, cpus."""
    models = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
    cpus = sum(1 for line in text.splitlines() if line.startswith("processor"))
    return {"cpu_model": models[0] if models else "", "cpus": cpus}


def parse_meminfo(text: str) -> dict:
    """/proc/meminfo -> memory_bytes."""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            return {"memory_bytes": int(line.split()[1]) * 1024}
    return {"memory_bytes": ""}


def parse_first_line(column: str) -> Callable[[str], dict]:
    """A column holding the command's first output line."""
    return lambda text: {column: (text.strip().splitlines() or [""])[0]}


BASE_FACTS = (
    Fact("hostname", ("uname", "-n"), parse_first_line("hostname")),
    Fact("kernel", ("uname", "-r"), parse_first_line("kernel")),
    Fact("arch", ("uname", "-m"), parse_first_line("arch")),
    Fact("os", ("cat", "/etc/os-release"), parse_os_release),
    Fact("cpu", ("cat", "/proc/cpuinfo"), parse_cpuinfo),
    Fact("memory", ("cat", "/proc/meminfo"), parse_meminfo),
    Fact("uid", ("id", "-u"), parse_first_line("uid")),
)


def gather(transport: Transport, tools: dict[str, list[str]]) -> dict:
    """Base facts plus `<tool>_version` for each tool; a failing fact leaves its columns empty."""
    row: dict = {"host": transport.host}
    for fact in BASE_FACTS:
        r = transport.run(list(fact.argv), timeout=10)
        if r.ok:
            row.update(fact.parse(r.extra.get("stdout", "")))
    for tool, argv in tools.items():
        r = transport.run(argv, timeout=10)
        text = (r.extra.get("stdout", "") or r.stderr_tail).strip()
        row[f"{tool}_version"] = text.splitlines()[0] if r.ok and text else "not found"
    return row


def mount_of(transport: Transport, path: str) -> dict:
    """The filesystem holding path: source, type, options (findmnt)."""
    try:
        r = transport.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", "--target", path], timeout=10)
    except FsbenchError:  # a host lost since setup: the facts stay empty, the case will say why
        return {"source": "", "fstype": "", "options": ""}
    parts = r.extra.get("stdout", "").split() if r.ok else []
    if len(parts) >= 3:
        return {"source": parts[0], "fstype": parts[1], "options": parts[2]}
    return {"source": "", "fstype": "", "options": ""}


def client_of(transport: Transport, target: str, plan: KindPlan) -> dict:
    """hosts.csv columns of a target's client: its command line (options included, keys never, they travel
    in the environment) and its version; none for targets without a client."""
    row = {}
    command = plan.client_command()
    if command:
        # a scenario's own shell text (the fuse kind) is shown as written, not as `/bin/sh -e -c '...'`
        shell = len(command) == 4 and command[:3] == ["/bin/sh", "-e", "-c"]
        row[f"client_{target}"] = redact(command[3] if shell else shlex.join(command))
    if plan.version:
        try:
            r = transport.run(plan.version, timeout=10)
        except FsbenchError:
            r = None
        text = (r.extra.get("stdout", "") or r.stderr_tail).strip() if r is not None and r.ok else ""
        row[f"client_version_{target}"] = text.splitlines()[0] if text else "not found"
    return row
