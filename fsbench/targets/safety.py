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
