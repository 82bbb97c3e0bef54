"""Registries of plug-ins: tools, target kinds, service kinds, transports; built in or from entry points.

Each registry knows the modules of fsbench's own plug-ins (each exposes `PLUGIN`) and an entry-point
group through which other packages add theirs:

    [project.entry-points."fsbench.tools"]
    elbencho = "fsbench_elbencho:PLUGIN"

A plug-in is an object with a `name` and every attribute and method of its registry's protocol
(fsbench.api.tools.ToolAdapter for tools...): one that lacks some, has a method or optional hook of
another signature than its protocol's, or a misspelt hook, is refused when it registers, with its name,
where it came from and what is wrong; a second one with the same name fails loudly too.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from functools import cache
from typing import Generic, TypeVar, cast

from fsbench.api.entry_points import PluginEntry, installed_entry_points
from fsbench.api.signatures import contract_problems, members
from fsbench.core.errors import FsbenchError

T = TypeVar("T")


class PluginError(FsbenchError):
    """A plug-in could not be loaded, or two claim one name (exit 2, named, no traceback)."""


class Registry(Generic[T]):
    """Plug-ins of one kind by name, loaded on first use."""

    def __init__(self, what: str, group: str, builtin: tuple[str, ...], protocol: type | None = None,
                 hooks: tuple[type, ...] | None = None, modules: dict[str, str] | None = None):
        """hooks: the optional hooks' Protocols; given (also empty), every method's signature is checked too.
        modules: {name: built-in module} for plug-ins whose name their module's does not spell (`s3` in
        s3_server), so that asking for them by name imports that module only."""
        self.what, self.group, self.builtin, self.protocol, self.hooks = what, group, builtin, protocol, hooks
        self.modules = modules or {}
        self._items: dict[str, T] = {}
        self._loaded = False

    def register(self, plugin: T, origin: str = "", *, built_in: bool = False) -> T:
        """Add a plug-in (fsbench's own modules do this through PLUGIN; tests may call it).

        origin says where it came from (an entry point) in the error when it is refused: a plug-in that
        lacks a member of the protocol, has one of another signature, or a misspelt optional hook.
        built_in: one of fsbench's own, whose signatures the test suite checks (contract_problems over every
        built-in plug-in) instead of each command: inspecting them was a tenth of `fsbench validate`.
        """
        where = f" ({origin})" if origin else ""
        name = getattr(plugin, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"a {self.what} plug-in{where} needs a name: {plugin!r}")
        if self.protocol is not None:
            declared = protocol_members(self.protocol)
            missing = [m for m in declared if not hasattr(plugin, m)]
            if missing:
                raise PluginError(f"the {self.what} plug-in {name!r}{where} lacks {', '.join(missing)}: a "
                                  f"{self.what} declares {', '.join(declared)} ({_qualname(self.protocol)})")
        problems = [] if built_in else self.contract_problems(plugin)
        if problems:
            raise PluginError(f"the {self.what} plug-in {name!r}{where} does not keep to its contract: "
                              + "; ".join(problems))
        if name in self._items and self._items[name] is not plugin:
            raise PluginError(f"two {self.what} plug-ins are called {name!r}{where}")
        self._items[name] = plugin
        return plugin

    def contract_problems(self, plugin: object) -> list[str]:
        """What in a plug-in differs from its protocol and hooks, one sentence each ([]: it keeps to them)."""
        return contract_problems(plugin, self.protocol, self.hooks) if self.hooks is not None else []

    def unregister(self, name: str) -> None:
        """Remove a plug-in (for tests that add one of their own)."""
        self._items.pop(name, None)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self.builtin:
            self.register(importlib.import_module(module).PLUGIN, built_in=True)
        for ep in _entry_points(self.group):
            self._load_entry_point(ep)

    def _load_entry_point(self, ep: PluginEntry) -> None:
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken third-party plug-in is named, not a traceback
            raise PluginError(f"the {self.what} plug-in {ep.name!r} ({ep.value}) cannot be loaded: {exc}") from exc
        # a module's PLUGIN, or the object named: register checks it against the protocol, hence the cast
        plugin = cast(T, getattr(obj, "PLUGIN", obj))
        self.register(plugin, f"entry point {ep.name} = {ep.value} in {self.group}")

    def _load_named(self, name: str) -> None:
        """Import only what may provide name: the built-in module of that name and entry points called so.

        Both are loaded so that a third-party plug-in claiming a built-in name still fails loudly; a name
        no module spells (`juicefs-objbench`) falls back to loading everything.
        """
        module = name.replace("-", "_")
        mine = [m for m in self.builtin if m.rsplit(".", 1)[-1] == module or self.modules.get(name) == m]
        for m in mine:
            self.register(importlib.import_module(m).PLUGIN, built_in=True)
        for ep in _entry_points(self.group):
            if ep.name == name:
                self._load_entry_point(ep)

    def get(self, name: str) -> T:
        """The plug-in called name (importing only its module when it can); KeyError naming the known ones."""
        if name not in self._items and not self._loaded:
            self._load_named(name)
        if name not in self._items:
            self._load()
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(f"unknown {self.what} {name!r}; known: {', '.join(sorted(self._items))}") from None

    def names(self) -> list[str]:
        """Names of every plug-in, sorted."""
        self._load()
        return sorted(self._items)

    def __iter__(self) -> Iterator[T]:
        self._load()
        return iter(list(self._items.values()))

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str) and name not in self._items and not self._loaded:
            self._load_named(name)
        if name not in self._items:
            self._load()
        return name in self._items


@cache
def _entry_points(group: str) -> tuple[PluginEntry, ...]:
    """The entry points of one group; the installed packages are read once per process, not once per registry."""
    return tuple(ep for ep in _all_entry_points() if ep.group == group)


@cache
def _all_entry_points() -> tuple[PluginEntry, ...]:
    return tuple(installed_entry_points())


def protocol_members(protocol: type | None) -> list[str]:
    """The attributes, properties and methods a protocol declares (its bases' too), in declaration order."""
    return list(members(protocol)) if protocol is not None else []


def _qualname(protocol: type) -> str:
    return f"{protocol.__module__}.{protocol.__name__}"
