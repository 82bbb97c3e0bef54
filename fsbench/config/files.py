"""Small input files (scenario, inventory, fio job files and includes, secret files), read bounded.

Every input file fsbench reads goes through read_bytes_bounded: it is opened without blocking (a
named pipe with no writer would otherwise hang the open for ever, and ignore a polite SIGTERM),
checked on the open descriptor to be a regular file (so a link swapped in between changes
nothing), and read to a bound (so /dev/zero or a multi-gigabyte file cost nothing).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

#: a job file is a page of options: anything bigger (or a device such as /dev/zero) is a mistake
MAX_INPUT_BYTES = 4 * 2**20

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words ('a named pipe (FIFO)', 'a folder')."""
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def read_bytes_bounded(path: str | os.PathLike, limit: int = MAX_INPUT_BYTES, *, dir_fd: int | None = None,
                       follow: bool = True) -> bytes:
    """At most limit + 1 bytes of a regular file (more than limit: the caller says what is too big).

    Raises OSError with a strerror that says why for anything but a regular file, before a byte is
    read: the open never blocks (O_NONBLOCK), the type is checked on the open descriptor (fstat).
    `dir_fd`: path is relative to that open folder; `follow=False`: a link there is refused (ELOOP).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(Path(path), flags, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL  # IsADirectoryError for a folder
            raise OSError(code, f"not a regular file ({kind_of(mode)})", str(path))
        os.set_blocking(fd, True)  # a regular file: plain reads from here
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 2**20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_bounded(path: str | os.PathLike, limit: int = MAX_INPUT_BYTES, *, dir_fd: int | None = None,
                      follow: bool = True) -> str:
    """The text of a small regular file; OSError (with a strerror that says why) for anything else.

    Devices, pipes and folders are refused before a byte is read, and at most limit + 1 bytes are
    ever read, so /dev/zero or a multi-gigabyte file cost nothing. `dir_fd`, `follow`: read_bytes_bounded's.
    """
    data = read_bytes_bounded(path, limit, dir_fd=dir_fd, follow=follow)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {_size(limit)}: an input file is a page of options, not data",
                      str(path))
    return data.decode("utf-8", errors="replace")


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n:,} bytes"
