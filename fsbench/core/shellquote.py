"""Where a `${...}` stands in shell text (a plain word, inside '...' or "...") and how to put a value there.

fsbench puts values into shell commands (scenario variables at load, run-time placeholders at run).
A value shell-quoted for a plain word is wrong inside quotes the command already has: inside "..."
the single quotes are literal and `$( )` runs, inside '...' the quoting is turned inside out. So the
quoting follows the place: each reference is quoted for the context it stands in.
"""

from __future__ import annotations

import re
import shlex

#: a plain word, inside single quotes, inside double quotes, inside backquotes, in a comment
PLAIN, SINGLE, DOUBLE, BACKQUOTE, COMMENT = "", "'", '"', "`", "#"
NAMES = {SINGLE: "single quotes", DOUBLE: "double quotes", BACKQUOTE: "backquotes", COMMENT: "a comment"}

_ANY_REF = re.compile(r"\$\{[^{}$]*\}")


def reference_contexts(text: str) -> dict[int, str]:
    """Start offset of each `${...}` in shell text -> the context it stands in (PLAIN, SINGLE, ...).

    A small POSIX sh reader: quotes, backslashes, comments, and $( ) or ( ), inside which quoting starts
    afresh (so "$(cmd ${x})" is a plain word again). Good enough for a command line; a text the shell
    itself would reject (an unclosed quote) is the shell's to report.
    """
    out: dict[int, str] = {}
    stack: list[str] = [PLAIN]  # PLAIN, SINGLE, DOUBLE, BACKQUOTE or '(' (a plain level closed by ')')
    i, n = 0, len(text)
    while i < n:
        ch, top = text[i], stack[-1]
        if text.startswith("${", i):
            m = _ANY_REF.match(text, i)
            if m:
                out[i] = top if top in (SINGLE, DOUBLE, BACKQUOTE) else PLAIN
                i = m.end()
                continue
        if top == SINGLE:
            if ch == "'":
                stack.pop()
        elif ch == "\\":
            i += 1  # the next character is taken as it is (in "..." only $ ` " \ matter; harmless either way)
        elif text.startswith("$(", i):
            stack.append("(")
            i += 1
        elif ch == "`":
            if top == BACKQUOTE:
                stack.pop()
            else:
                stack.append(BACKQUOTE)
        elif top == DOUBLE:
            if ch == '"':
                stack.pop()
        elif ch in "'\"":
            stack.append(ch)
        elif ch == "(":
            stack.append("(")
        elif ch == ")" and top == "(":
            stack.pop()
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            # a value with a line break would end the comment and run the rest
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.update((m.start(), COMMENT) for m in _ANY_REF.finditer(text, i, end))
            i = end
            continue
        i += 1
    return out


def quote_for(text: str, context: str) -> str:
    """text as data in that context: one shell word, or the inside of the quotes it stands in."""
    if context == DOUBLE:
        return re.sub(r'([\\$`"])', r"\\\1", text)
    if context == SINGLE:
        return text.replace("'", "'\"'\"'")
    quoted = shlex.quote(text)  # ordinary values (letters, digits, _ @ % + = : , . / -) stay as they are
    if context == BACKQUOTE:  # read once more for backslashes before the command inside is parsed
        return re.sub(r"([\\`$])", r"\\\1", quoted)
    if context == COMMENT:  # a line break would end the comment; validation refuses references there
        return quoted.replace("\n", " ")
    return quoted


def env_reference(name: str, context: str) -> str:
    """A reference to environment variable name that expands to one word, whatever the context."""
    if context == DOUBLE:
        return "${" + name + "}"
    if context == SINGLE:
        return "'\"${" + name + "}\"'"
    if context == BACKQUOTE:
        return '"\\${' + name + '}"'
    return f'"${name}"'
