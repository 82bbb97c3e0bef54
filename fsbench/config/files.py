"""Small input files read at validation (fio job files and their includes), with a size bound."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: a job file is a page of options: anything bigger (or a device such as /dev/zero) is a mistake
MAX_INPUT_BYTES = 4 * 2**20


def read_text_bounded(path: str | os.PathLike, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of a small regular file; OSError (with a strerror that says why) for anything else.

    Devices, pipes and folders are refused before a byte is read, and at most limit + 1 bytes are
    ever read, so /dev/zero or a multi-gigabyte file cost nothing.
    """
    with open(Path(path), "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a device, a pipe or a folder?)", str(path))
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {_size(limit)}: an input file is a page of options, not data",
                      str(path))
    return data.decode("utf-8", errors="replace")


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n:,} bytes"
