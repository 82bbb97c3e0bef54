"""fio's options as a workload writes them: names fio 3.33 knows, options fsbench owns, values fio would misread,
and the target values fsbench writes into a job file."""

from __future__ import annotations

import difflib
import functools
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

from fsbench.api.tools import OptionIssue
from fsbench.core.shell import PLACEHOLDER
from fsbench.core.units import parse_duration, parse_size
from fsbench.tools.fio.containment import RBD_KIND, TargetPlace
from fsbench.tools.fio.jobfile import COMMENT_CHARS, canonical, value_change

#: options fsbench owns: it points every job at the case's own test directory and collects JSON
RESERVED = {"directory": "fsbench sets directory to a unique subdirectory of the target",
            "output": "fsbench writes fio's JSON to the case's raw directory",
            "output-format": "fsbench reads fio's JSON output"}
RW = {"read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "readwrite", "randrw",
      "trimwrite", "randtrimwrite"}
SIZES = ("bs", "size", "filesize", "io_size", "offset")
DURATIONS = ("runtime", "ramp_time", "startdelay")


@functools.cache
def known_options() -> frozenset[str]:
    """fio 3.33's option names and aliases."""
    text = (Path(__file__).parent / "options.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def option_issues(options: dict, prefix: str = "") -> list[OptionIssue]:
    """Each option's name and value as fio reads them: unknown names (with a suggestion), options fsbench owns,
    values fio would misread (a list, comment characters, a pattern, count, size or duration it rejects)."""
    out = []
    for key, value in options.items():
        path, option = prefix + key, canonical(key)
        if isinstance(value, list):
            out.append(OptionIssue(path, "a list in options is not a sweep",
                                   f"to run each value, move it to `sweep: {{product: {{{key}: [...]}}}}`; "
                                   "for one fio value with separators, write it as text, e.g. '4k/50:64k/50'"))
        elif key in RESERVED:
            out.append(OptionIssue(path, f"{key!r} cannot be set here: {RESERVED[key]}"))
        elif isinstance(value, str) and any(c in value for c in COMMENT_CHARS):
            out.append(OptionIssue(path, f"{key}={value!r} {value_change(value)}",
                                   "write the value without '#' and ';': a job file has no way to escape them"))
        elif key not in known_options():
            close = difflib.get_close_matches(key, known_options(), n=3)
            out.append(OptionIssue(path, f"unknown fio option {key!r}",
                                   (f"did you mean {' or '.join(map(repr, close))}? " if close else "")
                                   + "(checked against fio 3.33; options of newer fio go in a job_file)"))
        elif option == "rw" and str(value).split(":")[0] not in RW:
            out.append(OptionIssue(path, f"{key}={value!r} is not an I/O pattern fio knows",
                                   f"one of {', '.join(sorted(RW))}"))
        elif option in ("numjobs", "iodepth") and not (isinstance(value, int) and not isinstance(value, bool)
                                                         and value >= 1):
            out.append(OptionIssue(path, f"{key} must be a whole number >= 1, got {value!r}"))
        elif option in SIZES and not _size_ok(value):
            out.append(OptionIssue(path, f"{key}={value!r} is not a size",
                                   "for example 4k, 1m, 128KiB, 10g (or a range such as 4k-64k)"))
        elif option in DURATIONS and not _duration_ok(value):
            out.append(OptionIssue(path, f"{key}={value!r} is not a duration", "for example 30, 30s, 2m"))
    return out


def written_value_issues(targets: list[TargetPlace]) -> list[OptionIssue]:
    """Target values fsbench writes into the job file (a path; an image's pool, name and user) that fio
    would not read as written: cut at '#' or ';', or filled from the environment (checked with real fio:
    `directory=/x#t/...` writes into /x)."""
    out = []
    for t in targets:
        if t.kind == RBD_KIND:
            setting = {"pool": "pool", "rbdname": "image", "clientname": "user"}
            values, where = [(setting[k], v) for k, v in t.rbd or ()], "on the target's image"
        else:
            values, where = [("path", t.path)], "in the target's folder"
        for what, value in values:  # fsbench's own ${run.id}, ${target.name} are filled before fio reads them
            change = value_change(PLACEHOLDER.sub("x", value))
            if change:
                out.append(OptionIssue("", f"target {t.name}'s {what} {value!r} {change}, so fio's jobs would not "
                                           f"run {where}",
                                       f"give the target a {what} without '#', ';', '${{' or fio's words $ncpus, "
                                       "$pagesize and $mb_memory (a job file has no way to escape them)"))
    return out


@runtime_checkable
class RbdImage(Protocol):
    """What fio's rbd engine needs of an rbd-image target's settings (the rbd-image kind's have them)."""

    pool: str
    image: str
    user: str
    conf: str


def rbd_values(kind: str, settings: object) -> tuple[tuple[str, str], ...] | None:
    """The rbd engine's pool, rbdname and clientname an rbd-image target's settings give (None: not one)."""
    if kind != RBD_KIND or not isinstance(settings, RbdImage):
        return None
    return (("pool", str(settings.pool)), ("rbdname", str(settings.image)), ("clientname", str(settings.user)))


def _size_ok(value: object) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return value > 0
    text = str(value)
    try:
        for part in re.split(r"[-:,/]", text):
            if part and not part.endswith("%"):
                parse_size(part)
        return True
    except ValueError:
        return False


def _duration_ok(value: object) -> bool:
    try:
        for part in str(value).split("-"):  # startdelay takes a range: 1-3
            parse_duration(part)
        return True
    except (ValueError, TypeError):
        return False
