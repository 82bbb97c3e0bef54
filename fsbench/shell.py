"""The one way fsbench runs shell text: user setup/teardown commands, with values quoted."""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$\{((?:target|run|case|host)\.[a-z_]+)\}")


def render(template: str, values: dict[str, str]) -> str:
    """Fill `${target.path}`-style placeholders, each value shell-quoted; unknown ones raise KeyError."""

    def repl(m: re.Match) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"unknown placeholder ${{{key}}}; known: {', '.join('${' + k + '}' for k in values)}")
        return shlex.quote(str(values[key]))

    return _PLACEHOLDER.sub(repl, template)


def placeholders(template: str) -> list[str]:
    """The run-time placeholders a command uses."""
    return _PLACEHOLDER.findall(template)


def sh(script: str) -> list[str]:
    """argv that runs script with POSIX sh, failing on the first failing command."""
    return ["/bin/sh", "-e", "-c", script]
