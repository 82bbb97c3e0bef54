"""s3fs-fuse as a target kind: a bucket (or a folder of it) mounted with path-style requests, the keys in
the client's environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), its log in the run's scratch space."""

from __future__ import annotations

import posixpath

from fsbench.kinds import objectstore
from fsbench.kinds.base import KindPlan


class S3fsKind(objectstore.ObjectClientKind):
    """s3fs-fuse (Debian `s3fs`; ossfs 1.0 is a fork of it)."""

    name = "s3fs"
    section = objectstore.section("s3fs", "s3fs", "more `-o` options, without the -o: [use_cache=/var/tmp/c, "
                                                  "parallel_count=8, multipart_size=32]")
    client_process = "s3fs"

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        spec = objectstore.resolved(target.settings, values)  # type: ignore[attr-defined]
        path, tname = target.path, target.name  # type: ignore[attr-defined]
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


PLUGIN = S3fsKind()
