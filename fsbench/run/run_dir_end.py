"""The end of a run recorded whatever happens meanwhile: a full disk (the reserve given back, then the
manifest rewritten in its own blocks) or one more Ctrl-C."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

OUT_OF_SPACE = (errno.ENOSPC, errno.EDQUOT)


def out_of_space(exc: BaseException) -> bool:
    """Whether an error means the run directory's file system is full (or over quota)."""
    return isinstance(exc, OSError) and exc.errno in OUT_OF_SPACE


def settle_manifest(path: Path, manifest: dict, save: Callable[[], None], release_reserve: Callable[[], None]) -> bool:
    """Write the manifest (save) however the disk and the user interfere; whether it could be written.

    A full disk gets the reserve back and one more try; a Ctrl-C that arrives while writing does
    not stop the write: it is raised again once the manifest is on disk.
    """
    stopped, written = False, False
    for _ in range(20):  # each round ends in a write, a give-up, or one more Ctrl-C
        try:
            try:
                save()
                written = True
                break
            except OSError as exc:
                if not out_of_space(exc) or not (path / ".reserve").exists():
                    (path / "manifest.json.tmp").unlink(missing_ok=True)
                    written = out_of_space(exc) and overwrite_manifest(path, manifest)
                    break
                release_reserve()
        except KeyboardInterrupt:
            stopped = True
    if stopped:
        raise KeyboardInterrupt
    return written


def overwrite_manifest(path: Path, manifest: dict) -> bool:
    """The last resort on a disk too full for a reserve: the manifest rewritten in its own blocks.

    A run that started with less free space than the reserve has none to give back, and the atomic
    write needs a new file. Written compact (no indent), the manifest is shorter than the indented one
    on disk, so it fits in the space that file already holds; if not, nothing is written.
    """
    text = (json.dumps(manifest, separators=(",", ":")) + "\n").encode()
    try:
        fd = os.open(path / "manifest.json", os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if len(text) > os.fstat(fd).st_size:
            return False
        if os.write(fd, text) != len(text):
            return False
        os.ftruncate(fd, len(text))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
