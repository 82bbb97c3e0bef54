"""A job file as fio sees it: sections in order, each option with where it was set; overrides; rendering.

A job file is the ordered list of sections fio sees. Every global section adds to the defaults of the
jobs that come after it, never to those before; every other section is a job, also when its name
repeats (two `[a]` are two jobs).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fsbench.tools.fio.jobfile_syntax import ALIASES, is_global, spellings


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
        for other in spellings(key):
            if other != key and other in self.options:
                self.options.pop(other)
                self.origins.pop(other, None)
        set_option(self.options, key, value)
        if origin is not None:
            self.origins[key] = origin

    def drop(self, key: str) -> None:
        """Remove an option and its aliases."""
        for k in spellings(key):
            if k in self.options:
                self.options.pop(k)
                self.origins.pop(k, None)


def merged(*option_maps: Mapping[str, str | None]) -> dict[str, str | None]:
    """Options as fio ends up with them: aliases under the option's own name, later settings winning."""
    out: dict[str, str | None] = {}
    get = ALIASES.get
    for opts in option_maps:
        if isinstance(opts, JobOptions):
            out.update(opts.items())
            continue
        for k, v in opts.items():
            out[get(k, k)] = v
    return out


class JobOptions(Mapping[str, "str | None"]):
    """The options fio gives one job: its own over the globals before it, both by the options' own names.

    A view, not a copy: 4,096 jobs under a [global] of a thousand options would otherwise copy four
    million entries every time a plan looks at them.
    """

    __slots__ = ("own", "defaults")

    def __init__(self, own: dict[str, str | None], defaults: dict[str, str | None]):
        self.own, self.defaults = own, defaults

    def __getitem__(self, key: str) -> str | None:
        own = self.own
        return own[key] if key in own else self.defaults[key]

    def get(self, key: str, default: object = None) -> Any:
        """The option's value, or default when the job does not have it."""
        own = self.own
        return own[key] if key in own else self.defaults.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.own or key in self.defaults

    def __iter__(self) -> Iterator[str]:
        yield from self.defaults
        yield from (k for k in self.own if k not in self.defaults)

    def __len__(self) -> int:
        return len(self.defaults) + sum(1 for k in self.own if k not in self.defaults)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


@dataclass
class JobFile:
    """The sections of a job file in fio's order, repeats kept."""

    sections: list[Section] = field(default_factory=list)
    #: problems met while reading (an include that cannot be read, an unset ${VAR}), with their origin
    problems: list[tuple[Origin, str]] = field(default_factory=list)

    def copy(self) -> JobFile:
        """A copy whose sections and options can change without touching this one."""
        return JobFile([Section(s.name, dict(s.options), dict(s.origins)) for s in self.sections], list(self.problems))

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

    def job_sections(self) -> list[tuple[Section, JobOptions]]:
        """Each job's own section, and the options fio gives it: the globals before it, then its own."""
        out: list[tuple[Section, JobOptions]] = []
        defaults: dict[str, str | None] = {}
        for s in self.sections:
            if s.is_global:
                defaults = merged(defaults, s.options)  # a new dict: the jobs before keep theirs
            else:
                out.append((s, JobOptions(merged(s.options), defaults)))
        return out

    def jobs(self) -> list[tuple[str, JobOptions]]:
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
