"""What every FUSE client of an object store is told: where the store is, which bucket, with which keys.

Keys are texts with run-time placeholders (`${services.s3.access_key}`, `${secrets.ak}`): a kind puts
their values in the environment of its commands, never in argv or a file of the run directory."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from fsbench.config import schema as s
from fsbench.core.secrets import remember_written
from fsbench.core.shell import render, sh
from fsbench.kinds.base import StoreAccess


@dataclass(frozen=True)
class ObjectStore:
    """An S3 endpoint, a bucket and keys, plus the client's binary and its own options."""

    endpoint: str
    bucket: str
    access_key: str = ""
    secret_key: str = ""
    region: str = "us-east-1"
    prefix: str = ""
    binary: str = ""
    options: tuple[str, ...] = ()


def section(client: str, binary: str, options_doc: str) -> s.Struct:
    """The settings section of a client kind (`s3fs:`, `rclone:`)."""
    return s.Struct({
        "endpoint": s.Key(s.line_text, required=True,
                          doc="the S3 endpoint URL, e.g. ${services.s3.endpoint} or https://s3.eu-west-1.amazonaws.com"),
        "bucket": s.Key(s.line_text, required=True, doc="the bucket, e.g. ${services.s3.bucket}"),
        "access_key": s.Key(s.line_text, default="", doc="e.g. ${services.s3.access_key} or ${secrets.access_key}"),
        "secret_key": s.Key(s.line_text, default="", doc="e.g. ${services.s3.secret_key} or ${secrets.secret_key}"),
        "region": s.Key(s.line_text, default="us-east-1"),
        "prefix": s.Key(s.line_text, default="", doc="a folder in the bucket to mount instead of its root"),
        "binary": s.Key(s.line_text, default=binary, doc=f"the {client} program"),
        "options": s.Key(s.list_of(s.line_text), default=list, doc=options_doc),
    }, what=f"{client} settings")


def settings(checked: dict | None) -> ObjectStore | None:
    """Typed settings from a checked section (None when the target has none)."""
    if not checked:
        return None
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in checked.items()}
    return ObjectStore(**values)


def texts(spec: ObjectStore | None) -> list[tuple[str, str]]:
    """The settings that may hold run-time placeholders."""
    if spec is None:
        return []
    return [("endpoint", spec.endpoint), ("bucket", spec.bucket), ("access_key", spec.access_key),
            ("secret_key", spec.secret_key), ("region", spec.region), ("prefix", spec.prefix)]


def resolved(spec: ObjectStore, values: dict[str, str]) -> ObjectStore:
    """The settings with their placeholders filled in; the keys are masked from now on."""
    def fill(text: str) -> str:
        return render(text, values, quote=False) if text else ""

    out = ObjectStore(endpoint=fill(spec.endpoint), bucket=fill(spec.bucket), access_key=fill(spec.access_key),
                      secret_key=fill(spec.secret_key), region=fill(spec.region), prefix=fill(spec.prefix),
                      binary=spec.binary, options=spec.options)
    remember_written(out.access_key)
    remember_written(out.secret_key)
    return out


def store_of(spec: ObjectStore) -> StoreAccess:
    """The bucket as JuiceFS's tools name an S3 store: storage s3, ENDPOINT/BUCKET, keys in the environment."""
    env = {"ACCESS_KEY": spec.access_key, "SECRET_KEY": spec.secret_key} if spec.access_key else {}
    return StoreAccess("s3", f"{spec.endpoint.rstrip('/')}/{spec.bucket}", env)


def missing(target: object, kind: str) -> list[tuple[tuple, str, str]]:
    """The check every client kind shares: its section must be there."""
    if getattr(target, "settings", None) is None:
        return [(("kind",), f"a {kind} target needs a `{kind}:` section",
                 f"at least `{kind}: {{endpoint: URL, bucket: NAME}}`")]
    return []


def option_values(options: tuple[str, ...], name: str) -> list[str]:
    """The values of a client's `-o NAME=VALUE` options (s3fs's use_cache folder)."""
    return [o.split("=", 1)[1] for o in options if o.startswith(f"{name}=") and o.split("=", 1)[1]]


def fuse_unmount(path: str) -> tuple[list[list[str]], list[list[str]]]:
    """(unmount, force unmount) of a FUSE mount point: fusermount3 or fusermount, umount as a last resort."""
    q = shlex.quote(path)
    unmount = sh(f"fusermount3 -u {q} 2>/dev/null || fusermount -u {q} 2>/dev/null || umount {q}")
    force = sh(f"fusermount3 -uz {q} 2>/dev/null || fusermount -uz {q} 2>/dev/null || umount -l {q}")
    return [unmount], [force]


class ObjectClientKind:
    """What the FUSE clients of an S3 bucket share as target kinds: a mounted directory, the common
    section, its checks; each client adds its name, binary, process and plan."""

    address = "directory"
    object_store = True  # its plan names the store behind it (KindPlan.store)
    name = ""

    def settings(self, checked: dict | None) -> object:
        return settings(checked)

    def texts(self, spec: object) -> list[tuple[str, str]]:
        return texts(spec)  # type: ignore[arg-type]

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        return missing(target, self.name)
