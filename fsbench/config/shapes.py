"""The shapes of scenario data: mappings with fixed keys, mappings of names, lists, word choices, shell text.

Each checker takes (value, path, lm, issues), appends an Issue located at path for what is wrong, and
returns the checked value (None when it is unusable), so one pass reports every problem.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fsbench.config.yamllines import LineMap

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
    """One key of a mapping: its checker, whether it is required, its default.

    doc may be a function giving the text when a message needs it (`one of` every plug-in's name: asking
    the registry for them all imports every plug-in, which checking a scenario otherwise does not)."""

    check: "Check"
    required: bool = False
    default: object = None
    doc: str | Callable[[], str] = ""
    flag: Flag | None = None

    def text(self) -> str:
        """The key's documentation."""
        return self.doc if isinstance(self.doc, str) else self.doc()


@dataclass(frozen=True)
class PluginKeys:
    """Keys named after plug-ins (a target's `juicefs:` settings, deploy's `vdbench:`), each looked up when a
    mapping has it, so that checking a scenario imports only the plug-ins it names."""

    #: the Key of a plug-in's name (its section), None when no plug-in of that name has one
    key: Callable[[str], Key | None]
    #: every name that has a section, for the message about an unknown key (this imports every plug-in)
    names: Callable[[], list[str]]


@dataclass
class Struct:
    """A mapping with a fixed set of keys, and the keys of plug-ins; unknown keys are errors that list the
    allowed ones. A plug-in's key absent from the mapping is absent from the checked one too."""

    keys: dict[str, Key]
    what: str = "mapping"
    extra: Callable[[dict, tuple, LineMap, list], None] | None = field(default=None)
    plugin_keys: PluginKeys | None = None

    def key(self, name: str) -> Key | None:
        """The Key of a name, a fixed one or a plug-in's (None: no such key)."""
        spec = self.keys.get(name)
        if spec is None and self.plugin_keys is not None:
            spec = self.plugin_keys.key(name)
        return spec

    def allowed(self) -> list[str]:
        """Every key allowed here, the plug-ins' too."""
        return list(self.keys) + (self.plugin_keys.names() if self.plugin_keys is not None else [])

    def __call__(self, value: object, path: tuple, lm: LineMap, issues: list) -> Any:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            issues.append(lm.issue(path, f"expected a {self.what} (key: value lines), got {kind_of(value)}"))
            return None
        out: dict = {}
        for key, item in value.items():
            spec = self.key(key) if isinstance(key, str) else None
            if spec is None:
                allowed = self.allowed()
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                issues.append(lm.issue(path + (key,), f"unknown key {key!r}",
                                       f"{hint}allowed here: {', '.join(allowed)}"))
                continue
            out[key] = spec.check(item, path + (key,), lm, issues)
        for key, spec in self.keys.items():
            if key not in value:
                if spec.required:
                    issues.append(lm.issue(path, f"missing required key {key!r}", spec.text()))
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
            issues.append(lm.issue(path, f"expected a mapping of {self.what} names to settings, got {kind_of(value)}"))
            return {}
        out = {}
        for name, item in value.items():
            if self.name_rule and not good_name(name):
                issues.append(lm.issue(path + (name,), f"bad {self.what} name {name!r}",
                                       "use letters, digits, '-', '_' and '.', starting with a letter or digit"))
                continue
            if self.name_rule and len(name) > MAX_NAME:
                issues.append(lm.issue(path + (name,), f"{self.what} name of {len(name)} characters; at most "
                                                       f"{MAX_NAME}", NAME_LENGTH_HINT))
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
            issues.append(lm.issue(path, f"expected a list, got {kind_of(value)}"))
            return []
        return [self.item(v, path + (i,), lm, issues) for i, v in enumerate(value)]


def list_of(check: Check, *, allow_single: bool = False) -> Check:
    """A list whose items are checked by check (a single item is accepted if allow_single)."""
    return _ListOf(check, allow_single)


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
            spec = check.key(path[0]) if path and isinstance(path[0], str) else None
            if spec is None:
                return False
            check, path = spec.check, path[1:]
        elif isinstance(check, _MappingOf):
            if not path:
                return False
            check, path = check.item, path[1:]
        elif isinstance(check, _ListOf):
            check, path = check.item, path[1:] if path and isinstance(path[0], int) else path
        else:
            return False


#: names become folder names with more after them (a run directory adds -YYYYmmddTHHMMSS, a case id
#: joins a target, a workload and sweep values): Linux allows 255 bytes per name
MAX_NAME = 100
NAME_LENGTH_HINT = "names become folder names (a file system takes 255 bytes): shorten it"


def good_name(name: object) -> bool:
    """Whether a name may become a folder name: letters, digits, '-', '_' and '.', first a letter or digit."""
    return isinstance(name, str) and bool(name) and name[0].isalnum() and all(
        c.isalnum() or c in "-_." for c in name
    )


def kind_of(value: object) -> str:
    """What a value is, for a message: nothing, a mapping, a list, or its type and value."""
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"
