"""Where a fio job does I/O, and whether that stays inside the case's own folder on the target.

fsbench points every job at the case's folder on the target (`directory=`). A job file or an option
can still name other places: `filename` (absolute names, `..`, raw devices), `directory` and
`filename_format` (absolute or `..`), `opendir`, log and trace files, mmap'ed buffers in a file, and
`${NAME}` in any of them, which fio fills from the environment of the host it runs on. Each is refused
unless it stays inside the case folder, or the target is `destructive: true` and the path is that
target's own device or file.

Engines are allowed from a list: those that do file I/O in the folder (FILE_ENGINES) anywhere; those
that address a device (DEVICE_ENGINES) only on a destructive target, and only its own device; fio's
rbd engine only on rbd-image targets (made for it, never a destructive device, which would not stop
it from writing to an image a file system is mounted from), and there only on the target's image;
engines that reach another system (REMOTE_ENGINES) never. Running commands or loading code (the
`exec` engine, `external:`, an engine given as a file, unknown engines, `exec_prerun`, triggers),
and changing the host (`cgroup`, `ioscheduler`) need `allow_commands: true` (the host changes also
pass on a destructive target).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from fsbench.tools.fio.jobfile import JobFile, Origin, Section, canonical, merged, spellings
from fsbench.tools.fio.option_reach import (
    COMMAND_OPTIONS,
    DEVICE_ENGINES,
    FILE_ENGINES,
    HOST_OPTIONS,
    LOG_OPTIONS,
    PATH_OPTIONS,
    RBD_KIND,
    RBD_OPTIONS,
    WATCHED,
    engine_kind,
    split_paths,
)

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_VAR = re.compile(r"\$\{([^}]*)\}")
COMMANDS_HINT = "if you mean it, set `allow_commands: true` on this workload; `fsbench plan --show` then lists it"


@dataclass(frozen=True)
class TargetPlace:
    """What containment needs of a target: its path, whether it may be written raw, its kind, and for an
    rbd-image target the rbd engine's options it sets itself (pool, rbdname, clientname; None: unknown)."""

    name: str
    path: str
    destructive: bool = False
    kind: str = "directory"
    rbd: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Escape:
    """One way a job leaves the case folder: where it was set, the option, why, what to do."""

    section: str
    option: str
    origin: Origin | None
    message: str
    hint: str


def _escapes_folder(path: str) -> bool:
    norm = posixpath.normpath(path)
    return norm == ".." or norm.startswith("../")


def _is_target_itself(path: str, targets: list[TargetPlace]) -> bool:
    """Whether an absolute path is, on every target of the workload, that destructive target's own path."""
    return bool(targets) and all(t.destructive and posixpath.normpath(path) == posixpath.normpath(t.path)
                                 for t in targets)


@dataclass(frozen=True)
class _Where:
    """The workload's targets, as the rules need them."""

    targets: list[TargetPlace]
    allow_commands: bool

    @property
    def names(self) -> str:
        return ", ".join(t.name for t in self.targets) or "its targets"

    @property
    def destructive(self) -> bool:
        return bool(self.targets) and all(t.destructive for t in self.targets)

    @property
    def rbd_images(self) -> bool:
        return bool(self.targets) and all(t.kind == RBD_KIND for t in self.targets)


def find_escapes(jf: JobFile, targets: list[TargetPlace], *, allow_commands: bool = False) -> list[Escape]:
    """Every place where a job of jf would do I/O (or run a command, or change the host) outside its case folder."""
    out: list[Escape] = []
    where = _Where(targets, allow_commands)
    for s in jf.sections:
        if not s.is_global and ("/" in s.name or s.name.strip() in (".", "..") or _CONTROL.search(s.name)):
            first = next(iter(s.options), "")
            out.append(Escape(s.name, "", s.origins.get(first) if first else None,
                              f"job name [{s.name}] would put fio's files ({s.name}.0.0) outside the case folder",
                              "name jobs without '/'"))
        for key, value in s.options.items():
            if canonical(key) not in WATCHED:
                continue  # most options: nothing to check, and a job file may hold tens of thousands
            for message, hint in _problems(key, value, where):
                out.append(Escape(s.name, key, s.origins.get(key), message, hint))
    if not where.destructive:
        return out  # device engines are refused where they are set, above
    setters: dict[str, Section] = {}  # option -> the last global section so far that sets it
    seen = set(out)
    for s in jf.sections:
        if s.is_global:
            setters.update((canonical(k), s) for k in s.options)
            continue
        for key, message, hint in _device_engine_problems(merged(_defaults(setters), s.options), where):
            section = s if _spelling(s, key) in s.options else setters.get(key, s)
            escape = Escape(section.name, key, section.origins.get(_spelling(section, key)), message, hint)
            if escape not in seen:
                seen.add(escape)
                out.append(escape)
    return out


def _defaults(setters: dict[str, Section]) -> dict[str, str | None]:
    """The options a job gets from the global sections before it (each from the last that set it)."""
    return {key: section.options[_spelling(section, key)] for key, section in setters.items()}


def _spelling(section: Section, key: str) -> str:
    """How a section spells an option (an alias, or the option's own name)."""
    return next((k for k in spellings(key) if k in section.options), key)


def _device_engine_problems(opts: Mapping[str, str | None], where: _Where) -> list[tuple[str, str, str]]:
    """A device engine addresses what its filename names: on a destructive target that is its own device only."""
    engine = opts.get("ioengine") or ""
    if engine_kind(engine) != "device" or not where.destructive:
        return []  # off a destructive target the engine itself is refused, where it is set
    key = "libblkio_path" if engine == "libblkio" else "filename"
    paths = split_paths(opts.get(key) or "")
    if all(p.startswith("/") and _is_target_itself(p, where.targets) for p in paths):
        return []  # none (fsbench sets the target's device) or the target's own
    shown = opts.get(key) or "(none)"
    return [("ioengine", f"ioengine={engine} addresses the device {key} names ({shown}), which is not the device "
                         f"of {where.names}",
             f"leave {key} out (fsbench sets it to the target's device) or set it to the target's path")]


def _problems(key: str, value: str | None, where: _Where) -> list[tuple[str, str]]:
    text = value or ""
    option = canonical(key)
    inside = "fsbench runs every job in the case's own folder on the target"
    if option in PATH_OPTIONS and not (option in COMMAND_OPTIONS and where.allow_commands):
        unknown = [m.group(0) for m in _VAR.finditer(text)]
        if unknown:
            return [(f"{key}={text}: fio would replace {unknown[0]} with the environment of the host it runs on, "
                     f"which fsbench cannot check on {where.names}",
                     "write the path itself (relative to the case folder); for a value that changes between runs "
                     "use a scenario variable (`variables:` or `--set`), which fsbench fills in before checking")]
    if option in COMMAND_OPTIONS:
        return [] if where.allow_commands else [(f"{key}={text} runs a command on the host", COMMANDS_HINT)]
    if option == "ioengine":
        return _engine_problems(key, text, where)
    if option in HOST_OPTIONS:
        if where.destructive or where.allow_commands:
            return []
        return [(f"{key}={text} {HOST_OPTIONS[option]} (target {where.names})".replace("= ", " "),
                 "use it only on targets with `destructive: true` or with `allow_commands: true` on the workload; "
                 "or make that change in the target's setup")]
    if option in RBD_OPTIONS and where.rbd_images:
        return _rbd_option_problems(key, text, where)
    if option == "directory":
        bad = [p for p in split_paths(text) if p.startswith("/") or _escapes_folder(p)]
        return [(f"directory={p} points outside the case folder on {where.names}",
                 f"{inside}; remove this line (a relative folder such as `data` is allowed)") for p in bad]
    if option == "filename":
        return _filename_problems(text, where, inside)
    if option == "filename_format" and (text.startswith("/") or _escapes_folder(text) or "/../" in text):
        return [(f"filename_format={text} points outside the case folder on {where.names}",
                 f"{inside}: use a relative pattern")]
    if option == "opendir" and not (text.startswith("/") and _is_target_itself(text, where.targets)):
        return [(f"opendir={text} reads files outside the case folder on {where.names}",
                 "remove it, or make that folder a destructive target's path")]
    if option in ("read_iolog", "iolog", "replay_redirect") and not where.destructive:
        return [(f"{key}={text} replays I/O onto the devices or files the log names, not the case folder on "
                 f"{where.names}", "use it only on targets with `destructive: true`")]
    if option in LOG_OPTIONS and (text.startswith("/") or _escapes_folder(text) or "/../" in text):
        return [(f"{key}={text} writes its log outside the case's raw folder (target {where.names})",
                 "use a relative name: the file then lands in raw/<case>/<host>/")]
    if option == "mem" and ":" in text:
        path = text.split(":", 1)[1]
        if path.startswith("/") or _escapes_folder(path):
            return [(f"{key}={text} maps a file outside the case folder on {where.names}",
                     "drop the path (fio then uses its own)")]
    if option in ("donorname", "libblkio_path") and (text.startswith("/") or _escapes_folder(text)) \
            and not _is_target_itself(text, where.targets):
        return [(f"{key}={text} is outside the case folder on {where.names}", f"{inside}: use a relative name")]
    return []


def _filename_problems(text: str, where: _Where, inside: str) -> list[tuple[str, str]]:
    out = []
    for p in split_paths(text):
        if p.startswith("/"):
            if not _is_target_itself(p, where.targets):
                raw = " (a device)" if p.startswith("/dev/") else ""
                out.append((f"filename={p}{raw} is outside the case folder on {where.names}",
                            f"{inside}: use a relative name (e.g. filename=data), or, to test a device or "
                            "file itself, make it the target's path and set `destructive: true` on it"))
        elif _escapes_folder(p):
            out.append((f"filename={p} climbs out of the case folder on {where.names}", f"{inside}: drop the '..'"))
    return out


def _engine_problems(key: str, text: str, where: _Where) -> list[tuple[str, str]]:
    kind = engine_kind(text)
    on = f"on {where.names}"
    if kind == "file":
        return []
    if kind == "code":
        if where.allow_commands:
            return []
        return [(f"{key}={text} runs a command or loads code on the host of {where.names}", COMMANDS_HINT)]
    if kind == "rbd":
        if where.rbd_images:
            return []
        return [(f"{key}={text} writes to an RBD image, not to files in the case folder {on}",
                 "use an `kind: rbd-image` target (fsbench then sets ioengine=rbd, pool, rbdname and clientname "
                 "itself); never point it at an image a file system is mounted from")]
    if kind == "device":
        if where.destructive:
            return []
        return [(f"{key}={text} addresses a device, not files in the case folder {on}",
                 "use it only on a target with `destructive: true` whose path is that device")]
    if kind == "remote":
        return [(f"{key}={text} does its I/O on another system (a server, a cluster, the network), not in the "
                 f"case folder {on}", "mount that system as a target and use a file engine there, e.g. "
                 "ioengine=libaio or psync")]
    if where.allow_commands:
        return []
    return [(f"{key}={text} is not an engine fsbench knows to keep its I/O in the case folder {on}",
             f"file engines allowed everywhere: {', '.join(FILE_ENGINES)}; device engines "
             f"({', '.join(DEVICE_ENGINES)}) on a destructive device target; rbd on rbd-image targets; to run "
             "another engine unchecked, set `allow_commands: true` on the workload")]


def _rbd_option_problems(key: str, text: str, where: _Where) -> list[tuple[str, str]]:
    option = canonical(key)
    for t in where.targets:
        own = dict(t.rbd) if t.rbd is not None else None
        if own is None:
            continue  # not known here; the job file fsbench writes sets the target's own in every section
        if own.get(option) != text:
            shown = f"its {option} is {own[option]}" if option in own else f"it sets no {option}"
            return [(f"{key}={text} sends fio's rbd engine elsewhere than target {t.name}'s image ({shown})",
                     "remove it: fsbench sets pool, rbdname and clientname from the target's `rbd-image:` "
                     "settings in every job")]
    return []
