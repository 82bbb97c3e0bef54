"""What on a target's host is fsbench's own: its mount (by identity), the mount point and scratch folder it made.

A mount's identity is its mount id, device, type and source, read with findmnt. fsbench records the
identity of the mount that appears at a target's path after its own mount command (the path was
checked to be no mount point before), and wraps every unmount, including the ones kept in
leftovers.json for the run after a crash, in a guard: a different mount there is left alone. Folders
are made with a plain mkdir, which fails on any existing entry (a planted symlink included), so
fsbench knows which it made and never writes through, or removes, one it did not."""

from __future__ import annotations

import shlex

from fsbench.api.transport import Transport
from fsbench.core.errors import FsbenchError
from fsbench.core.shell import sh

#: what tells one mount from another while it is mounted (findmnt's columns, one line, raw)
FIELDS = "ID,MAJ:MIN,FSTYPE,SOURCE"
#: the exit status of a guarded unmount that found a mount fsbench did not make (nothing was done)
NOT_OURS = 3


def identity_argv(path: str) -> list[str]:
    """findmnt's line for the mount at path (the top one when mounts are stacked); exit 1 when none."""
    return ["findmnt", "-n", "-r", "-o", FIELDS, "--mountpoint", path]


def read_identity(tr: Transport, path: str) -> tuple[str, str | None]:
    """(identity of the mount at path, "" when it is no mount point; the reason it cannot be told, or None)."""
    try:
        r = tr.run(identity_argv(path), timeout=30)
    except FsbenchError as exc:
        return "", f"cannot tell whether {path} on {tr.host} is a mount point ({exc})"
    lines = [line.strip() for line in r.extra.get("stdout", "").splitlines() if line.strip()]
    if r.ok and lines:
        return lines[-1], None
    if r.exit_status == 1 and not r.stderr_tail.strip():  # findmnt found no mount there
        return "", None
    return "", (f"cannot tell whether {path} on {tr.host} is a mount point: findmnt {r.describe()}; "
                "install util-linux there (fsbench reads mounts with findmnt so it unmounts only its own)")


def guarded(argv: list[str], path: str, ours: str) -> list[str]:
    """argv, run only when path holds fsbench's mount `ours` or no mount at all ("" ours: none known)."""
    p = shlex.quote(path)
    known = f"fsbench's was {ours}" if ours else "fsbench recorded no mount of its own there"
    refuse = shlex.quote(f"{path} holds a mount fsbench did not make ({known}): left mounted, not unmounted")
    return sh("\n".join([
        f"# unmount {path} only while it holds fsbench's own mount",
        "command -v findmnt > /dev/null || "
        f"{{ echo {shlex.quote(f'findmnt is missing: {path} left mounted (install util-linux)')} >&2; "
        f"exit {NOT_OURS}; }}",
        f"now=$(findmnt -n -r -o {FIELDS} --mountpoint {p} | tail -n 1)",
        f'if [ -n "$now" ] && [ "$now" != {shlex.quote(ours)} ]; then',
        f'  echo {refuse}" (now: $now)" >&2; exit {NOT_OURS}',
        "fi",
        f"exec {shlex.join(argv)}",
    ]))


def made_dir_script(path: str) -> list[str]:
    """Prints `made` when it creates the folder path (its parents as needed), `there` when it existed."""
    p = shlex.quote(path)
    return sh("\n".join([
        f"# make the mount point {path} unless it exists",
        f"if [ -e {p} ] || [ -L {p} ]; then echo there; exit 0; fi",
        f"mkdir -p -- \"$(dirname -- {p})\"",
        f"mkdir -- {p}",
        "echo made",
    ]))


def scratch_script(path: str, shared: bool) -> list[str]:
    """Make fsbench's scratch folder without following links; `shared`: an earlier host made it (one file
    system), then only a real folder of this user is taken. Fails, saying why, on anything else."""
    p = shlex.quote(path)
    lines = [f"# make fsbench's scratch folder {path}, never through an entry it did not make",
             f"if err=$(mkdir -m 0755 -- {p} 2>&1); then echo made; exit 0; fi"]
    if shared:
        lines.append(f"if [ -d {p} ] && [ ! -L {p} ] && [ -O {p} ]; then echo shared; exit 0; fi")
    lines += ['echo "$err" >&2',
              f"echo {shlex.quote(f'{path} exists and is not a folder fsbench made for this run')} >&2",
              "exit 1"]
    return sh("\n".join(lines))
