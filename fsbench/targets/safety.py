"""Refuse target paths where removing fsbench's test files could hurt: /, homes, system folders."""

from __future__ import annotations

import os
import posixpath

#: never a target, nor anything below them
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
                "/sbin", "/sys", "/usr", "/run")
#: never a target themselves (their subfolders may be)
SYSTEM_ROOTS = ("/", "/home", "/root", "/var", "/opt", "/srv", "/mnt", "/media", "/tmp", "/var/tmp",
                "/var/lib", "/var/log")


def unsafe_path_reason(path: str, home: str | None = None) -> str | None:
    """Why path must not be a target without `destructive: true`, or None when it is fine."""
    if not path.startswith("/"):
        return "is not an absolute path"
    p = posixpath.normpath(path)
    if p in SYSTEM_ROOTS:
        return "is / or a top-level system folder"
    for tree in SYSTEM_TREES:
        if p == tree or p.startswith(tree + "/"):
            return f"is inside the system folder {tree}"
    homes = {posixpath.normpath(home or os.path.expanduser("~"))}
    if p in homes or (p.startswith("/home/") and p.count("/") == 2):
        return "is a home directory"
    return None


def resolved_unsafe_reason(transport, path: str) -> str | None:
    """Why path, with its symlinks and `..` resolved on the host itself, must not be written; None if fine.

    Validation sees only the text of the path; a symlink to / or /etc, or `link/..`, is only known
    where the path lives. Raises nothing: an unreachable host is someone else's error.
    """
    try:
        r = transport.run(["realpath", "-m", "--", path], timeout=30)
    except Exception:  # noqa: BLE001 - reachability is checked and reported elsewhere
        return None
    resolved = (r.extra.get("stdout", "") or "").strip() if r.ok else ""
    if not resolved or posixpath.normpath(resolved) == posixpath.normpath(path):
        return None
    reason = unsafe_path_reason(resolved)
    return f"{path} resolves to {resolved} on {transport.host}, which {reason}" if reason else None
