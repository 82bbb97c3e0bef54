"""Checkers of single values: text, numbers, durations, sizes, names, host addresses, shell commands."""

from __future__ import annotations

import re
from typing import Any

from fsbench.config.shapes import MAX_NAME, NAME_LENGTH_HINT, Check, good_name, kind_of, shell
from fsbench.config.yamllines import LineMap
from fsbench.core.units import parse_duration, parse_size


def string(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """Any scalar, kept as text (YAML turns `1m` into a string but `64` into an int)."""
    if isinstance(value, (dict, list)) or value is None:
        issues.append(lm.issue(path, f"expected text, got {kind_of(value)}"))
        return None
    return str(value)


def scalar(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A plain value: text, number or boolean; text without line breaks (it becomes a line of a file)."""
    if isinstance(value, (dict, list)) or value is None:
        issues.append(lm.issue(path, f"expected a plain value (text, number, true/false), got {kind_of(value)}"))
        return None
    if isinstance(value, str) and _CONTROL.search(value):
        issues.append(lm.issue(path, f"{value!r} holds a line break or another control character",
                               "tool options become lines of job files: write the value on one line"))
        return None
    return value


def scalar_or_list(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A plain value or a list of them (each tool decides what a list means; fio refuses them)."""
    if isinstance(value, list):
        return [scalar(v, path + (i,), lm, issues) for i, v in enumerate(value)]
    return scalar(value, path, lm, issues)


def boolean(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """true or false."""
    if not isinstance(value, bool):
        issues.append(lm.issue(path, f"expected true or false, got {value!r}"))
        return None
    return value


def integer(minimum: int | None = None, maximum: int | None = None) -> Check:
    """A whole number, at least minimum (and at most maximum)."""

    def run(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            issues.append(lm.issue(path, f"expected a whole number, got {value!r}"))
            return None
        if minimum is not None and value < minimum:
            issues.append(lm.issue(path, f"must be at least {minimum}, got {value}"))
            return None
        if maximum is not None and value > maximum:
            issues.append(lm.issue(path, f"must be at most {maximum:,}, got {value:,}"))
            return None
        return value

    return run


def duration(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A duration such as 30s, 5m, 1h (a bare number is seconds) -> seconds."""
    seconds = pause(value, path, lm, issues)
    if seconds == 0:
        issues.append(lm.issue(path, f"must be longer than zero, got {value!r}"))
        return None
    return seconds


def pause(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A duration that may be none (0s): a pause such as the cooldown between cases -> seconds."""
    try:
        seconds = parse_duration(value)
    except (ValueError, TypeError):
        issues.append(lm.issue(path, f"expected a duration such as 30s, 5m or 1h, got {value!r}"))
        return None
    if seconds < 0:
        issues.append(lm.issue(path, f"must not be negative, got {value!r}; 0s means none"))
        return None
    return seconds


def size(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A size such as 4k, 1MiB, 10g -> bytes."""
    try:
        return parse_size(value)
    except (ValueError, TypeError):
        issues.append(lm.issue(path, f"expected a size such as 4k, 1MiB or 10g, got {value!r}"))
        return None


def name(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A name that becomes a folder: letters, digits, '-', '_' and '.', starting with a letter or digit."""
    if not good_name(value) or value in (".", ".."):
        issues.append(lm.issue(path, f"bad name {value!r}",
                               "use letters, digits, '-', '_' and '.', starting with a letter or digit"))
        return None
    if len(str(value)) > MAX_NAME:
        issues.append(lm.issue(path, f"a name of {len(str(value))} characters; at most {MAX_NAME}", NAME_LENGTH_HINT))
        return None
    return value


_ADDRESS = re.compile(r"[A-Za-z0-9_.:%\[\]-]{1,255}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def address(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A host name or IP address (it ends up in hostfiles and command lines, so nothing else)."""
    text = string(value, path, lm, issues)
    if text is None:
        return None
    if not _ADDRESS.match(str(text)):
        issues.append(lm.issue(path, f"{text!r} is not a host name or an IP address",
                               "letters, digits, '.', '-', '_', ':' (IPv6) only"))
        return None
    return text


def line_text(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """Text that becomes one line of a file or one command-line value: no line breaks or control characters."""
    text = string(value, path, lm, issues)
    if text is not None and _CONTROL.search(str(text)):
        issues.append(lm.issue(path, f"{text!r} holds a line break or another control character",
                               "values become lines of job files and command lines: write it on one line"))
        return None
    return text


def matches(pattern: str, what: str) -> Check:
    """A string matching a regular expression (bucket names, ...); `what` says what it should be."""
    rule = re.compile(pattern)

    def run(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        text = string(value, path, lm, issues)
        if text is not None and not rule.match(str(text)):
            issues.append(lm.issue(path, f"{text!r} is not {what}"))
            return None
        return text

    return run


def anything(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """Left to a later, more specific check (tool options)."""
    return value


#: shell commands: a multi-line script (target setup, service start...), or one line (a fuse mount)
command = shell(string)
command_line = shell(line_text)
