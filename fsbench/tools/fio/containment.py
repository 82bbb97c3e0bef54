"""Where a fio job does I/O, and whether that stays inside the case's own folder on the target.

fsbench points every job at the case's folder on the target (`directory=`). A job file or an option
can still name other places: `filename` (absolute names, `..`, raw devices), `directory` and
`filename_format` (absolute or `..`), `opendir`, engines that address devices or remote systems
rather than files, I/O logs that replay onto the files they name, mmap'ed buffers in a file, the
host's I/O scheduler. Each is refused unless it stays inside the case folder, or the target is
`destructive: true` and the path is that target's own device or file. fio's rbd engine is allowed on
rbd-image targets only (their image is made for it), and there only: never on a destructive device,
which would not stop it from writing to an image a file system is mounted from. Options that run commands
(`exec_prerun`, `exec_postrun`, the `exec` engine, external engines, triggers) are refused unless
the workload says `allow_commands: true`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from fsbench.tools.fio.jobfile import JobFile, Origin

#: engines that address a device or a remote system instead of files in a folder
DEVICE_ENGINES = {"sg", "mtd", "rbd", "rados", "nbd", "libhdfs", "http", "nfs", "dfs", "libiscsi", "io_uring_cmd",
                  "xnvme", "spdk", "e4defrag", "rdma", "net", "netsplice", "libcufile"}
#: fio's librbd engine, and the target kind made for it
RBD_ENGINE, RBD_KIND = "rbd", "rbd-image"
#: options whose value runs a command on the host
COMMAND_OPTIONS = {"exec_prerun", "exec_postrun", "trigger", "trigger_cmd", "trigger-file", "trigger_file"}
#: options that write a log file (relative names land in the case's raw folder, where fio runs)
LOG_OPTIONS = {"write_iolog", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log"}
_UNESCAPED_COLON = re.compile(r"(?<!\\):")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class TargetPlace:
    """What containment needs of a target: its path and whether it may be written raw."""

    name: str
    path: str
    destructive: bool = False
    kind: str = "directory"


@dataclass(frozen=True)
class Escape:
    """One way a job leaves the case folder: where it was set, the option, why, what to do."""

    section: str
    option: str
    origin: Origin | None
    message: str
    hint: str


def split_paths(value: str) -> list[str]:
    """fio's `a:b` lists (`\\:` escapes a colon inside a name)."""
    return [p.replace("\\:", ":") for p in _UNESCAPED_COLON.split(value) if p]


def _escapes_folder(path: str) -> bool:
    norm = posixpath.normpath(path)
    return norm == ".." or norm.startswith("../")


def _is_target_itself(path: str, targets: list[TargetPlace]) -> bool:
    """Whether an absolute path is, on every target of the workload, that destructive target's own path."""
    return bool(targets) and all(t.destructive and posixpath.normpath(path) == posixpath.normpath(t.path)
                                 for t in targets)


def find_escapes(jf: JobFile, targets: list[TargetPlace], *, allow_commands: bool = False) -> list[Escape]:
    """Every place where a job of jf would do I/O (or run a command) outside its case folder."""
    out: list[Escape] = []
    names = ", ".join(t.name for t in targets) or "its targets"
    destructive = bool(targets) and all(t.destructive for t in targets)
    for section, opts in jf.sections:
        if section != "global" and ("/" in section or section in (".", "..") or _CONTROL.search(section)):
            first = next(iter(opts), "")
            out.append(Escape(section, "", jf.origin(section, first) if first else None,
                              f"job name [{section}] would put fio's files ({section}.0.0) outside the case folder",
                              "name jobs without '/'"))
        for key, value in opts.items():
            origin = jf.origin(section, key)
            for message, hint in _problems(key, value, targets, names, destructive, allow_commands):
                out.append(Escape(section, key, origin, message, hint))
    return out


def _problems(key: str, value: str | None, targets: list[TargetPlace], names: str, destructive: bool,
              allow_commands: bool) -> list[tuple[str, str]]:
    text = value or ""
    inside = "fsbench runs every job in the case's own folder on the target"
    if key in COMMAND_OPTIONS or (key == "ioengine" and (text == "exec" or text.startswith("external"))):
        if allow_commands:
            return []
        return [(f"{key}={text} runs a command (or loads code) on the host",
                 "if you mean it, set `allow_commands: true` on this workload; `fsbench plan --show` then lists it")]
    if key == "directory":
        bad = [p for p in split_paths(text) if p.startswith("/") or _escapes_folder(p)]
        return [(f"directory={p} points outside the case folder on {names}",
                 f"{inside}; remove this line (a relative folder such as `data` is allowed)") for p in bad]
    if key == "filename":
        out = []
        for p in split_paths(text):
            if p.startswith("/"):
                if not _is_target_itself(p, targets):
                    raw = " (a device)" if p.startswith("/dev/") else ""
                    out.append((f"filename={p}{raw} is outside the case folder on {names}",
                                f"{inside}: use a relative name (e.g. filename=data), or, to test a device or "
                                "file itself, make it the target's path and set `destructive: true` on it"))
            elif _escapes_folder(p):
                out.append((f"filename={p} climbs out of the case folder", f"{inside}: drop the '..'"))
        return out
    if key == "filename_format" and (text.startswith("/") or _escapes_folder(text) or "/../" in text):
        return [(f"filename_format={text} points outside the case folder", f"{inside}: use a relative pattern")]
    if key == "opendir" and not (text.startswith("/") and _is_target_itself(text, targets)):
        return [(f"opendir={text} reads files outside the case folder",
                 "remove it, or make that folder a destructive target's path")]
    if key == "ioengine" and text.split(":")[0] == RBD_ENGINE:
        if targets and all(t.kind == RBD_KIND for t in targets):
            return []
        return [(f"ioengine={text} writes to an RBD image, not to files in the case folder",
                 "use an `kind: rbd-image` target (fsbench then sets ioengine=rbd, pool, rbdname and clientname "
                 "itself); never point it at an image a file system is mounted from")]
    if key == "ioengine" and text.split(":")[0] in DEVICE_ENGINES and not destructive:
        return [(f"ioengine={text} addresses a device or a remote system, not files in the case folder",
                 "use it only on targets with `destructive: true` (their path names the device)")]
    if key in ("read_iolog", "iolog", "replay_redirect") and not destructive:
        return [(f"{key}={text} replays I/O onto the devices or files the log names",
                 "use it only on targets with `destructive: true`")]
    if key == "ioscheduler" and not destructive:
        return [(f"ioscheduler={text} changes the I/O scheduler of the host's device",
                 "use it only on targets with `destructive: true`, or set the scheduler in the target's setup")]
    if key in LOG_OPTIONS and (text.startswith("/") or _escapes_folder(text)):
        return [(f"{key}={text} writes its log outside the case's raw folder",
                 "use a relative name: the log then lands in raw/<case>/<host>/")]
    if key in ("mem", "iomem") and ":" in text:
        path = text.split(":", 1)[1]
        if path.startswith("/") or _escapes_folder(path):
            return [(f"{key}={text} maps a file outside the case folder", "drop the path (fio then uses its own)")]
    return []
