"""rclone mount as a target kind: the remote is described entirely by RCLONE_CONFIG_FSB_* variables (no
rclone.conf is written, the keys stay in the environment), the VFS cache and log in the run's scratch."""

from __future__ import annotations

import posixpath
import shlex

from fsbench.core.shell import sh
from fsbench.kinds import objectstore
from fsbench.kinds.base import KindPlan

REMOTE = "FSB"  # the remote's name in RCLONE_CONFIG_<REMOTE>_*


class RcloneKind(objectstore.ObjectClientKind):
    """rclone's FUSE mount of an S3 bucket (Debian `rclone`)."""

    name = "rclone"
    section = objectstore.section("rclone", "rclone", "more flags of `rclone mount`: [--vfs-cache-mode, full, "
                                                      "--transfers, '16'] (default: --vfs-cache-mode writes)")
    client_process = "rclone"

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        spec = objectstore.resolved(target.settings, values)  # type: ignore[attr-defined]
        path, tname = target.path, target.name  # type: ignore[attr-defined]
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


PLUGIN = RcloneKind()
