"""fio job files read as fio reads them, with where each option came from; overrides; rendering.

fio (3.33, checked by hand) drops blank lines and lines starting with `;` or `#`, cuts every other
line at its first `;` or `#` (so `runtime=3600  # one hour` is 3600, and `filename_format=a#b` is
`a`), reads `include FILE` (relative to the including file), and replaces `${NAME}` with the
environment variable NAME of the machine that reads the job file (in client/server mode, the
client). This reader does the same, so what fsbench checks and estimates is what fio will run.

A job file is the ordered list of sections fio sees. Every section whose name starts with `global`
(fio compares 6 characters: `[globalx]` is one) adds to the defaults of the jobs that come after
it, never to those before; every other section is a job, also when its name repeats (two `[a]`
are two jobs). `fio --showcmd FILE` prints this list; a test compares it with this reader.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.config.files import read_text_bounded

MAX_INCLUDE_DEPTH = 16
_ENV = re.compile(r"\$\{([^}]+)\}")  # fio takes any name up to the brace (`${a.b}` too)
#: fio's option aliases (`fio --cmdhelp=OPTION` prints them): alias -> the option it sets
ALIASES = {"blocksize": "bs", "blockalign": "ba", "blocksize_unaligned": "bs_unaligned",
           "blocksize_range": "bsrange", "disable_bw": "disable_bw_measurement", "fill_fs": "fill_device",
           "io_limit": "io_size", "iodepth_batch_submit": "iodepth_batch",
           "iodepth_batch_complete": "iodepth_batch_complete_min", "iomem": "mem", "nr_files": "nrfiles",
           "fileoffset": "offset", "ratecycle": "rate_cycle", "ratemin": "rate_min", "timeout": "runtime",
           "readwrite": "rw", "ss": "steadystate", "ss_dur": "steadystate_duration",
           "ss_ramp": "steadystate_ramp_time", "wait_for_previous": "stonewall"}


def canonical(key: str) -> str:
    """The option an option name sets (`timeout` -> `runtime`)."""
    return ALIASES.get(key, key)


def is_global(name: str) -> bool:
    """Whether fio reads a section of this name as global options (it compares the first 6 characters)."""
    return name.startswith("global")


@dataclass(frozen=True)
class Origin:
    """Where an option was set: a job file and line, or a scenario key (line None)."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(eq=False)
class Section:
    """One `[name]` of a job file: its own options in order, and where each was set."""

    name: str
    options: dict[str, str | None] = field(default_factory=dict)
    origins: dict[str, Origin] = field(default_factory=dict)

    def __iter__(self) -> Iterator:
        """`for name, options in jobfile.sections`."""
        return iter((self.name, self.options))

    @property
    def is_global(self) -> bool:
        """Whether fio reads it as global options."""
        return is_global(self.name)

    def set(self, key: str, value: object, origin: Origin | None = None) -> None:
        """Set an option from a YAML value (true: bare flag, false/None: removed); its aliases go."""
        for other in [k for k in self.options if k != key and canonical(k) == canonical(key)]:
            self.options.pop(other)
            self.origins.pop(other, None)
        set_option(self.options, key, value)
        if origin is not None:
            self.origins[key] = origin

    def drop(self, key: str) -> None:
        """Remove an option and its aliases."""
        for k in [k for k in self.options if canonical(k) == canonical(key)]:
            self.options.pop(k)
            self.origins.pop(k, None)


def merged(*option_maps: Mapping[str, str | None]) -> dict[str, str | None]:
    """Options as fio ends up with them: aliases under the option's own name, later settings winning."""
    out: dict[str, str | None] = {}
    for opts in option_maps:
        for k, v in opts.items():
            out[canonical(k)] = v
    return out


@dataclass
class JobFile:
    """The sections of a job file in fio's order, repeats kept."""

    sections: list[Section] = field(default_factory=list)
    #: problems met while reading (an include that cannot be read, an unset ${VAR}), with their origin
    problems: list[tuple[Origin, str]] = field(default_factory=list)

    def section(self, name: str) -> dict[str, str | None]:
        """The options of the first section of that name, created at the end (global: at the front)."""
        for s in self.sections:
            if s.name == name:
                return s.options
        return self._add(name).options

    def _add(self, name: str) -> Section:
        s = Section(name)
        if is_global(name):
            self.sections.insert(0, s)
        else:
            self.sections.append(s)
        return s

    def has_section(self, name: str) -> bool:
        """Whether the section exists (without creating it)."""
        return any(s.name == name for s in self.sections)

    def leading_global(self) -> Section:
        """A global section before every job (added at the front when the file does not start with one)."""
        if self.sections and self.sections[0].is_global:
            return self.sections[0]
        s = Section("global")
        self.sections.insert(0, s)
        return s

    def globals(self) -> list[Section]:
        """Every global section, in order."""
        return [s for s in self.sections if s.is_global]

    def job_names(self) -> list[str]:
        """Names of the job sections, one per job (a repeated name is another job)."""
        return [s.name for s in self.sections if not s.is_global]

    def job_sections(self) -> list[tuple[Section, dict[str, str | None]]]:
        """Each job's own section, and the options fio gives it: the globals before it, then its own."""
        out: list[tuple[Section, dict[str, str | None]]] = []
        defaults: dict[str, str | None] = {}
        for s in self.sections:
            if s.is_global:
                defaults = merged(defaults, s.options)
            else:
                out.append((s, merged(defaults, s.options)))
        return out

    def jobs(self) -> list[tuple[str, dict[str, str | None]]]:
        """Each job's name and options (the globals before it, then its own; aliases by their option)."""
        return [(s.name, opts) for s, opts in self.job_sections()]

    def origin(self, section: str, key: str) -> Origin | None:
        """Where the first section of that name set key."""
        return next((s.origins.get(key) for s in self.sections if s.name == section), None)

    def set(self, section: str, key: str, value: object, origin: Origin | None = None) -> None:
        """Set an option in every section of that name (one is added when none exists)."""
        if is_global(section):
            found = [self.leading_global()]
        else:
            found = [s for s in self.sections if s.name == section] or [self._add(section)]
        for s in found:
            s.set(key, value, origin)

    def override(self, options: Mapping[str, object], origin: Origin | None = None) -> None:
        """Set options for every job: in a leading [global], and gone (aliases too) from every other section."""
        for key, value in options.items():
            for s in self.sections:
                s.drop(key)
            self.leading_global().set(key, value, origin)

    def render(self) -> str:
        """The job file text fio reads."""
        lines: list[str] = []
        for s in self.sections:
            lines.append(f"[{s.name}]")
            lines.extend(k if v is None else f"{k}={v}" for k, v in s.options.items())
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
    """Parse a job file as fio does; options before any section go to a leading [global].

    `source` names the file in origins and resolves includes; `env` expands `${NAME}` (default:
    this process's environment); `read` reads included files (default: from disk).
    """
    jf = JobFile()
    _read_into(jf, text, source, os.environ if env is None else env, read or _read_text, [None], 0)
    return jf


def _read_text(path: Path) -> str:
    return read_text_bounded(path)  # `include /dev/zero` or a huge file is refused, not read


def _read_into(jf: JobFile, text: str, source: str, env: Mapping[str, str], read: Callable[[Path], str],
               current: list[Section | None], depth: int) -> None:
    for no, raw in enumerate(text.splitlines(), start=1):
        origin = Origin(source, no)
        line = strip_comment(raw)
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = Section(line[1:-1])  # fio keeps blanks inside the brackets: `[ a ]` is job " a "
            jf.sections.append(section)
            current[0] = section
            continue
        if line.startswith("include ") or line.startswith("include\t"):
            _include(jf, line.split(None, 1)[1].strip(), origin, env, read, current, depth)
            continue
        line = _expand(jf, line, env, origin)
        here = current[0] if current[0] is not None else jf.leading_global()
        current[0] = here
        key, sep, value = line.partition("=")
        key = key.strip()
        here.options[key] = value.strip() if sep else None
        here.origins[key] = origin


def _include(jf: JobFile, name: str, origin: Origin, env: Mapping[str, str], read: Callable[[Path], str],
             current: list[Section | None], depth: int) -> None:
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
