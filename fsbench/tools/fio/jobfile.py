"""fio job files read as fio reads them, with where each option came from; overrides; rendering.

fio (3.33, checked by hand) drops blank lines and lines starting with `;` or `#`, cuts every other
line at its first `;` or `#` (so `runtime=3600  # one hour` is 3600, and `filename_format=a#b` is
`a`), reads `include FILE` (relative to the including file), and replaces `${NAME}` with the
environment variable NAME of the machine that reads the job file (in client/server mode, the
client). This reader does the same, so what fsbench checks and estimates is what fio will run.

What a job file may cost is bounded (so a hostile one is refused in well under a second): includes
(depth, count and bytes read), sections (fio itself runs at most about 4,088 jobs), option lines and
options per section. Reading stops at the first bound passed, with a problem that names it.

A job file is the ordered list of sections fio sees. Every section whose name starts with `global`
(fio compares 6 characters: `[globalx]` is one) adds to the defaults of the jobs that come after
it, never to those before; every other section is a job, also when its name repeats (two `[a]`
are two jobs). `fio --showcmd FILE` prints this list; a test compares it with this reader.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsbench.config.files import MAX_INPUT_BYTES, read_text_bounded

MAX_INCLUDE_DEPTH = 16
#: `include` lines followed in all (a few files including each other would otherwise fan out 4^15 reads)
MAX_INCLUDES = 256
#: text read in all, the job file and every include together
MAX_TOTAL_BYTES = MAX_INPUT_BYTES
#: job sections: fio 3.33 stops at about 4,088 jobs ("maximum number of jobs reached", checked)
MAX_JOBS = 4096
#: global sections (fio has no limit; a job file needs a few)
MAX_GLOBALS = 4096
#: option lines in all (4,096 jobs of 16 options)
MAX_OPTION_LINES = 65536
#: different options one section sets, and all global sections together (fio 3.33 knows about 300)
MAX_SECTION_OPTIONS = 1024
_ENV = re.compile(r"\$\{([^}]+)\}")  # fio takes any name up to the brace (`${a.b}` too)
#: fio's option aliases (`fio --cmdhelp=OPTION` prints them): alias -> the option it sets
ALIASES: dict[str, str] = {"blocksize": "bs", "blockalign": "ba", "blocksize_unaligned": "bs_unaligned",
           "blocksize_range": "bsrange", "disable_bw": "disable_bw_measurement", "fill_fs": "fill_device",
           "io_limit": "io_size", "iodepth_batch_submit": "iodepth_batch",
           "iodepth_batch_complete": "iodepth_batch_complete_min", "iomem": "mem", "nr_files": "nrfiles",
           "fileoffset": "offset", "ratecycle": "rate_cycle", "ratemin": "rate_min", "timeout": "runtime",
           "readwrite": "rw", "ss": "steadystate", "ss_dur": "steadystate_duration",
           "ss_ramp": "steadystate_ramp_time", "wait_for_previous": "stonewall"}


#: option -> every name that sets it (itself and its aliases)
SPELLINGS: dict[str, tuple[str, ...]] = {
    option: (option, *(a for a, o in ALIASES.items() if o == option)) for option in set(ALIASES.values())}
#: what fio does to a value in a job file: cut at these characters (there is no escape for them)
COMMENT_CHARS = "#;"
#: words fio replaces in every option value (case-sensitive; checked: `$ncpus` anywhere fails the job)
KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")


def canonical(key: str) -> str:
    """The option an option name sets (`timeout` -> `runtime`)."""
    return ALIASES.get(key, key)


def spellings(key: str) -> tuple[str, ...]:
    """Every name that sets the option key sets (`runtime`, `timeout`)."""
    option = canonical(key)
    return SPELLINGS.get(option, (option,))


def value_change(value: str) -> str | None:
    """What fio would do to this text as a value in a job file, or None when it reads it as written.

    fio cuts a line at its first `#` or `;` (no escape exists), fills `${NAME}` from the environment
    of the host that reads the job file, and replaces `$ncpus`, `$pagesize` and `$mb_memory`.
    """
    for c in COMMENT_CHARS:
        if c in value:
            return f"holds {c!r}: fio cuts a job-file line at its first '#' or ';' and would read " \
                   f"{strip_comment(value)!r}"
    if _ENV.search(value):
        return "holds ${...}: fio would fill it from the environment of the host that reads the job file"
    for word in KEYWORDS:
        if word in value:
            return f"holds {word!r}: fio replaces it in every value (and then fails to read the value)"
    return None


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


def strip_comment(line: str) -> str:
    """What fio keeps of a line: up to its first `;` or `#`, blanks trimmed."""
    return line.partition("#")[0].partition(";")[0].strip()  # cut at one, then the other: the first wins


def parse_jobfile(text: str, source: str = "<job file>", *, env: Mapping[str, str] | None = None,
                  read: Callable[[Path], str] | None = None) -> JobFile:
    """Parse a job file as fio does; options before any section go to a leading [global].

    `source` names the file in origins and resolves includes; `env` expands `${NAME}` (default:
    this process's environment); `read` reads included files (default: from disk). Reading stops at
    the first of the bounds above that the file passes, with a problem saying which.
    """
    if env is None and read is None:
        # a plan reads one job file for every case and every estimate: read once, copied after
        return _cached(text, source, tuple(sorted(os.environ.items()))).copy()
    return _parse(text, source, os.environ if env is None else env, read or _read_text)


@functools.lru_cache(maxsize=16)
def _cached(text: str, source: str, env: tuple[tuple[str, str], ...]) -> JobFile:
    return _parse(text, source, dict(env), _read_text)


def _parse(text: str, source: str, env: Mapping[str, str], read: Callable[[Path], str]) -> JobFile:
    jf = JobFile()
    reader = _Reader(jf, env, read)
    try:
        reader.read(text, source, 0)
    except _Stop as stop:
        jf.problems.append((stop.origin, stop.message))
    return jf


def _read_text(path: Path) -> str:
    return read_text_bounded(path)  # `include /dev/zero` or a huge file is refused, not read


def included_files(text: str, source: str) -> dict[Path, str]:
    """Every file a job file includes (nested ones too), in reading order, with the text read from it.

    What a resume compares (fsbench.scenario.inputs): an include is part of the workload as much as
    the job file. Includes that cannot be read are left out (validation reports them).
    """
    seen: dict[Path, str] = {}

    def read(path: Path) -> str:
        text = read_text_bounded(path)
        seen.setdefault(path, text)
        return text

    parse_jobfile(text, source, read=read)
    return seen


class _Stop(Exception):
    """A bound passed: reading stops there."""

    def __init__(self, origin: Origin, message: str):
        super().__init__(message)
        self.origin, self.message = origin, message


@dataclass
class _Reader:
    """One parse: the file being filled, where options go, and what has been spent of each bound."""

    jf: JobFile
    env: Mapping[str, str]
    read_file: Callable[[Path], str]
    current: Section | None = None
    includes: int = 0
    chars: int = 0
    lines: int = 0
    jobs: int = 0
    globals: int = 0
    #: the options all global sections set together (every later job gets them)
    global_options: set[str] = field(default_factory=set)

    def read(self, text: str, source: str, depth: int) -> None:
        self.chars += len(text)
        if self.chars > MAX_TOTAL_BYTES:
            raise _Stop(Origin(source), f"the job file and its includes hold more than {MAX_TOTAL_BYTES // 2**20} "
                                        "MiB of text together: a job file is a page of options")
        for no, raw in enumerate(text.splitlines(), start=1):
            line = strip_comment(raw)
            if line:
                self._line(line, Origin(source, no), depth)

    def _line(self, line: str, origin: Origin, depth: int) -> None:
        if line.startswith("[") and line.endswith("]"):
            self._section(Section(line[1:-1]), origin)  # fio keeps blanks inside: `[ a ]` is job " a "
            return
        if line.startswith("include ") or line.startswith("include\t"):
            self._include(line.split(None, 1)[1].strip(), origin, depth)
            return
        self.lines += 1
        if self.lines > MAX_OPTION_LINES:
            raise _Stop(origin, f"more than {MAX_OPTION_LINES:,} option lines: a job file needs far fewer "
                                "(fio runs at most about 4,088 jobs)")
        line = _expand(self.jf, line, self.env, origin)
        if self.current is None:
            self.current = self.jf.leading_global()
            self.globals += 1
        here = self.current
        key, sep, value = line.partition("=")
        key = key.strip()
        here.options[key] = value.strip() if sep else None
        here.origins[key] = origin
        if len(here.options) > MAX_SECTION_OPTIONS:
            raise _Stop(origin, f"section [{here.name}] sets more than {MAX_SECTION_OPTIONS:,} different options "
                                "(fio 3.33 knows about 300)")
        if here.is_global:
            self.global_options.add(canonical(key))
            if len(self.global_options) > MAX_SECTION_OPTIONS:
                raise _Stop(origin, f"the global sections set more than {MAX_SECTION_OPTIONS:,} different options "
                                    "together (fio 3.33 knows about 300)")

    def _section(self, section: Section, origin: Origin) -> None:
        if section.is_global:
            self.globals += 1
            if self.globals > MAX_GLOBALS:
                raise _Stop(origin, f"more than {MAX_GLOBALS:,} global sections: a job file needs a few")
        else:
            self.jobs += 1
            if self.jobs > MAX_JOBS:
                raise _Stop(origin, f"more than {MAX_JOBS:,} jobs: fio 3.33 runs at most about 4,088 "
                                    "(numjobs clones included); split them into workloads")
        self.jf.sections.append(section)
        self.current = section

    def _include(self, name: str, origin: Origin, depth: int) -> None:
        if depth >= MAX_INCLUDE_DEPTH:
            self.jf.problems.append((origin, f"include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH} "
                                             "(a loop?)"))
            return
        self.includes += 1
        if self.includes > MAX_INCLUDES:
            raise _Stop(origin, f"include {name}: more than {MAX_INCLUDES} includes in all (files that include "
                                "each other many times?)")
        base = Path(origin.file).parent if not origin.file.startswith("<") else Path(".")
        path = Path(name) if Path(name).is_absolute() else base / name
        try:
            text = self.read_file(path)
        except OSError as exc:
            self.jf.problems.append((origin, f"include {name}: cannot read {path}: {exc.strerror or exc}"))
            return
        self.read(text, str(path), depth + 1)


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
