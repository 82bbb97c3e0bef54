"""Where secrets stand in a text without being known: the password of a URL, a parameter named like a secret."""

from __future__ import annotations

import re
from typing import Any

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
