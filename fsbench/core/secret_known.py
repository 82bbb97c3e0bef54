"""The secret values this process knows, and the spans of a text (or bytes) that mask them and URL passwords.

The set is process-wide on purpose: masking must reach every path out, exception messages included,
and a secret resolved once stays secret for the rest of the process.
"""

from __future__ import annotations

import re
from typing import Any

from fsbench.core.secret_urls import secret_param_spans, url_password_spans

MASK = "****"
_KNOWN: set[str] = set()
_PATTERNS: dict[bool, tuple[frozenset, re.Pattern | None]] = {}  # bytes? -> (the values it matches, pattern)


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


def written_whole(value: str) -> bool:
    """Whether value is a short secret the scenario wrote in clear (masked only where it stands whole)."""
    return value in _WHOLE


def longest_known_bytes() -> int:
    """The length in bytes of the longest known value (0 when none is known)."""
    return max((len(v.encode()) for v in _KNOWN), default=0)


def known_pattern(binary: bool) -> re.Pattern | None:
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


def spans(text: Any, passwords: bool = True) -> list[tuple[int, int]]:
    """Merged (start, end) of what to mask in text: known values, and URL passwords if passwords."""
    found = [(s, e) for _, s, e in url_password_spans(text)] + secret_param_spans(text) if passwords else []
    pattern = known_pattern(isinstance(text, bytes))
    if pattern is not None:
        found += [m.span() for m in pattern.finditer(text)]
    merged: list[tuple[int, int]] = []
    for s, e in sorted(found):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def masked(text: Any, spans: list[tuple[int, int]], same_length: bool = False) -> Any:
    """text with each span replaced by MASK (same_length: by as many '*', as binary files need)."""
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
