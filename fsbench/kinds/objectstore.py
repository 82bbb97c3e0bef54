"""What every FUSE client of an object store is told: where the store is, which bucket, with which keys.

Keys are texts with run-time placeholders (`${services.s3.access_key}`, `${secrets.ak}`): a kind puts
their values in the environment of its commands, never in argv or a file of the run directory."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from fsbench.api.kinds import KindIssue, KindTarget, StoreAccess
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.secrets import remember_written
from fsbench.core.shell import render, sh

C = TypeVar("C", bound="ObjectStore")


@dataclass(frozen=True)
class ObjectStore:
    """An S3 endpoint, a bucket and keys, plus the client's binary and its own options; each client kind
    subclasses it to give `binary` and `options` their default and documentation."""

    endpoint: str = option(s.line_text, "", required=True,
                           doc="the S3 endpoint URL, e.g. ${services.s3.endpoint} or https://s3.eu-west-1.amazonaws.com")
    bucket: str = option(s.line_text, "", required=True, doc="the bucket, e.g. ${services.s3.bucket}")
    access_key: str = option(s.line_text, "", doc="e.g. ${services.s3.access_key} or ${secrets.access_key}")
    secret_key: str = option(s.line_text, "", doc="e.g. ${services.s3.secret_key} or ${secrets.secret_key}")
    region: str = option(s.line_text, "us-east-1")
    prefix: str = option(s.line_text, "", doc="a folder in the bucket to mount instead of its root")
    binary: str = option(s.line_text, "", doc="the client program")
    options: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple, doc="the client's own options")


def binary_option(client: str) -> str:
    """The `binary` field of a client's settings: its program, by default the client's name."""
    return option(s.line_text, client, doc=f"the {client} program")


def options_option(doc: str) -> tuple[str, ...]:
    """The `options` field of a client's settings: more arguments, documented as the client takes them."""
    return option(s.list_of(s.line_text), (), convert=tuple, doc=doc)


def texts(spec: ObjectStore | None) -> list[tuple[str, str]]:
    """The settings that may hold run-time placeholders."""
    if spec is None:
        return []
    return [("endpoint", spec.endpoint), ("bucket", spec.bucket), ("access_key", spec.access_key),
            ("secret_key", spec.secret_key), ("region", spec.region), ("prefix", spec.prefix)]


def resolved(spec: C, values: dict[str, str]) -> C:
    """The settings with their placeholders filled in; the keys are masked from now on."""
    def fill(text: str) -> str:
        return render(text, values, quote=False) if text else ""

    out = replace(spec, endpoint=fill(spec.endpoint), bucket=fill(spec.bucket), access_key=fill(spec.access_key),
                  secret_key=fill(spec.secret_key), region=fill(spec.region), prefix=fill(spec.prefix))
    remember_written(out.access_key)
    remember_written(out.secret_key)
    return out


def store_of(spec: ObjectStore) -> StoreAccess:
    """The bucket as JuiceFS's tools name an S3 store: storage s3, ENDPOINT/BUCKET, keys in the environment."""
    env = {"ACCESS_KEY": spec.access_key, "SECRET_KEY": spec.secret_key} if spec.access_key else {}
    return StoreAccess("s3", f"{spec.endpoint.rstrip('/')}/{spec.bucket}", env)


def missing(target: KindTarget[ObjectStore], kind: str) -> list[KindIssue]:
    """The check every client kind shares: its section must be there."""
    if target.settings is None:
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


class ObjectClientKind(Generic[C]):
    """What the FUSE clients of an S3 bucket share as target kinds: a mounted directory, the common
    section, its checks; each client adds its name, settings class (SECTION), binary, process and plan."""

    address = "directory"
    object_store = True  # its plan names the store behind it (KindPlan.store)
    name = ""
    section: Section[C]

    def settings(self, checked: dict | None) -> C | None:
        return self.section.build(checked)

    def texts(self, settings: ObjectStore | None) -> list[tuple[str, str]]:
        return texts(settings)

    def check(self, target: KindTarget[ObjectStore]) -> list[KindIssue]:
        return missing(target, self.name)
