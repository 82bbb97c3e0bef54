"""Any FUSE client as a target kind: the scenario's mount command, an unmount command (fusermount by
default) and the client's process (`client_process:`), whose CPU and peak memory are reported."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.config import schema as s
from fsbench.core.shell import render, sh
from fsbench.kinds import objectstore
from fsbench.kinds.base import KindPlan


@dataclass(frozen=True)
class Fuse:
    """The commands that mount and unmount one FUSE client."""

    mount: str
    unmount: str = ""
    version: str = ""
    cache_dir: str = ""


SECTION = s.Struct({
    "mount": s.Key(s.command_line, required=True,
                   doc="shell text that mounts ${target.path} and returns once it is mounted, e.g. "
                       "goofys --endpoint ${services.s3.endpoint} ${services.s3.bucket} ${target.path}"),
    "unmount": s.Key(s.command_line, default="", doc="default: fusermount3 -u (fusermount -u, umount) ${target.path}"),
    "version": s.Key(s.command_line, default="", doc="a command printing the client's version (for hosts.csv)"),
    "cache_dir": s.Key(s.line_text, default="",
                       doc="the folder the client keeps copies of file data in (s3fs -o use_cache=...), inside "
                           "${run.scratch}: emptied, with the client unmounted, before a case that drops the "
                           "client's cache (a folder elsewhere is never touched)"),
}, what="fuse settings")


class FuseKind:
    """A FUSE file system mounted and unmounted by the scenario's own commands."""

    name = "fuse"
    address = "directory"
    section = SECTION
    client_process = ""  # the target's `client_process:` names it

    def settings(self, checked: dict | None) -> object:
        return Fuse(**checked) if checked else None

    def texts(self, settings: object) -> list[tuple[str, str]]:
        spec: Fuse | None = settings  # type: ignore[assignment]
        return [("mount", spec.mount), ("unmount", spec.unmount), ("version", spec.version),
                ("cache_dir", spec.cache_dir)] if spec else []

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        if getattr(target, "settings", None) is None and not getattr(target, "existing_mount", False):
            return [(("kind",), "a fuse target needs a `fuse:` section",
                     "at least `fuse: {mount: COMMAND}`, or `existing_mount: true` for a mount made beforehand")]
        if not getattr(target, "client_process", None):
            return [(("client_process",), "a fuse target names its client's process (its /proc/PID/comm)",
                     "e.g. client_process: goofys; its CPU and peak memory are reported beside each result")]
        return []

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        spec: Fuse | None = target.settings  # type: ignore[attr-defined]
        path = target.path  # type: ignore[attr-defined]
        if spec is None:  # `existing_mount: true`: the user's mount, nothing for fsbench to run
            return KindPlan()
        unmount, force = objectstore.fuse_unmount(path)
        if spec.unmount:
            unmount = [sh(render(spec.unmount, values))]
        return KindPlan(prepare=[["mkdir", "-p", path]], mount=[sh(render(spec.mount, values))], unmount=unmount,
                        force_unmount=force, after=[["rmdir", path]],
                        version=sh(render(spec.version, values)) if spec.version else [],
                        caches=[render(spec.cache_dir, values, quote=False)] if spec.cache_dir else [])


PLUGIN = FuseKind()
