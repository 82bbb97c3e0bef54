"""s3fs-fuse as a target kind: a bucket (or a folder of it) mounted with path-style requests, the keys in
the client's environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), its log in the run's scratch space."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from fsbench.api.kinds import KindPlan, KindTarget, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.kinds import objectstore


@dataclass(frozen=True)
class S3fs(objectstore.ObjectStore):
    """The target's `s3fs:` section: the bucket and keys of every client, with s3fs's program and options."""

    binary: str = objectstore.binary_option("s3fs")
    options: tuple[str, ...] = objectstore.options_option(
        "more `-o` options, without the -o: [use_cache=/var/tmp/c, "
        "parallel_count=8, multipart_size=32]")


SECTION = Section(S3fs, "s3fs settings")


class S3fsKind(objectstore.ObjectClientKind[S3fs]):
    """s3fs-fuse (Debian `s3fs`; ossfs 1.0 is a fork of it)."""

    name = "s3fs"
    section = SECTION
    client_process = "s3fs"

    def plan(self, target: KindTarget[S3fs], values: dict[str, str], scratch: str) -> KindPlan:
        spec = objectstore.resolved(settings_of(target, self.name), values)
        path, tname = target.path, target.name
        log = posixpath.join(scratch, "s3fs", tname, "s3fs.log")
        source = spec.bucket + (":/" + spec.prefix.strip("/") if spec.prefix else "")
        options = [f"url={spec.endpoint}", "use_path_request_style", f"endpoint={spec.region}",
                   f"logfile={log}", "dbglevel=warn", *spec.options]
        mount = [spec.binary, source, path, *(w for o in options for w in ("-o", o))]
        env = {"AWS_ACCESS_KEY_ID": spec.access_key, "AWS_SECRET_ACCESS_KEY": spec.secret_key} \
            if spec.access_key else {}
        unmount, force = objectstore.fuse_unmount(path)
        return KindPlan(prepare=[["mkdir", "-p", path, posixpath.dirname(log)]], mount=[mount], unmount=unmount,
                        force_unmount=force, after=[["rmdir", path]], logs={log: "s3fs-{host}.log"}, env=env,
                        version=[spec.binary, "--version"], store=objectstore.store_of(spec),
                        caches=objectstore.option_values(spec.options, "use_cache"))


PLUGIN: TargetKind[S3fs] = S3fsKind()
