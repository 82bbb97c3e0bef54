"""rclone mount as a target kind: the remote is described entirely by RCLONE_CONFIG_FSB_* variables (no
rclone.conf is written, the keys stay in the environment), the VFS cache and log in the run's scratch."""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from fsbench.api.kinds import KindPlan, KindTarget, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.core.shell import sh
from fsbench.core.units import parse_duration
from fsbench.kinds import objectstore

REMOTE = "FSB"  # the remote's name in RCLONE_CONFIG_<REMOTE>_*
#: rclone's default --vfs-write-back: a written file is uploaded this long after its close
WRITE_BACK_S = 5.0


@dataclass(frozen=True)
class Rclone(objectstore.ObjectStore):
    """The target's `rclone:` section: the bucket and keys of every client, with rclone's program and options."""

    binary: str = objectstore.binary_option("rclone")
    options: tuple[str, ...] = objectstore.options_option(
        "more flags of `rclone mount`: [--vfs-cache-mode, full, "
        "--transfers, '16'] (default: --vfs-cache-mode writes)")


SECTION = Section(Rclone, "rclone settings")


class RcloneKind(objectstore.ObjectClientKind[Rclone]):
    """rclone's FUSE mount of an S3 bucket (Debian `rclone`)."""

    name = "rclone"
    section = SECTION
    client_process = "rclone"

    def write_back_s(self, target: KindTarget[Rclone]) -> float:
        """rclone's VFS uploads a written file `--vfs-write-back` (5 s) after its close, with a cache mode that
        caches writes (writes, full: its default here); none without."""
        flags = list(target.settings.options) if target.settings else []
        mode = _flag(flags, "--vfs-cache-mode") or ("writes" if not flags else "off")
        if mode not in ("writes", "full"):
            return 0.0
        given = _flag(flags, "--vfs-write-back")
        try:
            return parse_duration(given) if given else WRITE_BACK_S
        except ValueError:
            return WRITE_BACK_S

    def plan(self, target: KindTarget[Rclone], values: dict[str, str], scratch: str) -> KindPlan:
        spec = objectstore.resolved(settings_of(target, self.name), values)
        path, tname = target.path, target.name
        base = posixpath.join(scratch, "rclone", tname)
        log, cache = posixpath.join(base, "rclone.log"), posixpath.join(base, "cache")
        remote = f"{REMOTE.lower()}:{spec.bucket}" + (f"/{spec.prefix.strip('/')}" if spec.prefix else "")
        # without options, writes go through the VFS cache: fio's layout and O_RDWR opens need it
        flags = list(spec.options) or ["--vfs-cache-mode", "writes"]
        argv = [spec.binary, "mount", remote, path, "--daemon", "--cache-dir", cache, "--log-file", log, *flags]
        env = {f"RCLONE_CONFIG_{REMOTE}_{k}": v for k, v in (
            ("TYPE", "s3"), ("PROVIDER", "Other"), ("ENDPOINT", spec.endpoint), ("REGION", spec.region),
            ("ACCESS_KEY_ID", spec.access_key), ("SECRET_ACCESS_KEY", spec.secret_key),
            ("FORCE_PATH_STYLE", "true")) if v}
        # rclone's S3 SDK refuses AWS_CA_BUNDLE with its own HTTP transport ("LoadCustomCABundleError"):
        # the bundle is handed to rclone's --ca-cert instead
        mount = sh('if [ -n "${AWS_CA_BUNDLE:-}" ]; then export RCLONE_CA_CERT="$AWS_CA_BUNDLE"; '
                   f'unset AWS_CA_BUNDLE; fi; exec {shlex.join(argv)}')
        unmount, force = objectstore.fuse_unmount(path)
        return KindPlan(prepare=[["mkdir", "-p", path, cache]], mount=[mount], unmount=unmount, force_unmount=force,
                        after=[["rmdir", path]], logs={log: "rclone-{host}.log"}, env=env,
                        version=[spec.binary, "version"], shown=argv,
                        store=objectstore.store_of(spec), caches=[cache])


def _flag(flags: list[str], name: str) -> str:
    """The value of `--name value` or `--name=value` among rclone's flags ("" when absent)."""
    for i, f in enumerate(flags):
        if f == name and i + 1 < len(flags):
            return flags[i + 1]
        if f.startswith(name + "="):
            return f.split("=", 1)[1]
    return ""


PLUGIN: TargetKind[Rclone] = RcloneKind()
