"""Dataclass fields that are also scenario keys: option() declares one, struct_of and build derive the rest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from fsbench.config.shapes import Check, Key, PluginKeys, Struct, mapping_of
from fsbench.config.yamllines import LineMap

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
              parts: dict[str, Check] | None = None, plugin_keys: PluginKeys | None = None) -> Struct:
    """The checker of a dataclass's keys (fields declared with option()), plus `more` keys and the plug-ins'.

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
    return Struct(keys, what, extra, plugin_keys)


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
