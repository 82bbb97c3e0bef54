"""Host facts for hosts.csv: each fact is a command plus a pure parse function."""

from __future__ import annotations

import re
import secrets
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
    """Base facts plus `<tool>_version` for each tool; a failing fact leaves its columns empty.

    Every probe in one shell command (one round trip a host instead of one a probe: preflight on 32 hosts
    waited for ten commands in turn on each); a host where that command gives no answer fsbench can read
    (no POSIX shell, a transport that runs argv only) is asked one probe at a time."""
    probes = [list(f.argv) for f in BASE_FACTS] + list(tools.values())
    answers = _all_at_once(transport, probes)
    row: dict = {"host": transport.host}
    for i, fact in enumerate(BASE_FACTS):
        ok, out, _ = answers[i] if answers else _one(transport, list(fact.argv))
        if ok:
            row.update(fact.parse(out))
    for j, (tool, argv) in enumerate(tools.items()):
        ok, out, err = answers[len(BASE_FACTS) + j] if answers else _one(transport, argv)
        text = (out or err).strip()
        row[f"{tool}_version"] = text.splitlines()[0] if ok and text else "not found"
    return row


def _one(transport: Transport, argv: list[str]) -> tuple[bool, str, str]:
    r = transport.run(argv, timeout=10)
    return r.ok, r.extra.get("stdout", ""), r.stderr_tail


def _all_at_once(transport: Transport, probes: list[list[str]]) -> list[tuple[bool, str, str]] | None:
    """(ok, stdout, stderr's end) of each probe, run one after the other by one `sh -c` on the host; None when
    its answer cannot be read (then the caller asks one probe at a time). A probe's stderr is read (`tail`)
    only when it wrote some: most write none, and each `tail` was a process more on every host's start."""
    mark = f"@fsbench-probe-{secrets.token_hex(6)}"
    steps = "".join(f"printf '\\n{mark} out {i}\\n'; {shlex.join(argv)} 2>\"$e\" </dev/null; r=$?; "
                    f"printf '\\n{mark} rc {i} %s\\n' \"$r\"; [ ! -s \"$e\" ] || tail -c 2000 \"$e\"; "
                    f"printf '\\n{mark} end {i}\\n'; "
                    for i, argv in enumerate(probes))
    script = f'e=$(mktemp) || exit 97; trap \'rm -f "$e"\' EXIT; {steps}exit 0'
    try:
        r = transport.run(["/bin/sh", "-c", script], timeout=10.0 * len(probes))
    except FsbenchError:
        raise
    except Exception:  # noqa: BLE001 - a transport that cannot run it: one probe at a time
        return None
    text = r.extra.get("stdout", "") if r.ok else ""
    found = re.findall(rf"\n{mark} out (\d+)\n(.*?)\n{mark} rc \1 (\d+)\n(.*?)\n{mark} end \1\n", text, re.S)
    if [int(f[0]) for f in found] != list(range(len(probes))):
        return None
    return [(rc == "0", out, err) for _, out, rc, err in found]


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
