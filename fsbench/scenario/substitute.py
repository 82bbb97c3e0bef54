"""`${name}` put into the scenario's text: a whole-value reference keeps its type, text gets the value
as text, and in shell text (the keys the model marks `s.command`) the value is shell-quoted for the
quotes around it; in backquotes or a comment it is refused. What the expansion makes is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fsbench.config.yamllines import MAX_CHARS, LineMap
from fsbench.core import shellquote
from fsbench.core.errors import Issue, ScenarioError
from fsbench.core.shell import PLACEHOLDER

#: a reference to a scenario variable
REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ANY_REF = re.compile(r"\$\{[^{}$]*\}")
#: a variable whose value could not be found (already reported)
FAILED = object()


def as_text(value: object, name: str, path: tuple, lm: LineMap, issues: list[Issue]) -> str:
    """A variable's value inside a text (not shell): plain values only."""
    if isinstance(value, (list, dict)):
        issues.append(lm.issue(path, f"${{{name}}} is a {'list' if isinstance(value, list) else 'mapping'} and "
                                     "cannot be part of a text",
                               "use it as a whole value (key: ${" + name + "}), or in a shell command, where a "
                               "list gives several words"))
        return ""
    return "" if value is FAILED else str(value)


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
    whole = REF.fullmatch(data)
    if whole and whole.group(1) in values and not in_shell:
        value = values[whole.group(1)]
        budget[0] -= _cost(value)
        if budget[0] < 0:
            raise too_big(lm)
        return value

    def repl(m: re.Match) -> str:
        name = m.group(1)
        if name not in values:
            issues.append(lm.issue(path, f"unknown variable ${{{name}}}",
                                   f"declare it under `variables:`; known: {', '.join(values) or '(none)'}"))
            return m.group(0)
        if in_shell:
            return shell_words(values[name], contexts.get(m.start(), shellquote.PLAIN))
        return as_text(values[name], name, path, lm, issues)

    out = REF.sub(repl, data)
    budget[0] -= len(out)
    if budget[0] < 0:
        raise too_big(lm)
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


def too_big(lm: LineMap) -> ScenarioError:
    """The error of a scenario whose variables expand past MAX_CHARS of text."""
    return ScenarioError([lm.issue(("variables",), f"the scenario expands to more than {MAX_CHARS // 2**20} MiB "
                                                   "of text once its variables are put in",
                                   "is a big value used in many places, or inside other variables many times?")])
