"""Secrets by reference, never copied: resolved from the environment or a file, masked everywhere.

A scenario names its secrets (`secrets: {db: {env: FSB_DB_PASSWORD}}`) and uses them as
`${secrets.db}`. In shell commands the placeholder becomes a reference to an environment variable
(`"$FSBENCH_SECRET_DB"`) that the transport passes beside the command, so the value is in no argv
(locally: the process environment; over SSH: a 0600 file read and removed by the wrapper). Every
text fsbench writes or prints goes through `redact`: known secret values, the password part of
any URL (`mysql://user:****@host`) and parameters named like secrets (`?password=****`,
`sslpassword=****`, `--token=****`) are masked. Files are masked in a stream, whatever their size;
binary files (the results' parquet) get known values overwritten in place with as many `*`.

The set of known values is process-wide on purpose: masking must reach every path out, exception
messages included, and a secret resolved once stays secret for the rest of the process.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

MASK = "****"
#: the `://` of a URL with an '@' after it (only looked ahead at, so a URL inside another's query is
#: found too); searching for the literal first is what keeps a 100 MB log fast
_SCHEME = re.compile(r"://(?=[^\s'\"@]*@)")
_SCHEME_B = re.compile(rb"://(?=[^\s'\"@]*@)")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
#: where a URL ends in text: white space or a quote
_URL_END = re.compile(r"[\s'\"]")
_URL_END_B = re.compile(rb"[\s'\"]")
#: a parameter whose name ends like a secret's, and its value: `?password=...`, `&sslpassword=...`,
#: `password=... host=...` (a key=value DSN), `--token=...`; the value ends at & ; white space or a quote.
#: The pattern starts at the '=' and looks back for the name: scanning for '=' keeps a 100 MB log fast
_PARAM_NAMES = ("password", "passwd", "pwd", "secret", "token", "secretkey", "secret_key", "secret-key", "apikey",
                "api_key", "api-key", "accesstoken", "access_token", "access-token")
_PARAM_TEXT = "=(?:" + "|".join(f"(?<=(?i:{re.escape(n)})=)" for n in _PARAM_NAMES) + r")([^&;\s'\"]+)"
_PARAM = re.compile(_PARAM_TEXT)
_PARAM_B = re.compile(_PARAM_TEXT.encode())
_KNOWN: set[str] = set()
_PATTERNS: dict[bool, tuple[frozenset, re.Pattern | None]] = {}  # bytes? -> (the values it matches, pattern)
ENV_PREFIX = "FSBENCH_SECRET_"
#: files are masked in pieces of this size, overlapping by at least the longest secret
CHUNK = 8 * 2**20
OVERLAP = 64 * 2**10


@dataclass(frozen=True)
class SecretRef:
    """Where one secret comes from: an environment variable or a file (its first line)."""

    name: str
    env: str = ""
    file: str = ""

    def resolve(self) -> str:
        """The value; raises LookupError saying where it was looked for."""
        if self.env:
            value = os.environ.get(self.env)
            if value is None:
                raise LookupError(f"secret {self.name}: the environment variable {self.env} is not set")
        else:
            value = _first_line(self.name, Path(self.file).expanduser())
        remember(value)
        return value


#: a secret is a line: its file is read this far at most (a device such as /dev/zero is refused)
SECRET_FILE_BYTES = 64 * 2**10


def _first_line(name: str, path: Path) -> str:
    """The first line of a small regular file; LookupError saying why not."""
    from fsbench.config.files import read_bytes_bounded

    try:  # a FIFO is refused without waiting for a writer, /dev/zero without reading it
        data = read_bytes_bounded(path, SECRET_FILE_BYTES)
    except OSError as exc:
        wrong_kind = exc.errno in (errno.EINVAL, errno.EISDIR)
        why = f"is {exc.strerror}" if wrong_kind else f"cannot be read: {exc.strerror or exc}"
        raise LookupError(f"secret {name}: {path} {why}: put the secret on the first line of a regular file "
                          f"(the scenario's secrets.{name}.file)") from None
    line, newline, _ = data.partition(b"\n")
    if not newline and len(data) > SECRET_FILE_BYTES:
        raise LookupError(f"secret {name}: the first line of {path} is longer than {SECRET_FILE_BYTES // 1024} KiB; "
                          "a secret is one line")
    return line.rstrip(b"\r").decode("utf-8", errors="replace")


def env_name(secret: str) -> str:
    """The environment variable a secret travels in: FSBENCH_SECRET_<NAME>."""
    return ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", secret).upper()


#: run-time placeholders whose last part is one of these are secrets too (a service's generated keys)
SECRET_WORDS = ("access_key", "secret_key", "password", "token")


def is_secret_placeholder(key: str) -> bool:
    """Whether a run-time placeholder (`secrets.db`, `services.s3.secret_key`) holds a secret."""
    return key.startswith("secrets.") or key.rsplit(".", 1)[-1] in SECRET_WORDS


def placeholder_env(key: str) -> str:
    """The environment variable a secret placeholder's value travels in."""
    return env_name(key.split(".", 1)[1]) if key.startswith("secrets.") else env_name(key)


def secret_env(values: dict[str, str]) -> dict[str, str]:
    """The environment that carries every secret placeholder of values (shell text refers to it)."""
    return {placeholder_env(k): str(v) for k, v in values.items() if is_secret_placeholder(k)}


def remember(value: str) -> None:
    """Mask this value from now on (values shorter than 3 characters would mask ordinary text)."""
    if value and len(value) >= 3:
        _KNOWN.add(value)


#: a value written in clear in the scenario itself (a URL's password, a literal key) is masked inside
#: any text only from this length on: a lab's `mysql://jfs:jfs@...` would otherwise turn every `jfs`
#: and `juicefs` of the run (target kinds, paths, volume names) into ****, and a report that cannot
#: read its own scenario protects nothing the scenario file does not already show
WRITTEN_MIN = 8
_WHOLE: set[str] = set()


def remember_written(value: str) -> None:
    """Mask a value the scenario wrote in clear: everywhere if it is long enough to be only itself,
    else in URLs and where it stands whole under `variables:` or a key that names a secret."""
    if value and len(value) >= WRITTEN_MIN:
        remember(value)
    elif value:
        _WHOLE.add(value)


def has_secrets() -> bool:
    """Whether any secret value is known (files then need scanning)."""
    return bool(_KNOWN)


def url_password_spans(text: Any) -> list[tuple[int, int, int]]:
    """(the ':' before it, start, end) of the password of every scheme://user:password@host in text.

    The user info runs up to the last '@' of the authority, so a password may hold '@'
    (`mysql://jfs:p@ss@word@(127.0.0.1:3306)/jfs`); the authority ends at the first '/' after the
    first '@', or where the URL ends (white space or a quote).
    """
    binary = isinstance(text, bytes)
    scheme, end_re = (_SCHEME_B, _URL_END_B) if binary else (_SCHEME, _URL_END)
    at, colon, slash = (b"@", b":", b"/") if binary else ("@", ":", "/")
    out = []
    for m in scheme.finditer(text):
        if not _has_scheme(text, m.start(), binary):
            continue
        start = m.end()
        end = end_re.search(text, start)
        stop = end.start() if end else len(text)
        first_at = text.find(at, start, stop)
        if first_at < 0:
            continue
        slash_at = text.find(slash, first_at, stop)
        last_at = text.rfind(at, start, slash_at if slash_at >= 0 else stop)
        sep = text.find(colon, start, last_at)
        if sep < 0 or sep + 1 == last_at or slash in text[start:sep]:
            continue
        out.append((sep, sep + 1, last_at))
    return out


def secret_param_spans(text: Any) -> list[tuple[int, int]]:
    """(start, end) of the value of every parameter named like a secret (`?password=`, `sslpassword=`).

    A URL's query (`postgres://u@h/db?password=...`), a key=value DSN and a `--token=...` flag alike;
    the shell's own `PWD=/path` and `OLDPWD=/path` are folders, not passwords.
    """
    binary = isinstance(text, bytes)
    out = []
    for m in (_PARAM_B if binary else _PARAM).finditer(text):
        eq = m.start()
        if text[eq - 3:eq] in (b"PWD", "PWD"):
            before = text[max(eq - 6, 0):eq - 3]
            if not before[-1:].isalpha() or before in (b"OLD", "OLD"):
                continue
        out.append(m.span(1))
    return out


def _has_scheme(text: Any, colon: int, binary: bool) -> bool:
    """Whether a scheme (a letter, then letters, digits, '+', '.', '-') ends at colon."""
    i = colon
    while i > 0 and (chr(text[i - 1]) if binary else text[i - 1]) in _SCHEME_CHARS:
        i -= 1
    while i < colon and not (chr(text[i]) if binary else text[i]).isalpha():
        i += 1
    return i < colon


def _known_pattern(binary: bool) -> re.Pattern | None:
    """One pattern matching every known value, longest first (rebuilt when a value is added)."""
    made = _PATTERNS.get(binary)
    if made is None or made[0] != _KNOWN:
        values = sorted(_KNOWN, key=len, reverse=True)
        pattern: re.Pattern | None = None
        if values and binary:
            pattern = re.compile(b"|".join(re.escape(v.encode()) for v in values))
        elif values:
            pattern = re.compile("|".join(re.escape(v) for v in values))
        made = (frozenset(_KNOWN), pattern)
        _PATTERNS[binary] = made
    return made[1]


def _spans(text: Any, passwords: bool = True) -> list[tuple[int, int]]:
    """Merged (start, end) of what to mask in text: known values, and URL passwords if passwords."""
    spans = [(s, e) for _, s, e in url_password_spans(text)] + secret_param_spans(text) if passwords else []
    pattern = _known_pattern(isinstance(text, bytes))
    if pattern is not None:
        spans += [m.span() for m in pattern.finditer(text)]
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def _masked(text: Any, spans: list[tuple[int, int]], same_length: bool = False) -> Any:
    if not spans:
        return text
    binary = isinstance(text, bytes)
    parts, last = [], 0
    for s, e in spans:
        mask = ("*" * (e - s) if same_length else MASK) if not binary else (b"*" * (e - s) if same_length else b"****")
        parts += [text[last:s], mask]
        last = e
    parts.append(text[last:])
    return (b"" if binary else "").join(parts)


def redact(text: str) -> str:
    """text with every known secret and every URL password masked."""
    if not text or (not _KNOWN and "://" not in text and "=" not in text):
        return text
    return _masked(text, _spans(text))


def redact_value(value: object) -> object:
    """A table cell with its text masked (numbers and the rest as they are)."""
    return redact(value) if isinstance(value, str) else value


def redact_data(value: object) -> object:
    """Plain data (a resolved scenario) with every text masked, keys included.

    Masking the data before it becomes YAML keeps the YAML valid: a value that is all secret
    becomes the text '****', where masking the YAML text would leave an alias (`key: ****`).
    """
    return _redact_data(value, False)


def _redact_data(value: object, whole: bool) -> object:
    """whole: a value here that is a short secret written in the scenario is masked too (the
    `variables:` section, a key that names a secret), where elsewhere it may be a kind or a path."""
    if isinstance(value, dict):
        return {redact_value(k): _redact_data(v, whole or k == "variables" or is_secret_key(k))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_data(v, whole) for v in value]
    if whole and isinstance(value, str) and value in _WHOLE:
        return MASK
    return redact_value(value)


_KEY_SEPARATORS = re.compile(r"[.\-\s]")


def is_secret_key(key: object) -> bool:
    """Whether a key names a secret: it ends with one of SECRET_WORDS (`.` and `-` read as `_`)."""
    word = _KEY_SEPARATORS.sub("_", str(key).lower())
    return any(word == w or word.endswith("_" + w) for w in SECRET_WORDS)


def redact_rows(rows: Iterable[dict]) -> list[dict]:
    """Rows of a table (hosts.csv) with every text cell masked."""
    return [{k: redact_value(v) for k, v in row.items()} for row in rows]


def redact_frame(df: "pandas.DataFrame") -> "pandas.DataFrame":
    """A results table with every text column masked: parquet is binary, so it is masked before writing."""
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_object_dtype(out[col]) or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(redact_value)
    return out


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
            if binary and not _KNOWN:
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
        spans = _spans(buf, passwords=not binary)
        cut = len(buf) if not chunk else _cut(buf)
        for s, e in spans:  # a match across the cut is masked whole, in this piece
            if s < cut < e:
                cut = e
        piece = buf[:cut]
        inside = [(s, e) for s, e in spans if e <= cut]
        masked = _masked(piece, inside, same_length=binary) if inside else piece
        yield piece, (piece if masked == piece else masked)  # a password already masked stays as it is
        carry = buf[cut:]
        if not chunk:
            return


def _cut(buf: bytes) -> int:
    """Where to end a piece of buf: after the last white space before the overlap kept for the next."""
    keep = max(OVERLAP, max((len(v.encode()) for v in _KNOWN), default=0))
    limit = max(len(buf) - keep, 1)
    space = max(buf.rfind(c, max(limit - OVERLAP, 0), limit) for c in (b" ", b"\n", b"\t", b"'", b'"'))
    return space + 1 if space >= 0 else limit


def redact_tree(folder: Path) -> int:
    """Mask secrets in every file below folder; the number of files changed."""
    if not folder.is_dir():
        return 0
    return sum(redact_file(p) for p in folder.rglob("*") if p.is_file())


def split_url_password(url: str) -> tuple[str, str]:
    """(url without its password, the password) for a URL with user:password@; (url, '') otherwise.

    `mysql://jfs:p@ss@word@(127.0.0.1:3306)/jfs` -> (`mysql://jfs@(127.0.0.1:3306)/jfs`, `p@ss@word`);
    without a user (`redis://:pw@host/1`) the '@' goes too: `redis://host/1`.
    """
    spans = url_password_spans(url)
    if not spans:
        return url, ""
    sep, start, end = spans[0]
    if url[sep - 3:sep] == "://":
        return url[:sep] + url[end + 1:], url[start:end]
    return url[:sep] + url[end:], url[start:end]
