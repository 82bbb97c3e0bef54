"""fio job files read as fio reads them, with where each option came from.

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fsbench.config.files import MAX_INPUT_BYTES, read_text_bounded

# what the fio adapter, its other modules and the tests import from here: the job file's public names
from fsbench.tools.fio.jobfile_model import JobFile, JobOptions, Origin, Section, merged
from fsbench.tools.fio.jobfile_syntax import COMMENT_CHARS, ENV, canonical, spellings, strip_comment, value_change

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

    return ENV.sub(repl, line) if "${" in line else line


__all__ = ["COMMENT_CHARS", "JobFile", "JobOptions", "Origin", "Section", "canonical", "included_files", "merged",
           "parse_jobfile", "spellings", "strip_comment", "value_change"]
