"""The target kind protocol: a kind's settings section, what its path is, and the commands around it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

#: what a target's path is for the tools: a folder they write into, a device (or file) they address
#: raw, or a URL they reach through their own client (hdfs://, s3a://, rbd:pool/image)
ADDRESSES = ("directory", "device", "url")


@dataclass(frozen=True)
class StoreAccess:
    """The object store behind a target (JuiceFS's data, an S3 FUSE client's bucket), for tools that
    test the store itself (`juicefs objbench`): JuiceFS's storage type, the bucket (URL or folder) and
    the keys as ACCESS_KEY / SECRET_KEY in an environment, never in argv."""

    storage: str
    bucket: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KindPlan:
    """The commands of one target on one host, in the order the session runs them."""

    prepare: list[list[str]] = field(default_factory=list)  # every host, first (folders)
    once: list[list[str]] = field(default_factory=list)  # the first host only (format a volume)
    mount: list[list[str]] = field(default_factory=list)  # every host (mount; undone by unmount)
    unmount: list[list[str]] = field(default_factory=list)  # every host that mounted, at teardown
    force_unmount: list[list[str]] = field(default_factory=list)  # when unmount fails, and after a crash
    after: list[list[str]] = field(default_factory=list)  # every host, after unmounting (remove the mount point)
    logs: dict[str, str] = field(default_factory=dict)  # file on the host -> name under targets/<target>/
    env: dict[str, str] = field(default_factory=dict)  # environment of these commands (secrets, never argv)
    #: after setup, a command printing one line on how the host reaches the target (`ceph-fuse`,
    #: `rbd-fuse+loop /dev/loop3`): hosts.csv shows it beside findmnt's source, type and options
    via: list[str] = field(default_factory=list)
    version: list[str] = field(default_factory=list)  # prints the client's version (hosts.csv)
    shown: list[str] = field(default_factory=list)  # the client's command line for hosts.csv, when not mount[0]
    store: StoreAccess | None = None  # the object store behind the target, when it has one
    #: words the client process's command line holds as whole arguments, telling it from other processes
    #: of its name (`juicefs bench`, `juicefs stats` beside a JuiceFS mount); () means the target path
    client_args: tuple[str, ...] = ()
    #: folders where the client keeps copies of file data (a disk cache), inside the run's scratch space:
    #: emptied, with the client unmounted, before a case that drops the client's cache (fsbench.run.targets.cache)
    caches: list[str] = field(default_factory=list)

    def client_command(self) -> list[str]:
        """The command line that mounts the client, as recorded in hosts.csv (options included, keys never)."""
        return self.shown or (self.mount[0] if self.mount else [])

    def client_match(self, path: str) -> tuple[str, ...]:
        """What tells the client process apart: the kind's words, else the target path (its mount point)."""
        return self.client_args or (path,)


@runtime_checkable
class TargetKind(Protocol):
    """A kind of system under test; one module under fsbench/kinds/ (or a package's entry point)."""

    name: str
    #: what tools get (one of ADDRESSES); tools declare which they can work with
    address: str
    #: the kind's own settings, checked like the rest of the scenario (None: it has none); under the
    #: target's key named like the kind (`juicefs: {meta: ...}`)
    section: object
    #: the process that serves a target of this kind on its hosts (juicefs), "" when none: its CPU and
    #: peak memory are sampled during every case and reported beside the results
    client_process: str
    #: optional `object_store = True`: its plans name the object store behind it (KindPlan.store)

    def settings(self, checked: dict | None) -> object:
        """Typed settings from the checked section (None when the kind has none)."""
        ...

    def texts(self, settings: object) -> list[tuple[str, str]]:
        """(key, text) of the settings that may use run-time placeholders (${services.redis.port}...)."""
        ...

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        """Problems of a target of this kind: (key path below the target, message, hint)."""
        ...

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        """The commands for one host; values are the host's run-time placeholders."""
        ...
