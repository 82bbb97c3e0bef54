"""Dropping caches before a measured read, with the proof: the page cache of a host (the Cached figure of
/proc/meminfo before and after), and a client's own cache folders (their bytes before and after)."""

from __future__ import annotations

import json
import posixpath
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from fsbench.api.transport import Transport
from fsbench.core.shell import sh

if TYPE_CHECKING:
    from fsbench.run.targets.lifecycle import TargetSession

#: what each value written to /proc/sys/vm/drop_caches drops
LEVELS = {1: "the page cache", 3: "the page cache, dentries and inodes"}


def drop_command(level: int = 3) -> str:
    """The only shell text this needs (`echo N > file` is a redirect, so it cannot be a plain argv)."""
    if level not in LEVELS:
        raise ValueError(f"drop_caches level {level!r}: expected one of {sorted(LEVELS)}")
    return f"sync && echo {level} > /proc/sys/vm/drop_caches"


DROP = drop_command(3)


#: the two figures a drop is proven by, read in the same shell as the drop: Cached (page cache, KiB) and
#: the dentry count (the one line of dentry-state, the only line of the two files that starts with a digit);
#: "@@" separates the readings before the drop from those after it. One `cat` reads both files (a shell's own
#: `read` gets one byte of dentry-state, which the kernel answers a one-byte read with), and `cat`, not `grep`:
#: what runs after the drop is read from disk again, and cat is what the case's next commands (its sampler,
#: the page cache's facts) run next anyway, where grep and its regex library were read for this alone (3 ms a
#: case on this machine's disk)
_FIGURES = "cat /proc/meminfo /proc/sys/fs/dentry-state"


def drop_script(level: int = 3) -> str:
    """One shell for the figures before, the drop, the figures after (a host is asked once, not five times:
    over SSH each round trip costs a case time); exits with the drop's status."""
    return f"{_FIGURES}; echo @@; {drop_command(level)}; rc=$?; echo @@; {_FIGURES}; exit $rc"


def figures(text: str) -> tuple[int | None, int | None]:
    """(page cache bytes, dentry count) from one reading of _FIGURES; None for a figure that is not there."""
    cached = names = None
    for line in text.splitlines():
        words = line.split()
        if line.startswith("Cached:") and len(words) > 1 and words[1].isdigit():
            cached = int(words[1]) * 1024
        elif words and words[0].isdigit():
            names = int(words[0])
    return cached, names


def drop_caches(transport: Transport, record: Path | None = None, level: int = 3) -> dict:
    """sync; drop what `level` names (3: page cache, dentries and inodes); returns (and stores) before/after
    figures."""
    command = drop_command(level)
    r = transport.run(sh(drop_script(level)), timeout=120)
    parts = (r.extra.get("stdout", "") + "@@@@").split("@@")
    (before, names_before), (after, names_after) = figures(parts[0]), figures(parts[2])
    # the dentry counts show which level ran: 1 keeps them, 3 frees the unused ones
    out = {"host": transport.host, "command": command, "level": level, "dropped": LEVELS[level], "ok": r.ok,
           "cached_before_bytes": before, "cached_after_bytes": after,
           "dentries_before": names_before, "dentries_after": names_after, "error": "" if r.ok else r.describe()}
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(out, indent=2) + "\n")
    return out


def _inside(folder: str, scratch: str) -> bool:
    """Whether folder lies strictly inside the run's scratch space (after `..` is resolved)."""
    base = posixpath.normpath(scratch)
    return base.startswith("/") and posixpath.normpath(folder).startswith(base + "/")


def cache_bytes(transport: Transport, folder: str) -> int | None:
    """The bytes of the files in a cache folder (du), or None when it cannot be read."""
    r = transport.run(["du", "-s", "-b", "--", folder], timeout=60)
    words = r.extra.get("stdout", "").split() if r.ok else []
    return int(words[0]) if words and words[0].isdigit() else None


def empty_script(folder: str) -> list[str]:
    """Empty a stopped client's cache folder, unless it holds writes not yet uploaded (rclone's vfsMeta
    marks them "Dirty": rclone uploads them when it starts again, and they would be lost)."""
    return sh(_empty_text(folder))


def _empty_text(folder: str) -> str:
    q = shlex.quote(folder)
    kept = f"{folder} holds writes the client has not uploaded yet: not emptied, so the read may come from it"
    return "\n".join([
        f"# empty the client cache folder {folder}",
        f"if grep -rqsE '\"Dirty\": *true' {q}/vfsMeta; then",
        f"  echo {shlex.quote(kept)} >&2",
        "  exit 4",
        "fi",
        # find -delete never follows a link, and leaves the folder itself for the client
        f"find {q} -mindepth 1 -delete",
    ])


#: how long fsbench waits for a client to upload what its cache holds, and for its process to end after unmount
UPLOAD_WAIT_S, EXIT_WAIT_S = 120, 30


def uploaded_script(folder: str, seconds: int = UPLOAD_WAIT_S) -> list[str]:
    """While the client runs: wait (up to `seconds`) until its cache holds no write it has not uploaded."""
    q = shlex.quote(folder)
    return sh("\n".join([
        f"# wait until the client has uploaded what {folder} holds",
        f"i=0; while grep -rqsE '\"Dirty\": *true' {q}/vfsMeta && [ $i -lt {seconds * 5} ]; do",
        "  sleep 0.2; i=$((i + 1))",
        "done",
    ]))


def client_pids_script(name: str, path: str) -> list[str]:
    """Print the pids of the processes named `name` whose arguments hold `path` (the client of a mount)."""
    return sh("\n".join([
        f"# the pids of {name} serving {path}",
        "for p in /proc/[0-9]*; do",
        f'  [ "$(cat "$p/comm" 2>/dev/null)" = {shlex.quote(name)} ] || continue',
        f'  tr "\\0" "\\n" < "$p/cmdline" 2>/dev/null | grep -qxF -- {shlex.quote(path)} && echo "${{p#/proc/}}"',
        "done; true",
    ]))


def _gone_text(pids: list[str], seconds: int = EXIT_WAIT_S) -> str:
    """After the unmount: wait (up to `seconds`) until the client's processes ended, so none still writes
    into its cache folder when it is emptied."""
    alive = " || ".join(f"kill -0 {int(p)} 2>/dev/null" for p in pids) or "false"
    return "\n".join([
        "# wait until the unmounted client's processes ended",
        f"i=0; while {{ {alive}; }}; do",
        f"  [ $i -ge {seconds * 10} ] && {{ echo 'the client still ran {seconds} s after its unmount' >&2; exit 5; }}",
        "  sleep 0.1; i=$((i + 1))",
        "done",
    ])


def drop_client_caches(session: "TargetSession", host: str, record: Path | None = None) -> dict | None:
    """Empty the client's own cache folders on host, with the client unmounted (a guarded remount), and
    return (and store) the proof: each folder's bytes before and after; None when the kind keeps no cache.

    Only folders inside the run's scratch space are emptied (fsbench made them); one elsewhere (a user's
    `use_cache=/var/cache/s3fs`) is left as it is and named in the proof's `error`.
    """
    folders = session.plan(host).caches
    if not folders:
        return None
    tr = session.transports[host]
    outside = [f for f in folders if not _inside(f, session.run_scratch)]
    ours = [f for f in folders if f not in outside]
    before = {f: cache_bytes(tr, f) for f in ours}
    failed, kept = None, list[str]()
    if ours:
        for f in ours:
            tr.run(uploaded_script(f), timeout=UPLOAD_WAIT_S + 30)
        name = session.target.client_process or session.kind.client_process
        found = tr.run(client_pids_script(name, session.target.path), timeout=30) if name else None
        pids = found.extra.get("stdout", "").split() if found is not None and found.ok else []
        # one script: nothing is emptied while the old client may still write into its folder
        script = [_gone_text(pids), *(_empty_text(f) for f in ours)]
        failed, kept = session.remount(host, [sh("\n".join(script))])
    after = {f: cache_bytes(tr, f) for f in ours}
    errors = [e for e in (failed, *kept, *(f"{f} is outside the run's scratch space {session.run_scratch}: fsbench "
                                    "empties only folders it made, so this cache was left as it is"
                                    for f in outside)) if e]
    out = {"host": host, "target": session.target.name, "how": "unmount, empty the cache folders, mount again",
           "folders": [{"folder": f, "bytes_before": before[f], "bytes_after": after[f]} for f in ours],
           "left": outside, "ok": not failed, "error": "; ".join(errors)}
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(out, indent=2) + "\n")
    return out
