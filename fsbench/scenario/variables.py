"""Scenario variables: `${name}` in any text, `--set name=value` overrides, `by:` selections."""

from __future__ import annotations

import re

import yaml

from fsbench.config.yamllines import LineMap
from fsbench.errors import Issue, ScenarioError

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: namespaces resolved at run time (`${target.path}`, `${run.id}`), left untouched here


def parse_set(items: list[str]) -> dict[str, object]:
    """['scale=full', 'runtime=30'] -> {'scale': 'full', 'runtime': 30}; values read as YAML scalars."""
    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError([Issue("--set", None, item, "expected KEY=VALUE", "for example --set scale=full")])
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        out[key.strip()] = raw if isinstance(value, (dict, list)) or value is None else value
    return out


def resolve_variables(data: dict, lm: LineMap, overrides: dict[str, object]) -> dict[str, object]:
    """The final value of every variable: declared default, `--set` override, then `by:` selection."""
    declared = data.get("variables") or {}
    issues: list[Issue] = []
    if not isinstance(declared, dict):
        raise ScenarioError([lm.issue(("variables",), "expected a mapping of variable names to values")])
    for key in overrides:
        if key not in declared:
            issues.append(Issue("--set", None, key, f"unknown variable {key!r}",
                                f"variables of {lm.file}: {', '.join(declared) or '(none declared)'}"))
    values: dict[str, object] = {}
    selections: dict[str, dict] = {}
    for name, spec in declared.items():
        path = ("variables", name)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(name)):
            issues.append(lm.issue(path, f"bad variable name {name!r}", "use letters, digits and _"))
        elif name in overrides:
            values[name] = overrides[name]
        elif isinstance(spec, dict):
            selections[name] = spec
        elif isinstance(spec, list):
            issues.append(lm.issue(path, "a variable is a plain value or a `by:` selection, not a list"))
        else:
            values[name] = spec
    for name, spec in selections.items():
        path = ("variables", name)
        selector = spec.get("by")
        if selector not in values:
            issues.append(lm.issue(path + ("by",), f"`by` must name a plain variable, got {selector!r}",
                                   f"plain variables: {', '.join(values) or '(none)'}"))
            continue
        choice = values[selector]
        options = {str(k): v for k, v in spec.items() if k != "by"}
        if str(choice) not in options:
            issues.append(lm.issue(path, f"no value for {selector}={choice!r}",
                                   f"add one of the keys {', '.join(options)} or --set {selector}= one of them"))
            continue
        values[name] = options[str(choice)]
    if issues:
        raise ScenarioError(issues)
    return values


def substitute(data: object, values: dict[str, object], lm: LineMap, path: tuple = ()) -> object:
    """Replace `${name}` everywhere except under `variables`; a whole-string reference keeps its type."""
    issues: list[Issue] = []
    out = _sub(data, values, lm, path, issues)
    if issues:
        raise ScenarioError(issues)
    return out


def _sub(data: object, values: dict, lm: LineMap, path: tuple, issues: list) -> object:
    if isinstance(data, dict):
        return {k: (v if path == () and k == "variables" else _sub(v, values, lm, path + (k,), issues))
                for k, v in data.items()}
    if isinstance(data, list):
        return [_sub(v, values, lm, path + (i,), issues) for i, v in enumerate(data)]
    if not isinstance(data, str) or "${" not in data:
        return data
    whole = _REF.fullmatch(data)
    if whole and whole.group(1) in values:
        return values[whole.group(1)]

    def repl(m: re.Match) -> str:
        if m.group(1) not in values:
            issues.append(lm.issue(path, f"unknown variable ${{{m.group(1)}}}",
                                   f"declare it under `variables:`; known: {', '.join(values) or '(none)'}"))
            return m.group(0)
        return str(values[m.group(1)])

    return _REF.sub(repl, data)
