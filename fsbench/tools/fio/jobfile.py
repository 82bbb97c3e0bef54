"""fio job files read as fio reads them, with where each option came from; overrides; rendering.

fio (3.33, checked by hand) drops blank lines and lines starting with `;` or `#`, cuts every other
line at its first `;` or `#` (so `runtime=3600  # one hour` is 3600, and `filename_format=a#b` is
`a`), reads `include FILE` (relative to the including file), and replaces `${NAME}` with the
environment variable NAME of the machine that reads the job file (in client/server mode, the
client). This reader does the same, so what fsbench checks and estimates is what fio will run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

MAX_INCLUDE_DEPTH = 16
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Origin:
    """Where an option was set: a job file and line, or a scenario key (line None)."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class JobFile:
    """Ordered sections of `key=value` or bare `flag` lines; [global] first when present."""

    sections: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)
    #: problems met while reading (an include that cannot be read, an unset ${VAR}), with their origin
    problems: list[tuple[Origin, str]] = field(default_factory=list)

    def section(self, name: str) -> dict[str, str | None]:
        """The named section, created at the end (global at the front) when missing."""
        for n, found in self.sections:
            if n == name:
                return found
        opts: dict[str, str | None] = {}
        if name == "global":
            self.sections.insert(0, (name, opts))
        else:
            self.sections.append((name, opts))
        return opts

    def has_section(self, name: str) -> bool:
        """Whether the section exists (without creating it)."""
        return any(n == name for n, _ in self.sections)

    def job_names(self) -> list[str]:
        """Names of the job sections (not global)."""
        return [n for n, _ in self.sections if n != "global"]

    def jobs(self) -> list[tuple[str, dict[str, str | None]]]:
        """Each job section with [global]'s options under its own (what fio gives that job)."""
        glob = dict(self.section("global")) if self.has_section("global") else {}
        return [(n, {**glob, **opts}) for n, opts in self.sections if n != "global"]

    def origin(self, section: str, key: str) -> Origin | None:
        """Where section's key was set."""
        return self.origins.get((section, key))

    def set(self, section: str, key: str, value: object, origin: Origin | None = None) -> None:
        """Set an option from a YAML value (true: bare flag, false/None: removed), noting its origin."""
        opts = self.section(section)
        set_option(opts, key, value)
        if origin is not None:
            self.origins[(section, key)] = origin

    def override(self, options: dict[str, object], origin: Origin | None = None) -> None:
        """Set options in [global] and drop them from job sections, so the override wins everywhere."""
        for key, value in options.items():
            for name, opts in self.sections:
                if name != "global":
                    opts.pop(key, None)
            self.set("global", key, value, origin)

    def render(self) -> str:
        """The job file text fio reads."""
        lines: list[str] = []
        for name, opts in self.sections:
            lines.append(f"[{name}]")
            lines.extend(k if v is None else f"{k}={v}" for k, v in opts.items())
            lines.append("")
        return "\n".join(lines)


def set_option(opts: dict[str, str | None], key: str, value: object) -> None:
    """YAML value -> fio text: true is a bare flag, false removes the option."""
    if value is True:
        opts[key] = None
    elif value is False or value is None:
        opts.pop(key, None)
    else:
        opts[key] = str(value)


def strip_comment(line: str) -> str:
    """What fio keeps of a line: up to its first `;` or `#`, blanks trimmed."""
    cut = min((i for i in (line.find(";"), line.find("#")) if i >= 0), default=len(line))
    return line[:cut].strip()


def parse_jobfile(text: str, source: str = "<job file>", *, env: Mapping[str, str] | None = None,
                  read: Callable[[Path], str] | None = None) -> JobFile:
    """Parse a job file as fio does; options before any section go to [global].

    `source` names the file in origins and resolves includes; `env` expands `${NAME}` (default:
    this process's environment); `read` reads included files (default: from disk).
    """
    jf = JobFile()
    _read_into(jf, text, source, os.environ if env is None else env, read or _read_text, [None], 0)
    return jf


def _read_text(path: Path) -> str:
    return path.read_text()


def _read_into(jf: JobFile, text: str, source: str, env: Mapping[str, str], read: Callable[[Path], str],
               current: list[str | None], depth: int) -> None:
    for no, raw in enumerate(text.splitlines(), start=1):
        origin = Origin(source, no)
        line = strip_comment(raw)
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip()
            current[0] = name
            jf.section(name)
            continue
        if line.startswith("include ") or line.startswith("include\t"):
            _include(jf, line.split(None, 1)[1].strip(), origin, env, read, current, depth)
            continue
        line = _expand(jf, line, env, origin)
        section = current[0] if current[0] is not None else "global"
        opts = jf.section(section)
        key, sep, value = line.partition("=")
        key = key.strip()
        opts[key] = value.strip() if sep else None
        jf.origins[(section, key)] = origin


def _include(jf: JobFile, name: str, origin: Origin, env: Mapping[str, str], read: Callable[[Path], str],
             current: list[str | None], depth: int) -> None:
    if depth >= MAX_INCLUDE_DEPTH:
        jf.problems.append((origin, f"include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH} (a loop?)"))
        return
    base = Path(origin.file).parent if not origin.file.startswith("<") else Path(".")
    path = Path(name) if Path(name).is_absolute() else base / name
    try:
        text = read(path)
    except OSError as exc:
        jf.problems.append((origin, f"include {name}: cannot read {path}: {exc.strerror or exc}"))
        return
    _read_into(jf, text, str(path), env, read, current, depth + 1)


def _expand(jf: JobFile, line: str, env: Mapping[str, str], origin: Origin) -> str:
    def repl(m: re.Match) -> str:
        if m.group(1) in env:
            value = env[m.group(1)]
            if any(c in value for c in "\n\r\0"):  # it would add lines (options) to the job file
                jf.problems.append((origin, f"${{{m.group(1)}}} holds a line break: refused"))
                return ""
            return value
        jf.problems.append((origin, f"${{{m.group(1)}}} is not set in the environment (fio would read it there)"))
        return m.group(0)

    return _ENV.sub(repl, line) if "${" in line else line
