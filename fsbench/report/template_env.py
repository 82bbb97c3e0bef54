"""Where report templates render: Jinja's immutable sandbox, fsbench's own templates and a team's folder.

A template is untrusted input (a folder received with a run, a colleague's house style): in a plain Jinja
environment `cycler.__init__.__globals__.os` or `''.__class__.__mro__[1].__subclasses__()` reached os and
subprocess, as root. The sandbox refuses every `_` attribute and the internals of functions and frames; the
immutable one also refuses methods that change lists and dicts; and the template sees data only (dicts,
lists, text, numbers: `data_only`), never an object with methods of its own. docs/report.md, "What a
template may do".
"""

from __future__ import annotations

import dataclasses
import os
import stat
import traceback
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from fsbench.core.errors import FsbenchError
from fsbench.report.summary_page import ratio_text
from fsbench.report.tables import command_line
from fsbench.report.template_files import FolderLoader

PACKAGE_TEMPLATES = Path(__file__).parent / "templates"


def environment(templates: Path | None = None) -> jinja2.Environment:
    """Templates from `templates` first (read by FolderLoader: no links, plain files), then the packaged
    ones; `fsbench/NAME` is always the packaged one (so a team's report.html.j2 can extend fsbench's and
    replace only some blocks). Nothing is read from the working directory."""
    own = jinja2.FileSystemLoader(str(PACKAGE_TEMPLATES))  # fsbench's own files: trusted, no links in them
    loaders: list[jinja2.BaseLoader] = [jinja2.PrefixLoader({"fsbench": own}, delimiter="/")]
    if templates is not None:
        loaders.append(FolderLoader(templates))
    env = ImmutableSandboxedEnvironment(loader=jinja2.ChoiceLoader([*loaders, own]),
                                        autoescape=jinja2.select_autoescape(["html", "j2"]),
                                        trim_blocks=True, lstrip_blocks=True, bytecode_cache=bytecode_cache())
    env.filters["command_line"] = command_line  # a client's script shows its mount command, the rest folded
    env.filters["ratio_text"] = ratio_text
    return env


def bytecode_cache() -> jinja2.BytecodeCache | None:
    """The templates compiled once per user, not on every report (0.13 s of each `fsbench run`): Jinja's cache in
    $XDG_CACHE_HOME/fsbench/templates (~/.cache/...), a folder of the user's own that no one else may write
    (compiled templates are Python code); each entry is used only while its template's text is unchanged.
    None (compile every time) where that folder cannot be made or is not the user's alone."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "fsbench", "templates")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
        return None
    return jinja2.FileSystemBytecodeCache(folder)


def data_only(value: object) -> object:
    """The value as a template may see it: dataclasses as dicts, containers copied, the rest as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # a dataclass's fields by their names: any dataclass a template gets, so read by name
        return {f.name: data_only(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: data_only(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(data_only(v) for v in value) if type(value) in (list, tuple) else value
    return value


def render(env: jinja2.Environment, name: str, context: dict) -> str:
    """The template rendered with the context as data; an error names the template's file and line."""
    try:
        return env.get_template(name).render(**{k: data_only(v) for k, v in context.items()})
    except SecurityError as exc:
        raise FsbenchError(f"{_where(exc, name)}: the report template does something a template may not ({exc}): "
                           "a template may only show the report's data with Jinja's tags and filters (docs/report.md"
                           ", What a template may do)") from None
    except jinja2.TemplateNotFound as exc:
        raise FsbenchError(f"{_where(exc, name)}: no template {exc.name!r} in the templates folder or fsbench's own: "
                           "a template includes only files inside its folder (no '..'; a leading '/' is the "
                           "folder's own)") from None
    except jinja2.TemplateError as exc:  # a team's template: say which file and line
        raise FsbenchError(f"{_where(exc, name)}: the report template does not render: {exc}; fix the template "
                           "(the names a template may use are in docs/report.md, Templates)") from None


def _where(exc: jinja2.TemplateError, name: str) -> str:
    """file:line of the error: a syntax error's own, else the last template frame of its traceback."""
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return f"{exc.filename or name}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.endswith(".py")]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else f"{name}:?"
