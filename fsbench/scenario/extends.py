"""Target variants: `extends: other-target` copies that target's settings, then overrides them."""

from __future__ import annotations

import copy

from fsbench.config.yamllines import LineMap
from fsbench.core.errors import ScenarioError

NOT_INHERITED = ("baseline", "extends", "description")


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def apply_extends(data: object, lm: LineMap) -> object:
    """Resolve `extends` in targets (chains allowed, cycles and unknown names are errors)."""
    if not isinstance(data, dict) or not isinstance(data.get("targets"), dict):
        return data
    targets = data["targets"]
    issues = []
    resolved: dict[str, dict] = {}

    def resolve(name: str, chain: tuple[str, ...]) -> dict | None:
        if name in resolved:
            return resolved[name]
        spec = targets.get(name)
        if not isinstance(spec, dict) or "extends" not in spec:
            return spec if isinstance(spec, dict) else None
        parent = spec["extends"]
        path = ("targets", name, "extends")
        if parent in chain or parent == name:
            issues.append(lm.issue(path, f"`extends` makes a cycle: {' -> '.join(chain + (name, parent))}"))
            return None
        if parent not in targets:
            issues.append(lm.issue(path, f"unknown target {parent!r}", f"targets: {', '.join(targets)}"))
            return None
        base = resolve(parent, chain + (name,))
        if base is None:
            return None
        inherited = {k: v for k, v in base.items() if k not in NOT_INHERITED}
        merged = _merge(inherited, {k: v for k, v in spec.items() if k != "extends"})
        resolved[name] = merged
        return merged

    out = dict(targets)
    for name in targets:
        r = resolve(name, ())
        if r is not None and isinstance(targets[name], dict) and "extends" in targets[name]:
            out[name] = r
    if issues:
        raise ScenarioError(issues)
    return {**data, "targets": out}
