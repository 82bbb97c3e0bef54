"""The one way fsbench runs shell text: user setup/teardown commands, with values quoted."""

from __future__ import annotations

import re

from fsbench.core import shellquote
from fsbench.core.secrets import is_secret_placeholder, placeholder_env

#: run-time placeholders: ${target.path}, ${run.scratch}, ${service.port}, ${services.redis.port} ...
PLACEHOLDER = re.compile(r"\$\{((?:target|run|case|host|service)\.[a-z_]+|services\.[A-Za-z0-9_-]+\.[a-z_]+"
                         r"|secrets\.[A-Za-z0-9_-]+)\}")


def render(template: str, values: dict[str, str], *, quote: bool = True) -> str:
    """Fill run-time placeholders; shell-quoted by default (plain for config files and argv items).

    An unknown placeholder raises KeyError naming the known ones.
    """

    # quoted for where each stands: a plain word, or inside '...' / "..." the command already has
    contexts = shellquote.reference_contexts(template) if quote else {}

    def repl(m: re.Match) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"unknown placeholder ${{{key}}}; known here: "
                           f"{', '.join('${' + k + '}' for k in sorted(values) if not k.startswith('secrets.'))}")
        if not quote:
            return str(values[key])
        where = contexts.get(m.start(), shellquote.PLAIN)
        if is_secret_placeholder(key):
            # shell text gets a reference to the environment variable the secret travels in, never the value
            return shellquote.env_reference(placeholder_env(key), where)
        return shellquote.quote_for(str(values[key]), where)

    return PLACEHOLDER.sub(repl, template)


def placeholders(template: str) -> list[str]:
    """The run-time placeholders a text uses."""
    return PLACEHOLDER.findall(template)


def sh(script: str) -> list[str]:
    """argv that runs script with POSIX sh, failing on the first failing command."""
    return ["/bin/sh", "-e", "-c", script]
