"""A small declarative checker for scenario data: types, allowed values, unknown keys, with line numbers."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from fsbench.config.yamllines import LineMap
from fsbench.core.errors import Issue
from fsbench.core.units import parse_duration, parse_size

Check = Callable[[object, tuple, LineMap, list], Any]


@dataclass(frozen=True)
class Flag:
    """A command-line flag that sets a key from outside the file (`fsbench deploy --vdbench-zip`)."""

    name: str
    help: str
    metavar: str = ""
    #: the value is a file that must exist (checked by the command line before anything runs)
    existing_file: bool = False


@dataclass
class Key:
    """One key of a mapping: its checker, whether it is required, its default."""

    check: "Check"
    required: bool = False
    default: object = None
    doc: str = ""
    flag: Flag | None = None


@dataclass
class Struct:
    """A mapping with a fixed set of keys; unknown keys are errors that list the allowed ones."""

    keys: dict[str, Key]
    what: str = "mapping"
    extra: Callable[[dict, tuple, LineMap, list], None] | None = field(default=None)

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            issues.append(lm.issue(path, f"expected a {self.what} (key: value lines), got {_kind(value)}"))
            return None
        out: dict = {}
        for key, item in value.items():
            if key not in self.keys:
                close = difflib.get_close_matches(key, list(self.keys), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                issues.append(lm.issue(path + (key,), f"unknown key {key!r}",
                                       f"{hint}allowed here: {', '.join(self.keys)}"))
                continue
            out[key] = self.keys[key].check(item, path + (key,), lm, issues)
        for key, spec in self.keys.items():
            if key not in value:
                if spec.required:
                    issues.append(lm.issue(path, f"missing required key {key!r}", spec.doc))
                # a missing section still gets its own defaults filled in
                out[key] = spec.check(spec.default(), path + (key,), lm, issues) if callable(spec.default) \
                    else spec.default
        if self.extra:
            self.extra(out, path, lm, issues)
        return out


class _MappingOf:
    """A mapping of user-chosen names to values checked by `item` (see mapping_of)."""

    def __init__(self, item: Check, name_rule: bool, what: str):
        self.item, self.name_rule, self.what = item, name_rule, what

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            issues.append(lm.issue(path, f"expected a mapping of {self.what} names to settings, got {_kind(value)}"))
            return {}
        out = {}
        for name, item in value.items():
            if self.name_rule and not _good_name(name):
                issues.append(lm.issue(path + (name,), f"bad {self.what} name {name!r}",
                                       "use letters, digits, '-', '_' and '.', starting with a letter or digit"))
                continue
            if self.name_rule and len(name) > MAX_NAME:
                issues.append(lm.issue(path + (name,), f"{self.what} name of {len(name)} characters; at most "
                                                       f"{MAX_NAME}", _NAME_LENGTH_HINT))
                continue
            out[name] = self.item(item, path + (name,), lm, issues)
        return out


def mapping_of(check: Check, *, name_rule: bool = True, what: str = "entry") -> Check:
    """A mapping of user-chosen names (targets, workloads, hosts) to values checked by check."""
    return _MappingOf(check, name_rule, what)


class _ListOf:
    """A list whose items are checked by `item` (see list_of)."""

    def __init__(self, item: Check, allow_single: bool):
        self.item, self.allow_single = item, allow_single

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            if self.allow_single:
                return [self.item(value, path, lm, issues)]
            issues.append(lm.issue(path, f"expected a list, got {_kind(value)}"))
            return []
        return [self.item(v, path + (i,), lm, issues) for i, v in enumerate(value)]


def list_of(check: Check, *, allow_single: bool = False) -> Check:
    """A list whose items are checked by check (a single item is accepted if allow_single)."""
    return _ListOf(check, allow_single)


def string(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """Any scalar, kept as text (YAML turns `1m` into a string but `64` into an int)."""
    if isinstance(value, (dict, list)) or value is None:
        issues.append(lm.issue(path, f"expected text, got {_kind(value)}"))
        return None
    return str(value)


def scalar(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A plain value: text, number or boolean; text without line breaks (it becomes a line of a file)."""
    if isinstance(value, (dict, list)) or value is None:
        issues.append(lm.issue(path, f"expected a plain value (text, number, true/false), got {_kind(value)}"))
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
    try:
        seconds = parse_duration(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        issues.append(lm.issue(path, f"expected a duration such as 30s, 5m or 1h, got {value!r}"))
        return None
    if seconds <= 0:
        issues.append(lm.issue(path, f"must be longer than zero, got {value!r}"))
        return None
    return seconds


def size(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A size such as 4k, 1MiB, 10g -> bytes."""
    try:
        return parse_size(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        issues.append(lm.issue(path, f"expected a size such as 4k, 1MiB or 10g, got {value!r}"))
        return None


def name(value: object, path: tuple, lm: LineMap, issues: list) -> Any:
    """A name that becomes a folder: letters, digits, '-', '_' and '.', starting with a letter or digit."""
    if not _good_name(value) or value in (".", ".."):
        issues.append(lm.issue(path, f"bad name {value!r}",
                               "use letters, digits, '-', '_' and '.', starting with a letter or digit"))
        return None
    if len(str(value)) > MAX_NAME:
        issues.append(lm.issue(path, f"a name of {len(str(value))} characters; at most {MAX_NAME}", _NAME_LENGTH_HINT))
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


class _OneOf:
    """One of a fixed set of words (`choices`, also offered by command-line flags)."""

    def __init__(self, choices: tuple[str, ...]):
        self.choices = choices

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        if value not in self.choices:
            issues.append(lm.issue(path, f"expected one of {', '.join(self.choices)}; got {value!r}"))
            return None
        return value


def one_of(*choices: str) -> Check:
    """One of a fixed set of words."""
    return _OneOf(choices)


def choices_of(check: Check) -> tuple[str, ...]:
    """The words a one_of checker allows (empty for any other checker)."""
    return check.choices if isinstance(check, _OneOf) else ()


class _Shell:
    """Text that runs as a shell command: variables substituted into it are shell-quoted."""

    def __init__(self, check: Check):
        self.check = check

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        return self.check(value, path, lm, issues)


def shell(check: Check) -> Check:
    """check, marking its text as a shell command (fsbench.scenario.variables quotes values put in it)."""
    return _Shell(check)


def is_shell(check: Check, path: tuple) -> bool:
    """Whether the value at path (below what check checks) is shell text, or a list of shell commands."""
    while True:
        if isinstance(check, _Shell):
            return True
        if isinstance(check, Struct):
            if not path or path[0] not in check.keys:
                return False
            check, path = check.keys[path[0]].check, path[1:]
        elif isinstance(check, _MappingOf):
            if not path:
                return False
            check, path = check.item, path[1:]
        elif isinstance(check, _ListOf):
            check, path = check.item, path[1:] if path and isinstance(path[0], int) else path
        else:
            return False


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


#: names become folder names with more after them (a run directory adds -YYYYmmddTHHMMSS, a case id
#: joins a target, a workload and sweep values): Linux allows 255 bytes per name
MAX_NAME = 100
_NAME_LENGTH_HINT = "names become folder names (a file system takes 255 bytes): shorten it"


def _good_name(name: object) -> bool:
    return isinstance(name, str) and bool(name) and name[0].isalnum() and all(
        c.isalnum() or c in "-_." for c in name
    )


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"


#: shell commands: a multi-line script (target setup, service start...), or one line (a fuse mount)
command = shell(string)
command_line = shell(line_text)

__all__ = [
    "Flag", "Issue", "Key", "Struct", "address", "anything", "boolean", "build", "choices_of", "command",
    "command_line", "doc_of", "duration", "integer", "is_shell", "line_text", "list_of", "mapping_of", "name",
    "one_of", "option", "part", "scalar", "scalar_or_list", "shell", "size", "string", "struct_of",
]


# -- one declaration: dataclass fields that are also scenario keys ---------------------------------

_NO_DEFAULT = object()


def option(check: Check, default: object = _NO_DEFAULT, *, factory: Callable[[], object] | None = None,
           doc: str = "", required: bool = False, key: str = "", convert: Callable[[Any], Any] | None = None,
           blank: object = None) -> Any:
    """A dataclass field that is also a key of the file: its checker, documentation and default.

    `key` names it in the file when the field's name differs (`setup_timeout` for `setup_timeout_s`);
    `convert` turns the checked value into the field's type (a list into a tuple); `blank` is what
    the checker gets when the key is absent (for sections whose own defaults must be filled in).
    """
    meta = {"check": check, "doc": doc, "required": required, "key": key, "convert": convert, "blank": blank}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    if default is _NO_DEFAULT:
        return field(metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Part:
    """The checker of a field that the caller of struct_of supplies (a section built from plug-ins):
    `part("target", many=True)` is a mapping of names to targets."""

    name: str
    many: bool = False

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        raise TypeError(f"the {self.name!r} part is given by struct_of(parts=...)")


def part(name: str, *, many: bool = False) -> Check:
    """A field's checker that struct_of takes from its `parts` (many: a mapping of names to it)."""
    return Part(name, many)


def struct_of(cls: type, what: str, *, more: dict[str, Key] | None = None,
              extra: Callable[[dict, tuple, LineMap, list], None] | None = None,
              parts: dict[str, Check] | None = None) -> Struct:
    """The checker of a dataclass's keys (fields declared with option()), plus `more` keys.

    A field whose checker is part(NAME) gets parts[NAME] (or a mapping of names to it).
    """
    keys: dict[str, Key] = {}
    for f in fields(cls):
        meta = f.metadata
        if "check" not in meta:
            continue
        check = meta["check"]
        if isinstance(check, Part):
            check = mapping_of((parts or {})[check.name], what=check.name) if check.many else \
                (parts or {})[check.name]
        keys[meta["key"] or f.name] = Key(check, meta["required"], meta["blank"], meta["doc"])
    keys.update(more or {})
    return Struct(keys, what, extra)


def build(cls: type, checked: dict, **given: object) -> Any:
    """An instance of cls from a checked mapping: each option() field from its key (absent: its default)."""
    kwargs: dict[str, object] = dict(given)
    for f in fields(cls):
        meta = f.metadata
        if "check" not in meta or f.name in given:
            continue
        value = checked.get(meta["key"] or f.name)
        if value is None:
            continue
        kwargs[f.name] = meta["convert"](value) if meta["convert"] else value
    return cls(**kwargs)


def doc_of(cls: type) -> dict[str, str]:
    """key -> documentation of a dataclass's option() fields (for generated reference docs)."""
    return {f.metadata["key"] or f.name: f.metadata["doc"] for f in fields(cls) if "check" in f.metadata}
