"""Scenario variables: `${name}` in any text, `--set name=value` overrides, `by:` selections.

A variable's value may use other variables (`${base}/q`, or a `by:` naming a selection); they are
resolved whatever their order, and a cycle is an error. In shell text (target setup and teardown,
service and collector commands, a fuse mount: the keys the model marks `s.command`) a variable is
data, never code: its value is shell-quoted unless it is made of safe characters only, and a list
gives several words, each quoted; inside quotes the command has ('...' or "...") it is escaped for
those quotes, and in backquotes or a comment it is refused. Run-time placeholders (`${target.path}`,
`${secrets.NAME}`...) in a value are left for the run, which quotes them itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fsbench.config.yamllines import MAX_CHARS, LineMap, YamlSyntaxError, load_yaml
from fsbench.core import shellquote
from fsbench.core.errors import Issue, ScenarioError
from fsbench.core.shell import PLACEHOLDER

_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ANY_REF = re.compile(r"\$\{[^{}$]*\}")
_FAILED = object()  # a variable whose value could not be found (already reported)


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
            return _FAILED
        origin, spec = self.specs[name]
        chain = chain + (name,)
        if origin == "file" and isinstance(spec, dict):
            spec = self._select(name, spec, chain)
        value = spec if spec is _FAILED else self.expand(spec, path, chain)
        self.done[name] = value
        return value

    def _select(self, name: str, spec: dict, chain: tuple[str, ...]) -> object:
        path = ("variables", name)
        selector = spec.get("by")
        if not isinstance(selector, str) or selector not in self.specs:
            self.issues.append(self.lm.issue(path + ("by",), f"`by` must name a variable, got {selector!r}",
                                             f"variables: {', '.join(self.specs) or '(none)'}"))
            return _FAILED
        choice = self.value(selector, chain)
        if choice is _FAILED:
            return _FAILED
        if isinstance(choice, (dict, list)):
            self.issues.append(self.lm.issue(path + ("by",), f"`by: {selector}` needs a plain value to choose with; "
                                             f"{selector} is a {'list' if isinstance(choice, list) else 'mapping'}"))
            return _FAILED
        options = {str(k): v for k, v in spec.items() if k != "by"}
        if str(choice) not in options:
            self.issues.append(self.lm.issue(path, f"no value for {selector}={choice!r}",
                                             f"add one of the keys {', '.join(options)} or --set {selector}= "
                                             "one of them"))
            return _FAILED
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
            failed = failed or found is _FAILED
            return found

        whole = _REF.fullmatch(value)
        if whole:
            return lookup(whole.group(1))
        out = _REF.sub(lambda m: _as_text(lookup(m.group(1)), m.group(1), path, self.lm, self.issues), value)
        self.budget -= len(out)
        if self.budget < 0:
            raise _too_big(self.lm)
        return _FAILED if failed else out


def _as_text(value: object, name: str, path: tuple, lm: LineMap, issues: list[Issue]) -> str:
    """A variable's value inside a text (not shell): plain values only."""
    if isinstance(value, (list, dict)):
        issues.append(lm.issue(path, f"${{{name}}} is a {'list' if isinstance(value, list) else 'mapping'} and "
                                     "cannot be part of a text",
                               "use it as a whole value (key: ${" + name + "}), or in a shell command, where a "
                               "list gives several words"))
        return ""
    return "" if value is _FAILED else str(value)


def shell_words(value: object, context: str = shellquote.PLAIN) -> str:
    """A variable's value as shell words: quoted where needed, a list as several words.

    Inside quotes the command already has (context "'" or '"') the value is escaped for those quotes
    instead, a list joined into one text. Run-time placeholders inside it stay as they are: the run
    puts them in quoted for the place they end up in.
    """
    if isinstance(value, list):
        if context in (shellquote.SINGLE, shellquote.DOUBLE):
            return shell_words(" ".join(_flat(value)), context)
        return " ".join(shell_words(v, context) for v in value)
    text = str(value)
    if not text:
        return "''" if context not in (shellquote.SINGLE, shellquote.DOUBLE) else ""
    out, last = [], 0
    for m in PLACEHOLDER.finditer(text):
        out.append(_quote(text[last:m.start()], context))
        out.append(m.group(0))
        last = m.end()
    out.append(_quote(text[last:], context))
    return "".join(out)


def _flat(value: list) -> list[str]:
    return [w for v in value for w in (_flat(v) if isinstance(v, list) else [str(v)])]


def _quote(text: str, context: str) -> str:
    return text if not text else shellquote.quote_for(text, context)


def substitute(data: object, values: dict[str, object], lm: LineMap,
               shell: Callable[[tuple], bool] | None = None) -> object:
    """Replace `${name}` everywhere except under `variables`; a whole-string reference keeps its type.

    shell(path) tells whether the text at path is a shell command; variables put there are quoted.
    """
    issues: list[Issue] = []
    budget = [MAX_CHARS]
    out = _sub(data, values, lm, (), issues, shell or (lambda path: False), budget)
    if issues:
        raise ScenarioError(issues)
    return out


def _sub(data: object, values: dict, lm: LineMap, path: tuple, issues: list, shell: Callable[[tuple], bool],
         budget: list[int]) -> object:
    if isinstance(data, dict):
        return {k: (v if path == () and k == "variables" else _sub(v, values, lm, path + (k,), issues, shell, budget))
                for k, v in data.items()}
    if isinstance(data, list):
        return [_sub(v, values, lm, path + (i,), issues, shell, budget) for i, v in enumerate(data)]
    if not isinstance(data, str) or "${" not in data:
        return data
    in_shell = shell(path)
    contexts = shellquote.reference_contexts(data) if in_shell else {}
    if in_shell:
        _quote_context_issue(data, contexts, path, lm, issues)
    whole = _REF.fullmatch(data)
    if whole and whole.group(1) in values and not in_shell:
        value = values[whole.group(1)]
        budget[0] -= _cost(value)
        if budget[0] < 0:
            raise _too_big(lm)
        return value

    def repl(m: re.Match) -> str:
        name = m.group(1)
        if name not in values:
            issues.append(lm.issue(path, f"unknown variable ${{{name}}}",
                                   f"declare it under `variables:`; known: {', '.join(values) or '(none)'}"))
            return m.group(0)
        if in_shell:
            return shell_words(values[name], contexts.get(m.start(), shellquote.PLAIN))
        return _as_text(values[name], name, path, lm, issues)

    out = _REF.sub(repl, data)
    budget[0] -= len(out)
    if budget[0] < 0:
        raise _too_big(lm)
    return out


def _quote_context_issue(text: str, contexts: dict[int, str], path: tuple, lm: LineMap,
                         issues: list[Issue]) -> None:
    """An error where shell text puts a reference in backquotes or a comment, where no quoting holds."""
    bad = [(m.group(0), contexts[m.start()]) for m in _ANY_REF.finditer(text)
           if contexts.get(m.start()) in (shellquote.BACKQUOTE, shellquote.COMMENT)]
    if not bad:
        return
    shown = ", ".join(f"{ref} in {shellquote.NAMES[where]}" for ref, where in dict.fromkeys(bad))
    issues.append(lm.issue(path, f"{shown}: fsbench cannot quote a value there (a line break ends a comment "
                                 "and runs the rest; backquotes read the text twice)",
                           "write ${var} without quotes: fsbench quotes it; use $( ) rather than backquotes "
                           "and keep references out of comments"))


def _cost(value: object) -> int:
    """Roughly how much text a value is (a mapping or list: its parts)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return 1 + sum(_cost(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(len(str(k)) + _cost(v) for k, v in value.items())
    return 8


def _too_big(lm: LineMap) -> ScenarioError:
    return ScenarioError([lm.issue(("variables",), f"the scenario expands to more than {MAX_CHARS // 2**20} MiB "
                                                   "of text once its variables are put in",
                                   "is a big value used in many places, or inside other variables many times?")])


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
