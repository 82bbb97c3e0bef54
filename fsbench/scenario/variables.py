"""Scenario variables: `${name}` in any text, `--set name=value` overrides, `by:` selections.

A variable's value may use other variables (`${base}/q`, or a `by:` naming a selection); they are
resolved whatever their order, and a cycle is an error. In shell text (target setup and teardown,
service and collector commands, a fuse mount: the keys the model marks `s.command`) a variable is
data, never code: its value is shell-quoted unless it is made of safe characters only, and a list
gives several words, each quoted; inside quotes the command has ('...' or "...") it is escaped for
those quotes, and in backquotes or a comment it is refused. Run-time placeholders (`${target.path}`,
`${secrets.NAME}`...) in a value are left for the run, which quotes them itself. Putting the values
into the scenario's text is fsbench.scenario.substitute's.
"""

from __future__ import annotations

import re

from fsbench.config.yamllines import MAX_CHARS, LineMap, YamlSyntaxError, load_yaml
from fsbench.core.errors import Issue, ScenarioError
from fsbench.scenario.substitute import FAILED, REF, as_text, too_big

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse_set(items: list[str]) -> dict[str, object]:
    """['scale=full', 'runtime=30'] -> {'scale': 'full', 'runtime': 30}; values read as YAML scalars.

    A value is read with the scenario's own bounded YAML reader (deep nesting or a huge value is a
    ScenarioError, not a crash); a list or mapping stays the text it was given as.
    """
    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError([Issue("--set", None, item, "expected KEY=VALUE", "for example --set scale=full")])
        try:
            value = load_yaml(raw, f"--set {key.strip()}")[0] if raw.strip() else ""
        except YamlSyntaxError:
            value = raw
        out[key.strip()] = raw if isinstance(value, (dict, list)) or value is None else value
    return out


def resolve_variables(data: dict, lm: LineMap, overrides: dict[str, object]) -> dict[str, object]:
    """The final value of every variable: declared default or `--set` override, `by:` selections made,
    and references to other variables expanded."""
    declared = data.get("variables") or {}
    if not isinstance(declared, dict):
        raise ScenarioError([lm.issue(("variables",), "expected a mapping of variable names to values")])
    issues: list[Issue] = []
    for key in overrides:
        if key not in declared:
            issues.append(Issue("--set", None, key, f"unknown variable {key!r}",
                                f"variables of {lm.file}: {', '.join(declared) or '(none declared)'}"))
    specs: dict[str, tuple[str, object]] = {}  # name -> (where its value comes from, the value)
    for name, spec in declared.items():
        if not _NAME.match(str(name)):
            issues.append(lm.issue(("variables", name), f"bad variable name {name!r}", "use letters, digits and _"))
        else:
            specs[name] = ("set", overrides[name]) if name in overrides else ("file", spec)
    resolver = _Resolver(specs, lm, issues)
    values = {name: resolver.value(name, ()) for name in specs}
    if issues:
        raise ScenarioError(issues)
    return values


class _Resolver:
    """Variables resolved on demand, each once, following references and `by:` in any order."""

    def __init__(self, specs: dict[str, tuple[str, object]], lm: LineMap, issues: list[Issue]):
        self.specs, self.lm, self.issues = specs, lm, issues
        self.done: dict[str, object] = {}
        self.cycles: set[frozenset] = set()
        self.budget = MAX_CHARS

    def value(self, name: str, chain: tuple[str, ...]) -> object:
        if name in self.done:
            return self.done[name]
        path = ("variables", name)
        if name in chain:
            cycle = chain[chain.index(name):] + (name,)
            if frozenset(cycle) not in self.cycles:
                self.cycles.add(frozenset(cycle))
                self.issues.append(self.lm.issue(("variables", cycle[0]),
                                                 f"variables refer to each other in a cycle: {' -> '.join(cycle)}",
                                                 "give one of them a plain value"))
            return FAILED
        origin, spec = self.specs[name]
        chain = chain + (name,)
        if origin == "file" and isinstance(spec, dict):
            spec = self._select(name, spec, chain)
        value = spec if spec is FAILED else self.expand(spec, path, chain)
        self.done[name] = value
        return value

    def _select(self, name: str, spec: dict, chain: tuple[str, ...]) -> object:
        path = ("variables", name)
        selector = spec.get("by")
        if not isinstance(selector, str) or selector not in self.specs:
            self.issues.append(self.lm.issue(path + ("by",), f"`by` must name a variable, got {selector!r}",
                                             f"variables: {', '.join(self.specs) or '(none)'}"))
            return FAILED
        choice = self.value(selector, chain)
        if choice is FAILED:
            return FAILED
        if isinstance(choice, (dict, list)):
            self.issues.append(self.lm.issue(path + ("by",), f"`by: {selector}` needs a plain value to choose with; "
                                             f"{selector} is a {'list' if isinstance(choice, list) else 'mapping'}"))
            return FAILED
        options = {str(k): v for k, v in spec.items() if k != "by"}
        if str(choice) not in options:
            self.issues.append(self.lm.issue(path, f"no value for {selector}={choice!r}",
                                             f"add one of the keys {', '.join(options)} or --set {selector}= "
                                             "one of them"))
            return FAILED
        return options[str(choice)]

    def expand(self, value: object, path: tuple, chain: tuple[str, ...]) -> object:
        """value with references to other variables replaced (a whole-text reference keeps its type)."""
        if isinstance(value, list):
            return [self.expand(v, path, chain) for v in value]
        if isinstance(value, dict):
            return {k: self.expand(v, path, chain) for k, v in value.items()}
        if not isinstance(value, str) or "${" not in value:
            return value
        failed = False

        def lookup(ref: str) -> object:
            nonlocal failed
            if ref not in self.specs:
                self.issues.append(self.lm.issue(path, f"unknown variable ${{{ref}}}",
                                                 f"variables: {', '.join(self.specs) or '(none declared)'}"))
                failed = True
                return ""
            found = self.value(ref, chain)
            failed = failed or found is FAILED
            return found

        whole = REF.fullmatch(value)
        if whole:
            return lookup(whole.group(1))
        out = REF.sub(lambda m: as_text(lookup(m.group(1)), m.group(1), path, self.lm, self.issues), value)
        self.budget -= len(out)
        if self.budget < 0:
            raise too_big(self.lm)
        return FAILED if failed else out


#: the variable a scenario's sizes are chosen by, and its choice with the seed's own sizes
SCALE, FULL = "scale", "full"


def scale_of_run(data: dict, lm: LineMap, values: dict[str, object]) -> dict | None:
    """Which scale a run used and how it differs from the full one, or None without a `scale` variable.

    {"variable": "scale", "value": "quick", "full": "full", "differs": {name: {"run": v, "full": fv}}}:
    every variable whose value in this run (`--set` overrides included) is not its value at scale full.
    """
    declared = data.get("variables") if isinstance(data, dict) else None
    if not isinstance(declared, dict) or SCALE not in values:
        return None
    out: dict = {"variable": SCALE, "value": values[SCALE], "full": FULL, "differs": {}}
    if not any(isinstance(v, dict) and v.get("by") == SCALE and FULL in map(str, v) for v in declared.values()):
        out["full"] = None  # no choice is called full: nothing to compare with
        return out
    try:
        full = resolve_variables(data, lm, {SCALE: FULL})
    except ScenarioError:
        out["full"] = None
        return out
    out["differs"] = {str(k): {"run": v, "full": full.get(k)} for k, v in values.items()
                      if k != SCALE and full.get(k) != v}
    return out
