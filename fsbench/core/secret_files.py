"""Files masked in place, in a stream whatever their size: text gets known values and URL passwords masked,
binary files (the results' parquet) get known values overwritten with as many `*`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from fsbench.core.secret_known import has_secrets, longest_known_bytes, masked, spans

#: files are masked in pieces of this size, overlapping by at least the longest secret
CHUNK = 8 * 2**20
OVERLAP = 64 * 2**10


def redact_file(path: Path) -> bool:
    """Mask secrets inside a file in place, in a stream whatever its size; True when it changed.

    Text files get known values and URL passwords masked; binary files (a NUL in their first 8 KiB)
    get known values overwritten with as many '*', so their layout stays the same. A file is read
    once when it holds nothing to mask (the usual case), and rewritten through a temporary file
    otherwise.
    """
    try:
        with open(path, "rb") as fh:
            binary = b"\0" in fh.read(8192)
            if binary and not has_secrets():
                return False
            fh.seek(0)
            if all(masked is piece for piece, masked in _pieces(fh, binary)):
                return False
            fh.seek(0)
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as tmp:
                try:
                    for _, masked in _pieces(fh, binary):
                        tmp.write(masked)
                    os.chmod(tmp.name, os.fstat(fh.fileno()).st_mode & 0o7777)
                except BaseException:
                    Path(tmp.name).unlink(missing_ok=True)
                    raise
        os.replace(tmp.name, path)
        return True
    except OSError:
        return False


def _pieces(fh, binary: bool) -> Iterable[tuple[bytes, bytes]]:
    """(piece, the piece masked; the same object when nothing in it is masked) over a whole file.

    Pieces end at white space where there is some, so a URL is seen whole, and never inside a
    match: the text after the cut (at least OVERLAP, and the longest secret) is read again with the
    next chunk.
    """
    carry = b""
    while True:
        chunk = fh.read(CHUNK)
        buf = carry + chunk
        if not buf:
            return
        found = spans(buf, passwords=not binary)
        cut = len(buf) if not chunk else _cut(buf)
        for s, e in found:  # a match across the cut is masked whole, in this piece
            if s < cut < e:
                cut = e
        piece = buf[:cut]
        inside = [(s, e) for s, e in found if e <= cut]
        done = masked(piece, inside, same_length=binary) if inside else piece
        yield piece, (piece if done == piece else done)  # a password already masked stays as it is
        carry = buf[cut:]
        if not chunk:
            return


def _cut(buf: bytes) -> int:
    """Where to end a piece of buf: after the last white space before the overlap kept for the next."""
    keep = max(OVERLAP, longest_known_bytes())
    limit = max(len(buf) - keep, 1)
    space = max(buf.rfind(c, max(limit - OVERLAP, 0), limit) for c in (b" ", b"\n", b"\t", b"'", b'"'))
    return space + 1 if space >= 0 else limit


def redact_tree(folder: Path) -> int:
    """Mask secrets in every file below folder; the number of files changed."""
    if not folder.is_dir():
        return 0
    return sum(redact_file(p) for p in folder.rglob("*") if p.is_file())
