"""What a vdbench workload's options and definitions may hold, checked before anything runs.

Every check is on the keyword a key stands for as vdbench reads it (any case, any unambiguous start:
fsbench.tools.vdbench.keywords); a key that stands for none, or for several, is refused. Parameters
that run something (start_cmd, end_cmd, a text data_errors, an hd's mount, shell, vdbench or user,
an hd on a host that is not the target's, a wd's user class) need `allow_commands: true`.
"""

from __future__ import annotations

import posixpath
import re

from fsbench.api.tools import CheckContext, OptionIssue
from fsbench.tools.common import leaves_folder
from fsbench.tools.vdbench.keywords import Keyword
from fsbench.tools.vdbench.parmfile import (
    DURATIONS,
    HOST_LAUNCH,
    PATHS,
    REWRITTEN,
    SPECIAL,
    kind_of,
    read_key,
    runs_command,
    seconds,
    special_in,
    text_of,
    words,
)

_NAME = re.compile(r"(fsd|fwd|hd|sd|wd|rd)[A-Za-z0-9_]*\Z")
_PARAM = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
GENERAL = {"binary": "the vdbench script",
           "format_pass": "prepare (default: the first run definition's format untimed, caches dropped after) or "
                          "measured (inside the measured run, its file creations a result: seed 003's 498 files/s)",
           "data_errors": "stop after this many data errors",
           "validate": "data validation (yes/no)", "journal": "journaling (yes, recover, ...)",
           "start_cmd": "a command before the first run", "end_cmd": "a command after the last run"}
FORMAT_PASSES = ("prepare", "measured")
#: where an fsd's files (anchor) or an sd's I/O (lun) go: only the target itself, when destructive
TARGETS = {"fsd": "anchor", "sd": "lun"}
REFUSED = {"count": "count= makes numbered copies whose anchors or luns lie beside the case folder"}
JOURNAL_WORDS = {"yes", "no", "recover", "only", "noflush", "maponly", "skip_read_all", "ignore_pending"}
_SAFE_PATH = "letters, digits and / . _ - + : @ %"


def check(options: dict, jobs: dict, ctx: CheckContext) -> list[OptionIssue]:
    """Every problem of a vdbench workload's options and definitions, before anything runs."""
    commands = ctx.allow_commands
    out: list[OptionIssue] = []
    for key, value in options.items():
        out += _check_binary(value) if key == "binary" else _check_format_pass(value) if key == "format_pass" \
            else _check_general(key, value, commands)
    for name, spec in jobs.items():
        out += _check_definition(name, spec, ctx, commands)
    if not any(kind_of(n) == "rd" for n in jobs):
        out.append(OptionIssue("", "a vdbench workload needs a run definition", "add e.g. rd1: {fwd: fwd1, "
                               "fwdrate: max, format: restart, elapsed: 60, interval: 1}"))
    for tname, path, *_rest in ctx.targets:
        bad = special_in(str(path))
        if bad:
            out.append(OptionIssue("", f"target {tname}'s path {path} contains {bad}: {_breaks(str(path))}",
                                   f"give the target a path of {_SAFE_PATH}"))
    for tname, hosts in sorted(ctx.target_hosts.items()):
        for host in sorted(str(h) for h in hosts if special_in(str(h))):
            out.append(OptionIssue("", f"target {tname}'s host {host} contains {special_in(host)}, which cannot "
                                       "stand in vdbench's hd= lines",
                                   "name the host, and give its address, with letters, digits and . - _ :"))
    return out


def _check_general(key: str, value: object, commands: bool) -> list[OptionIssue]:
    word, issues = _read(key, "general", key)
    if word.unknown or (word.name and word.name not in GENERAL):
        also = f" (vdbench's {word.name}=)" if word.name else ""
        return [OptionIssue(key, f"unknown vdbench option {key!r}{also}",
                            f"known: {', '.join(GENERAL)}; definitions go under jobs (fsd1, fwd1, rd1...)")]
    if issues:
        return issues
    if word.name == "journal" and not words(value) <= JOURNAL_WORDS:
        return [OptionIssue(key, f"journal={text_of(value)}: the general journal= takes "
                                 f"{', '.join(sorted(JOURNAL_WORDS))}",
                            "where journal files go is an fsd's or sd's `journal:` (a folder in the case folder)")]
    return _check_param(key, key, "general", word.name, value, commands)


def _check_format_pass(value: object) -> list[OptionIssue]:
    if value in FORMAT_PASSES:
        return []
    return [OptionIssue("format_pass", f"format_pass={text_of(value)}: expected {' or '.join(FORMAT_PASSES)}",
                        "measured: vdbench formats inside the measured run and its file creations are a result; "
                        "prepare: the format runs untimed before it")]


def _check_binary(value: object) -> list[OptionIssue]:
    """The vdbench script: run here as a program, and across hosts its folder goes into hd=default,vdbench=."""
    if isinstance(value, str) and value:
        bad = special_in(value)
        if not bad:
            return []
        problem = f"{bad} cannot stand in a path fsbench writes into vdbench's parameter file (as " \
                  "hd=default,vdbench=its folder)"
    else:
        problem = "expected the path of the vdbench script"
    return [OptionIssue("binary", f"binary={text_of(value)}: {problem}",
                        f"give the path of the vdbench script (or vdbench when it is on PATH) with {_SAFE_PATH}")]


def _check_definition(name: str, spec: dict, ctx: CheckContext, commands: bool) -> list[OptionIssue]:
    out: list[OptionIssue] = []
    kind = kind_of(name)
    if kind is None:
        return [OptionIssue(name, f"{name!r} is not a vdbench definition name",
                            "start it with its type: fsd, fwd, rd, sd, wd or hd")]
    if not _NAME.match(name):
        out.append(OptionIssue(name, f"definition name {name!r} has characters vdbench reads as syntax",
                               "use letters, digits and _ after the type, e.g. fsd1, rd_read"))
    for key, value in spec.items():
        out += _check_key(f"{name}.{key}", kind, key, value, ctx, commands)
    return out


def _check_key(path: str, kind: str, key: str, value: object, ctx: CheckContext, commands: bool) -> list[OptionIssue]:
    """One parameter of a definition, by the keyword vdbench reads its key as."""
    word, issues = _read(path, kind, key)
    if issues:
        return issues
    if TARGETS.get(kind) == word.name:
        if _is_target_itself(str(value), ctx):
            return []
        what = "an fsd anchor" if kind == "fsd" else "an sd lun (a raw device or file)"
        return [OptionIssue(path, f"{what} at {value} is outside the case folder",
                            "leave it out (fsbench anchors every fsd in the case's folder), or make it the path "
                            "of a target with `destructive: true`")]
    if kind == "hd" and (word.name in HOST_LAUNCH or (word.name == "system" and not _target_host(str(value), ctx))):
        out: list[OptionIssue] = []
        if not commands:
            what = f"runs vdbench's slaves on {value}, which is not a host of the workload's targets" \
                if word.name == "system" else f"says how vdbench starts a program on that host ({word.name}=)"
            out.append(OptionIssue(path, f"{word.name}={value}: {what}",
                                   "if you mean it, set `allow_commands: true` on this workload"))
        return out + _check_param(path, key, kind, word.name, value, commands)
    if word.name in REFUSED:
        return [OptionIssue(path, REFUSED[word.name], "leave it out")]
    if word.name in PATHS:
        problem = leaves_folder(str(value)) or (special_in(str(value)) and f"it contains {special_in(str(value))}")
        if problem:
            return [OptionIssue(path, f"{word.name}={value} is a folder outside the case folder: {problem}",
                                "use a relative name: fsbench resolves it in the case folder")]
    return _check_param(path, key, kind, word.name, value, commands)


def _read(path: str, kind: str, key: str) -> tuple[Keyword, list[OptionIssue]]:
    """The keyword a key stands for, or why it stands for none: not a plain word, unknown, ambiguous."""
    if not _PARAM.match(key):
        return Keyword(), [OptionIssue(path, f"parameter name {key!r} is not a plain word: vdbench would read "
                                             f"{special_in(key) or 'it'} as parameter-file syntax",
                                       "write one parameter per key, e.g. `xfersize: 4k`")]
    if key.lower() == "include":
        return Keyword(), [OptionIssue(path, "include= reads another parameter file; fsbench writes the whole "
                                             "file from `jobs`", "leave it out")]
    found = read_key(kind, key)
    return found, [OptionIssue(path, found.problem, found.hint)] if found.problem else []


def _check_param(path: str, key: str, kind: str, word: str, value: object, commands: bool) -> list[OptionIssue]:
    """One key=value: what runs only with the opt-in and written so vdbench reads it whole; durations in
    whole seconds; other values without syntax characters."""
    items = value if isinstance(value, list) else [value]
    if runs_command(kind, key, value):
        if not commands:
            what = "loads a Java class of yours into vdbench" if kind == "wd" else "runs a command on the hosts"
            return [OptionIssue(path, f"{word}={text_of(value)} {what}",
                                "if you mean it, set `allow_commands: true` on this workload")]
        if any('"' in str(v) for v in items):
            return [OptionIssue(path, f"{word}: a command with '\"' cannot be quoted in the parameter file",
                                "write it without double quotes")]
        rewritten = "".join(c for c in REWRITTEN if any(c in str(v) for v in items))
        if rewritten:
            return [OptionIssue(path, f"{word}: vdbench would run another command ({_rewrites(rewritten)})",
                                "write the command without them, or put it in a script and run that")]
        return []
    if kind == "rd" and word in DURATIONS and not isinstance(value, list) and value is not None:
        secs = seconds(value)
        if secs is None or secs != int(secs) or secs < 0:
            return [OptionIssue(path, f"{word}={value!r} is not a whole number of seconds", "for example 60, 60s, 2m")]
    for item in items:
        bad = special_in(str(item)) if not isinstance(item, (bool, int, float)) else ""
        if bad:
            note = "".join(c for c in REWRITTEN if c in str(item))
            return [OptionIssue(path, f"{word}={text_of(value)}: {bad} would change the parameter file's meaning"
                                      + (f" ({_rewrites(note)})" if note else ""),
                                "a value is one word, number, size or path (several values of a general option: "
                                "a YAML list)")]
    return []


def _rewrites(chars: str) -> str:
    return f"vdbench turns {' '.join(repr(c) for c in chars)} into {' '.join(repr(REWRITTEN[c]) for c in chars)}"


def _breaks(path: str) -> str:
    """What vdbench would make of an anchor holding these characters."""
    if any(c in SPECIAL - set(REWRITTEN) or c.isspace() or not c.isprintable() for c in path):
        return "in vdbench's parameter file the anchor would end there and the rest become parameters of their own"
    rewritten = "".join(c for c in REWRITTEN if c in path)
    return f"{_rewrites(rewritten)}, so vdbench would work in another folder than the one fsbench made"


def _target_host(host: str, ctx: CheckContext) -> bool:
    """Whether host names a host (or its address) of every target of the workload."""
    hosts = ctx.target_hosts
    targets = [t.name for t in ctx.targets]
    return bool(targets) and all(host in hosts.get(t, ()) for t in targets)


def _is_target_itself(path: str, ctx: CheckContext) -> bool:
    """Whether path is, on every target of the workload, that destructive target's own path."""
    targets = ctx.targets
    return bool(targets) and all(destructive and posixpath.normpath(path) == posixpath.normpath(tpath)
                                 for _name, tpath, destructive, *_rest in targets)
