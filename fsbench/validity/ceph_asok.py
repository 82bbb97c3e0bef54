"""Ceph daemons' perf counters read from their admin sockets, where the daemons run on the host that reads them.

`ceph tell osd.* perf dump` starts the Python `ceph` CLI and asks every daemon through the monitors: 0.25 s
on a quiet machine, up to a second on a busy one, and fsbench reads the counters 4 to 8 times a case (before,
after, and while the case settles). A daemon's admin socket answers the same counters locally: the request is
the command as JSON ending in a NUL byte, the answer a 4-byte big-endian length and then the JSON (Ceph's
AdminSocket). One small `python3` reads every socket in a few milliseconds and prints `NAME: {json}` lines,
the shape the `tell` parsers read (fsbench.validity.ceph, fsbench.validity.ceph_mds).

Which sockets: the scope command, once per case, asks `ceph-conf` for each daemon's `admin_socket` (the conf's
template, `$run_dir/$cluster-$name.asok` by default) and keeps those that exist on this host as a socket. Where
none does (a client of a remote cluster: the seeds' full scale), the `tell` command stays. A socket that stops
answering makes the read fail, and the case's counters are then left out (never mixed with `tell`'s).
"""

from __future__ import annotations

import json
import re
import shlex

#: marks the section of the scope command's output that lists the local sockets: `NAME PATH` lines
SECTION = "asok"
_LINE = re.compile(r"^((?:osd|mds)\.[^\s:]+)\s+(/\S+)$")
#: the scope's line naming the interpreter of the `ceph` CLI (its `#!` line), which the reader runs on: a
#: plain `python3` may be a slow wrapper (pyenv's shim: 0.15 s a start, against 0.02 s)
_PYTHON = re.compile(r"^python\s+(/\S+)$")
#: seconds a socket may take to answer before the read fails
TIMEOUT_S = 10

#: the reader: argv[1] the command JSON, then NAME=PATH pairs; each answer on one line, `NAME: {json}`
READER = r"""
import json, socket, struct, sys
cmd = sys.argv[1].encode() + b"\0"
for pair in sys.argv[2:]:
    name, path = pair.split("=", 1)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(%d)
    s.connect(path)
    s.sendall(cmd)
    head = b""
    while len(head) < 4:
        part = s.recv(4 - len(head))
        if not part:
            sys.exit("%%s: the socket closed" %% name)
        head += part
    size, body = struct.unpack(">I", head)[0], b""
    while len(body) < size:
        part = s.recv(min(1 << 20, size - len(body)))
        if not part:
            sys.exit("%%s: the answer was cut" %% name)
        body += part
    s.close()
    print(name + ": " + json.dumps(json.loads(body), separators=(",", ":")))
""".strip() % TIMEOUT_S


def sections(text: str, marker: str) -> dict[str, str]:
    """A scope command's output by section: the lines after each `MARKER NAME` line, by NAME."""
    out: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith(marker):
            name = line[len(marker):].strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out


def perf_lines(marker: str, tell: list[str], ceph_conf: list[str] | None, kind: str) -> list[str]:
    """Shell lines of a scope command: the `perf` section (the daemons' counters through `tell`, bounded: a
    daemon whose socket never bound would hang it) and, with `ceph_conf`, the `asok` section listing their
    sockets on this host."""
    told = shlex.join(["timeout", "20", *tell])
    if ceph_conf is None:
        return [f"echo; echo '{marker}perf'", told]
    return [f"echo; echo '{marker}perf'", 'perf=$(mktemp)', 'trap \'rm -f "$perf"\' EXIT', f'{told} > "$perf"',
            'cat "$perf"', f"echo '{marker}{SECTION}'", *list_lines(ceph_conf, kind, '"$perf"')]


def list_lines(ceph_conf: list[str], kind: str, ids_from: str) -> list[str]:
    """Shell lines of the scope command printing `NAME PATH` for each daemon of `kind` (osd, mds) named in the
    file `ids_from` (the `tell` answer's `KIND.ID:` lines) whose admin socket exists here."""
    conf = shlex.join(ceph_conf)
    pattern = shlex.quote(rf"s/^{kind}\.\([^:]*\):.*/\1/p")
    return [
        # the `ceph` CLI's own interpreter, from its #! line
        "c=$(command -v ceph || true)",
        'if [ -n "$c" ]; then sed -n \'1s/^#! *\\(\\/[^ ]*python[0-9.]*\\).*/python \\1/p\' "$c"; fi',
        f"for id in $(sed -n {pattern} {ids_from}); do",
        f'  p=$({conf} --name {kind}."$id" --show-config-value admin_socket 2> /dev/null) || continue',
        f'  if [ -S "$p" ]; then echo "{kind}.$id $p"; fi',
        "done",
    ]


def python(text: str) -> str:
    """The interpreter the scope found (the `ceph` CLI's), else `python3`."""
    for line in text.splitlines():
        m = _PYTHON.match(line.strip())
        if m:
            return m.group(1)
    return "python3"


def sockets(text: str) -> dict[str, str]:
    """The `NAME PATH` lines of the scope's asok section: daemon name -> its socket."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def reader_argv(command: dict[str, str], found: dict[str, str], interpreter: str = "python3") -> list[str]:
    """The argv that reads `command` (`{"prefix": "perf dump"}`...) from each daemon's socket (-I -S: no
    user site, no site packages: the reader needs the standard library only, and starts in 20 ms)."""
    return [interpreter, "-I", "-S", "-c", READER, json.dumps(command),
            *(f"{n}={p}" for n, p in sorted(found.items()))]


def reader_for(command: dict[str, str], names: set[str], section: str) -> list[str] | None:
    """The socket reader of the daemons in `names` (those serving the target), from the scope's asok section
    (`section`), or None where any of them has no socket here: `ceph tell` stays, never a mix of both."""
    found = sockets(section)
    if not names or not names <= set(found):
        return None
    return reader_argv(command, {n: p for n, p in found.items() if n in names}, python(section))
