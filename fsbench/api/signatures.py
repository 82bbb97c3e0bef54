"""A plug-in checked against its protocol at registration: each method's parameters, each optional hook's,
and public names one letter or two away from a hook (a misspelt hook would otherwise be silently ignored)."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from typing import Any, Generic, Protocol

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
#: how close a public name must be to a hook's to be taken for a misspelling of it
MISSPELT = 0.85


def members(protocol: type) -> dict[str, Any]:
    """The public members a protocol declares (its protocol bases' too): name -> function, property or None."""
    out: dict[str, Any] = {}
    for base in reversed(protocol.__mro__):
        if base in (object, Protocol, Generic) or not getattr(base, "_is_protocol", False):
            continue
        for name in getattr(base, "__annotations__", {}):
            out.setdefault(name, None)
        for name, value in vars(base).items():
            if callable(value) or isinstance(value, property):
                out[name] = value
    return {k: v for k, v in out.items() if not k.startswith("_")}


def contract_problems(plugin: object, protocol: type | None, hooks: tuple[type, ...]) -> list[str]:
    """What in plugin differs from its protocol and the hooks it has: one sentence each ([]: none)."""
    declared: dict[str, Any] = {}
    for spec in ((protocol,) if protocol is not None else ()) + hooks:
        declared.update(members(spec))
    out = []
    for name, spec in declared.items():
        if not hasattr(plugin, name):
            continue  # a missing required member is the caller's message; a missing hook is no hook
        out += _member_problem(plugin, name, spec)
    hook_names = [n for h in hooks for n in members(h)]
    for name in sorted(n for n in dir(plugin) if not n.startswith("_") and n not in declared):
        close = difflib.get_close_matches(name, hook_names, n=1, cutoff=MISSPELT)
        if close:
            out.append(f"it has {name!r}, which is no hook: did you mean {close[0]!r}?")
    return out


def _member_problem(plugin: object, name: str, spec: Any) -> list[str]:
    value = getattr(plugin, name)
    if isinstance(spec, property) or spec is None:
        if inspect.ismethod(value) or inspect.isfunction(value):
            return [f"{name} is a method, its protocol declares a value"]
        return []
    if not callable(value):
        return [f"{name} is {type(value).__name__} {value!r}, its protocol declares a method {_show(name, spec)}"]
    why = signature_problem(value, spec)
    return [f"{name}{_show_impl(value)} does not take what {_show(name, spec)} is given: {why}"] if why else []


def signature_problem(impl: Callable[..., Any], spec: Callable[..., Any]) -> str:
    """Why impl (bound) cannot be called as spec (unbound, with self) is; '' when it can."""
    try:
        got = list(inspect.signature(impl).parameters.values())
    except (TypeError, ValueError):
        return ""  # a builtin or C callable shows no signature: nothing to compare
    want = list(inspect.signature(spec).parameters.values())[1:]  # without self
    var_pos = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in got)
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in got)
    by_name = {p.name: p for p in got}
    positional = [p for p in got if p.kind in _POSITIONAL]
    for i, w in enumerate(want):
        if w.kind in _POSITIONAL:
            if i >= len(positional):
                if var_pos:
                    continue
                return f"it has no parameter {w.name!r}"
            g = positional[i]
            if g.name != w.name and not (g.kind is inspect.Parameter.POSITIONAL_ONLY or var_kw):
                return f"its parameter {i + 1} is {g.name!r}, not {w.name!r}"
        else:
            named = by_name.get(w.name)
            if named is None:
                if var_kw:
                    continue
                return f"it has no keyword parameter {w.name!r}"
            g = named
        if w.default is not inspect.Parameter.empty and g.default is inspect.Parameter.empty:
            return f"its {g.name!r} needs a value, which callers may leave out"
    wanted = {w.name for w in want}
    extra = [p.name for p in got[len([w for w in want if w.kind in _POSITIONAL]):]
             if p.kind in (*_POSITIONAL, inspect.Parameter.KEYWORD_ONLY) and p.name not in wanted
             and p.default is inspect.Parameter.empty]
    return f"it also needs {', '.join(map(repr, extra))}, which callers do not give" if extra else ""


def _show(name: str, spec: Callable[..., Any]) -> str:
    return f"{name}{inspect.signature(spec)}".split(" ->")[0]


def _show_impl(impl: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(impl)).split(" ->")[0]
    except (TypeError, ValueError):
        return "(...)"
