"""vdbench's parameter file: what a definition may hold, how it is written, and its format pass.

A parameter file is lines of `type=name,key=value,...`: a ',' starts the next parameter, '=' splits
one, '(' ')' hold a list, '"' quotes, '*' and '#' start comments and '$' or '!' a variable. So names
and keys are plain words and values carry none of those characters; target paths (anchors) neither.
Parameters that run commands (start_cmd, end_cmd, a text data_errors, an hd's mount, shell, vdbench
or user, an hd on a host that is not the target's) need the workload's `allow_commands: true`.
"""

from __future__ import annotations

import math
import posixpath
import re

from fsbench.tools.base import OptionIssue
from fsbench.tools.common import leaves_folder
from fsbench.units import parse_duration

KINDS = ("hd", "sd", "wd", "fsd", "fwd", "rd")
_NAME = re.compile(r"(fsd|fwd|hd|sd|wd|rd)[A-Za-z0-9_]*\Z")
_PARAM = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: characters that end a value or start another parameter, a list, a quoted text, a comment or a variable
SPECIAL = frozenset(',=()"\'*#$!;\\')
GENERAL = {"binary": "the vdbench script", "data_errors": "stop after this many data errors",
           "validate": "data validation (yes/no)", "journal": "journaling (yes, recover, ...)",
           "start_cmd": "a command before the first run", "end_cmd": "a command after the last run"}
#: parameters whose value is a command vdbench runs through a shell
COMMANDS = {"start_cmd", "startcmd", "end_cmd", "endcmd", "mount"}
#: data_errors is a count, a (count, seconds) pair or `remove`, else a command run at the first error
ERROR_ACTIONS = {"data_errors", "dataerrors"}
#: how vdbench starts its slaves on a host: each runs a program there
HOST_LAUNCH = {"shell", "vdbench", "user"}
#: folders vdbench writes into: resolved in the case folder, like the anchors
PATHS = {"journal"}
REFUSED = {"include": "include= reads another parameter file; fsbench writes the whole file from `jobs`",
           "count": "count= makes numbered copies whose anchors or luns lie beside the case folder",
           "mask": ""}
#: command outputs vdbench understands in a start_cmd/end_cmd list (they stay unquoted)
COMMAND_WORDS = {"cons", "sum", "log", "master", "slave"}
DURATIONS = {"elapsed", "warmup", "interval", "pause"}
JOURNAL_WORDS = {"yes", "no", "recover", "only", "noflush", "maponly", "skip_read_all", "ignore_pending"}
#: list values of a run definition that are not loops (everything else runs once per value)
_NOT_LOOPS = {"fwd", "wd", "sd", "format", "operations", "operation", "openflags", "distribution"}


def kind_of(name: str) -> str | None:
    """fsd, fwd, hd, sd, wd or rd: the type a definition's name starts with."""
    m = re.match(r"(fsd|fwd|hd|sd|wd|rd)", name)
    return m.group(1) if m else None


def check(options: dict, jobs: dict, ctx: dict) -> list[OptionIssue]:
    """Every problem of a vdbench workload's options and definitions, before anything runs."""
    commands = bool(ctx.get("allow_commands"))
    out: list[OptionIssue] = []
    for key, value in options.items():
        if key not in GENERAL and key not in ("startcmd", "endcmd", "dataerrors"):
            out.append(OptionIssue(key, f"unknown vdbench option {key!r}", f"known: {', '.join(GENERAL)}; definitions "
                                   "go under jobs (fsd1, fwd1, rd1...)"))
        elif key == "journal" and not words(value) <= JOURNAL_WORDS:
            out.append(OptionIssue(key, f"journal={_text(value)}: the general journal= takes "
                                        f"{', '.join(sorted(JOURNAL_WORDS))}",
                                   "where journal files go is an fsd's or sd's `journal:` (a folder in the case "
                                   "folder)"))
        elif key != "binary":
            out += _check_param(key, key, value, commands)
    for name, spec in jobs.items():
        out += _check_definition(name, spec, ctx, commands)
    if not any(kind_of(n) == "rd" for n in jobs):
        out.append(OptionIssue("", "a vdbench workload needs a run definition", "add e.g. rd1: {fwd: fwd1, "
                               "fwdrate: max, format: restart, elapsed: 60, interval: 1}"))
    for tname, path, *_rest in ctx.get("targets") or []:
        bad = special_in(str(path))
        if bad:
            out.append(OptionIssue("", f"target {tname}'s path {path} contains {bad}: in vdbench's parameter file "
                                       "the anchor would end there and the rest become parameters of their own",
                                   "give the target a path of letters, digits and / . _ - + : @ %"))
    return out


def _check_definition(name: str, spec: dict, ctx: dict, commands: bool) -> list[OptionIssue]:
    out: list[OptionIssue] = []
    kind = kind_of(name)
    if kind is None:
        return [OptionIssue(name, f"{name!r} is not a vdbench definition name",
                            "start it with its type: fsd, fwd, rd, sd, wd or hd")]
    if not _NAME.match(name):
        out.append(OptionIssue(name, f"definition name {name!r} has characters vdbench reads as syntax",
                               "use letters, digits and _ after the type, e.g. fsd1, rd_read"))
    for key, value in spec.items():
        path = f"{name}.{key}"
        if key in ("anchor", "lun"):
            what = "an fsd anchor" if key == "anchor" else "an sd lun (a raw device or file)"
            if not _is_target_itself(str(value), ctx):
                out.append(OptionIssue(path, f"{what} at {value} is outside the case folder",
                                       "leave it out (fsbench anchors every fsd in the case's folder), or make "
                                       "it the path of a target with `destructive: true`"))
            continue
        if kind == "hd" and (key in HOST_LAUNCH or (key == "system" and not _target_host(str(value), ctx))):
            if not commands:
                what = f"runs vdbench's slaves on {value}, which is not a host of the workload's targets" \
                    if key == "system" else f"says how vdbench starts a program on that host ({key}=)"
                out.append(OptionIssue(path, f"{key}={value}: {what}",
                                       "if you mean it, set `allow_commands: true` on this workload"))
            out += _check_param(path, key, value, commands)
            continue
        if key in REFUSED and (key != "mask" or "/" in str(value)):
            out.append(OptionIssue(path, REFUSED[key] or f"{key}= with '/' names files outside the fsd's folders",
                                   "leave it out"))
            continue
        if key in PATHS:
            problem = _outside(str(value))
            if problem:
                out.append(OptionIssue(path, f"{key}={value} is a folder outside the case folder: {problem}",
                                       "use a relative name: fsbench resolves it in the case folder"))
                continue
        out += _check_param(path, key, value, commands)
    return out


def _check_param(path: str, key: str, value: object, commands: bool) -> list[OptionIssue]:
    """One key=value: a plain key, a value without syntax characters; commands only with the opt-in."""
    if not _PARAM.match(key):
        return [OptionIssue(path, f"parameter name {key!r} is not a plain word: vdbench would read "
                                  f"{special_in(key) or 'it'} as parameter-file syntax",
                            "write one parameter per key, e.g. `xfersize: 4k`")]
    if key in COMMANDS or (key in ERROR_ACTIONS and not _error_count(value)):
        if not commands:
            return [OptionIssue(path, f"{key}={_text(value)} runs a command on the hosts",
                                "if you mean it, set `allow_commands: true` on this workload")]
        items = value if isinstance(value, list) else [value]
        if any('"' in str(v) for v in items):
            return [OptionIssue(path, f"{key}: a command with '\"' cannot be quoted in the parameter file",
                                "write it without double quotes")]
        return []
    if key in DURATIONS and not isinstance(value, list) and value is not None:
        seconds = _seconds(value)
        if seconds is None or seconds != int(seconds) or seconds < 0:
            return [OptionIssue(path, f"{key}={value!r} is not a whole number of seconds",
                                "for example 60, 60s, 2m")]
    items = value if isinstance(value, list) else [value]
    for item in items:
        bad = special_in(str(item)) if not isinstance(item, (bool, int, float)) else ""
        if bad:
            return [OptionIssue(path, f"{key}={_text(value)}: {bad} would change the parameter file's meaning",
                                "a value is one word, number, size or path (several values of a general option: "
                                "a YAML list)")]
    return []


def special_in(text: str) -> str:
    """The parameter-file syntax characters text contains, quoted for a message ('' when none)."""
    found = sorted({c for c in text if c in SPECIAL or c.isspace() or not c.isprintable()})
    return " ".join(repr(c) for c in found)


def render(case_id: str, options: dict, jobs: dict, test_dir: str, note: str = "",
           hosts: list[str] | tuple[str, ...] = ()) -> str:
    """The parameter file: a header, general parameters, fsbench's hd lines (`hosts`), then the hd, sd/fsd,
    wd/fwd and rd definitions, in the order vdbench requires."""
    lines = [f"* generated by fsbench for case {case_id}{note}"]
    commands = [f"{k}" for k in options if runs_command(k, options[k])]
    commands += [f"{n}.{k}" for n, spec in jobs.items() for k in spec
                 if runs_command(k, spec[k]) or (kind_of(n) == "hd" and k in HOST_LAUNCH)]
    if commands:
        lines.append(f"* runs commands (allow_commands): {', '.join(commands)}")
    lines += [f"{k}={_value(k, v)}" for k, v in options.items() if k != "binary"]
    lines += hosts
    fsds = [n for n in jobs if kind_of(n) == "fsd"]
    for kind in KINDS:
        for name, spec in jobs.items():
            if kind_of(name) != kind:
                continue
            spec = dict(spec)
            if kind == "fsd" and "anchor" not in spec:
                spec["anchor"] = test_dir if len(fsds) == 1 else posixpath.join(test_dir, name)
            for key in PATHS & set(spec):
                spec[key] = posixpath.join(test_dir, str(spec[key]))
            params = ",".join(f"{k}={_value(k, v)}" for k, v in spec.items())
            lines.append(f"{kind}={name}{',' + params if params else ''}")
    return "\n".join(lines) + "\n"


def run_seconds(jobs: dict) -> float:
    """elapsed + warmup of every run definition, times its loops (each list value is a run of its own)."""
    total = 0.0
    for name, spec in jobs.items():
        if kind_of(name) != "rd":
            continue
        runs = math.prod(len(v) for k, v in spec.items() if isinstance(v, list) and k not in _NOT_LOOPS)
        elapsed, warmup = _seconds(spec.get("elapsed", 30)), _seconds(spec.get("warmup", 0))
        total += ((30.0 if elapsed is None else elapsed) + (warmup or 0.0)) * runs
    return total


def runs_command(key: str, value: object) -> bool:
    return key in COMMANDS or (key in ERROR_ACTIONS and not _error_count(value))


def _value(key: str, v: object) -> str:
    if key in DURATIONS and not isinstance(v, list):
        seconds = _seconds(v)
        if seconds is not None and seconds == int(seconds):
            return str(int(seconds))  # vdbench wants whole seconds: '1m' is written 60
    if runs_command(key, v):
        items = v if isinstance(v, list) else [v]
        quoted = [str(x) if str(x) in COMMAND_WORDS else f'"{x}"' for x in items]
        return "(" + ",".join(quoted) + ")" if isinstance(v, list) else quoted[0]
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return "(" + ",".join(_value("", x) for x in v) + ")"
    return str(v)


def words(value: object) -> set[str]:
    items = value if isinstance(value, list) else [value]
    return {("yes" if x else "no") if isinstance(x, bool) else str(x).strip().lower() for x in items}


def _error_count(value: object) -> bool:
    """Whether data_errors is a count, (count, seconds), remove or (remove, seconds): no command."""
    items = value if isinstance(value, list) else [value]
    return all(isinstance(x, int) and not isinstance(x, bool) or str(x).isdigit() or str(x) == "remove"
               for x in items)


def _seconds(value: object) -> float | None:
    try:
        return parse_duration(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _text(value: object) -> str:
    return "(" + ",".join(map(str, value)) + ")" if isinstance(value, list) else str(value)


def _outside(value: str) -> str:
    return leaves_folder(value) or (special_in(value) and f"it contains {special_in(value)}")


def _target_host(host: str, ctx: dict) -> bool:
    """Whether host names a host (or its address) of every target of the workload."""
    hosts = ctx.get("target_hosts") or {}
    targets = [t[0] for t in ctx.get("targets") or []]
    return bool(targets) and all(host in hosts.get(t, ()) for t in targets)


def _is_target_itself(path: str, ctx: dict) -> bool:
    """Whether path is, on every target of the workload, that destructive target's own path."""
    targets = ctx.get("targets") or []
    return bool(targets) and all(destructive and posixpath.normpath(path) == posixpath.normpath(tpath)
                                 for _name, tpath, destructive, *_rest in targets)
