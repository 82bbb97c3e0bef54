"""How the command line reports errors: one boundary turns fsbench's errors into a message and an exit code."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from fsbench.core.errors import FsbenchError, ScenarioError


def fail(exc: FsbenchError) -> NoReturn:
    """Print an fsbench error (secrets masked; a scenario's problems counted) and exit with its code."""
    from fsbench.core.secrets import redact

    click.echo(redact(f"error: {exc}" if not isinstance(exc, ScenarioError) else
                      f"invalid scenario ({len(exc.issues)} problem{'s' if len(exc.issues) != 1 else ''}):\n{exc}"),
               err=True)
    sys.exit(exc.exit_code)


def cannot_write(path: str, exc: OSError, option: str = "-o") -> NoReturn:
    """A file the user asked for cannot be written there (exit 2: bad input, as a bad run directory)."""
    where = exc.filename or path
    click.echo(f"error: {path}: cannot write it ({where}: {exc.strerror or exc}): give a path you can write to "
               f"with {option}", err=True)
    sys.exit(2)


def os_error(exc: OSError, output: str | None) -> NoReturn:
    """An OSError: writing the output the user named (-o), else reading or writing another file; exit 2."""
    name = str(exc.filename or "")
    if output and name and os.path.abspath(output).startswith(os.path.abspath(name)):
        cannot_write(output, exc)
    click.echo(f"error: {name or output}: {exc.strerror or exc}", err=True)
    sys.exit(2)


def warn(warnings: list[str]) -> None:
    """Print warnings on stderr, secrets masked."""
    from fsbench.core.secrets import redact

    for w in warnings:
        click.echo(redact(f"warning: {w}"), err=True)


class ErrorBoundary(click.Group):
    """A command group whose sub-commands end on an fsbench error with its message and exit code.

    The one place a library error meets the user: each command calls the library and lets its errors
    rise here, where they are printed (secrets masked) and become the exit code the error carries.
    """

    def invoke(self, ctx: click.Context) -> Any:
        """Run the sub-command; an fsbench error it raises ends the program here, as fail() says."""
        try:
            return super().invoke(ctx)
        except FsbenchError as exc:
            fail(exc)
