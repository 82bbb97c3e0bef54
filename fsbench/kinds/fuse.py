"""Any FUSE client as a target kind: the scenario's mount command, an unmount command (fusermount by
default) and the client's process (`client_process:`), whose CPU and peak memory are reported."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.shell import render, sh
from fsbench.kinds import objectstore


@dataclass(frozen=True)
class Fuse:
    """The commands that mount and unmount one FUSE client (the target's `fuse:` section)."""

    mount: str = option(s.command_line, "", required=True,
                        doc="shell text that mounts ${target.path} and returns once it is mounted, e.g. "
                            "goofys --endpoint ${services.s3.endpoint} ${services.s3.bucket} ${target.path}")
    unmount: str = option(s.command_line, "", doc="default: fusermount3 -u (fusermount -u, umount) ${target.path}")
    version: str = option(s.command_line, "", doc="a command printing the client's version (for hosts.csv)")
    cache_dir: str = option(s.line_text, "",
                            doc="the folder the client keeps copies of file data in (s3fs -o use_cache=...), inside "
                                "${run.scratch}: emptied, with the client unmounted, before a case that drops the "
                                "client's cache (a folder elsewhere is never touched)")


SECTION = Section(Fuse, "fuse settings")


class FuseKind:
    """A FUSE file system mounted and unmounted by the scenario's own commands."""

    name = "fuse"
    address = "directory"
    section = SECTION
    client_process = ""  # the target's `client_process:` names it

    def settings(self, checked: dict | None) -> Fuse | None:
        return SECTION.build(checked)

    def texts(self, settings: Fuse | None) -> list[tuple[str, str]]:
        spec = settings
        return [("mount", spec.mount), ("unmount", spec.unmount), ("version", spec.version),
                ("cache_dir", spec.cache_dir)] if spec else []

    def check(self, target: KindTarget[Fuse]) -> list[KindIssue]:
        if target.settings is None and not target.existing_mount:
            return [(("kind",), "a fuse target needs a `fuse:` section",
                     "at least `fuse: {mount: COMMAND}`, or `existing_mount: true` for a mount made beforehand")]
        if not target.client_process:
            return [(("client_process",), "a fuse target names its client's process (its /proc/PID/comm)",
                     "e.g. client_process: goofys; its CPU and peak memory are reported beside each result")]
        return []

    def plan(self, target: KindTarget[Fuse], values: dict[str, str], scratch: str) -> KindPlan:
        spec, path = target.settings, target.path
        if spec is None:  # `existing_mount: true`: the user's mount, nothing for fsbench to run
            return KindPlan()
        unmount, force = objectstore.fuse_unmount(path)
        if spec.unmount:
            unmount = [sh(render(spec.unmount, values))]
        return KindPlan(prepare=[["mkdir", "-p", path]], mount=[sh(render(spec.mount, values))], unmount=unmount,
                        force_unmount=force, after=[["rmdir", path]],
                        version=sh(render(spec.version, values)) if spec.version else [],
                        caches=[render(spec.cache_dir, values, quote=False)] if spec.cache_dir else [])


PLUGIN: TargetKind[Fuse] = FuseKind()
