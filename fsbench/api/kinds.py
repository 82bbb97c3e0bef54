"""The target kind contract: a kind's typed settings, what its path is, the commands around it, its hooks.

A kind is any object that satisfies `TargetKind[S]`, S being its settings type (fsbench's own annotate
`PLUGIN: TargetKind[JuiceFS]`, so mypy checks each against the contract). Its hooks get the target as a
`KindTarget[S]`, whose `settings` is already that type. Optional hooks are small Protocols the core
asks with isinstance; the registry refuses a kind whose hook has another signature than its Protocol,
or whose hooks take other settings than its section builds, naming the kind.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from fsbench.api.kind_numbers import CountsMetaRequests, WritesBack
from fsbench.api.registry import Registry
from fsbench.api.sections import Section
from fsbench.api.tools import DeclaresValidityChecks
from fsbench.core.errors import FsbenchError

S = TypeVar("S")
S_co = TypeVar("S_co", covariant=True)

#: what a target's path is for the tools: a folder they write into, a device (or file) they address
#: raw, or a URL they reach through their own client (hdfs://, s3a://, rbd:pool/image)
ADDRESSES = ("directory", "device", "url")

#: one problem of a target: (key path below the target, message, hint)
KindIssue = tuple[tuple[Any, ...], str, str]


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
    #: the first host, once every host has unmounted, where the target is set up again in this run (fresh
    #: rounds): undo what `once` made (destroy the volume it formatted), so the next setup starts from nothing
    unformat: list[list[str]] = field(default_factory=list)
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


class KindTarget(Protocol[S_co]):
    """What a kind reads of one of its targets (fsbench.scenario.model.Target satisfies it)."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def settings(self) -> S_co | None:
        """The kind's own settings, built by its `settings`; None when the target has no section."""
        ...

    @property
    def destructive(self) -> bool: ...

    @property
    def existing_mount(self) -> bool: ...

    @property
    def client_process(self) -> str | None: ...


@runtime_checkable
class TargetKind(Protocol[S]):
    """A kind of system under test, S its settings; one module under fsbench/kinds/ (or an entry point)."""

    @property
    def name(self) -> str: ...

    @property
    def address(self) -> str:
        """What tools get (one of ADDRESSES); tools declare which they can work with."""
        ...

    @property
    def section(self) -> object:
        """The checker of the kind's settings (a Section of S; None: it has none), under the target's key
        named like the kind (`juicefs: {meta: ...}`)."""
        ...

    @property
    def client_process(self) -> str:
        """The process that serves a target of this kind on its hosts (juicefs), "" when none: its CPU and
        peak memory are sampled during every case and reported beside the results."""
        ...

    def settings(self, checked: dict[str, Any] | None) -> S | None:
        """Typed settings from the checked section (None when the target has none)."""
        ...

    def texts(self, settings: S | None) -> list[tuple[str, str]]:
        """(key, text) of the settings that may use run-time placeholders (${services.redis.port}...)."""
        ...

    def check(self, target: KindTarget[S]) -> list[KindIssue]:
        """Problems of a target of this kind: (key path below the target, message, hint)."""
        ...

    def plan(self, target: KindTarget[S], values: dict[str, str], scratch: str) -> KindPlan:
        """The commands for one host; values are the host's run-time placeholders."""
        ...


@runtime_checkable
class StoreBacked(Protocol):
    """A kind whose plans name the object store behind it (KindPlan.store), for tools that test the store."""

    @property
    def object_store(self) -> bool: ...


@runtime_checkable
class OneHost(Protocol):
    """A kind some of whose targets can live on one host only (an embedded database, one image for all)."""

    def one_host(self, target: KindTarget[Any]) -> str:
        """Why this target can live on its first host only ('' when several hosts may use it)."""
        ...


@runtime_checkable
class TreePerHost(Protocol):
    """A kind whose target is a file tree of each host's own (an ext4 on each host's own RBD image), not one
    tree every host sees: processes on several hosts that must share one tree (mdtest's ranks) cannot."""

    def tree_per_host(self, target: KindTarget[Any]) -> str:
        """Why each host of the target has a tree of its own ('' when its hosts share one)."""
        ...


@runtime_checkable
class CountsBackend(Protocol):
    """A kind whose backend's counters fsbench reads around each case (fsbench.validity.backends.CountersKind
    types what it returns: Counters live in the validity layer, above this one)."""

    def counters(self, target: KindTarget[Any], values: dict[str, str]) -> list[Any]:
        """The target's backend counters, with the host's run-time placeholders filled."""
        ...


#: the optional hooks of a kind: the registry checks the signature of each one a kind has, and refuses a
#: public name one letter or two from a hook's (a misspelt hook would be silently ignored); validity_checks
#: is the tools' declaration (fsbench.validity.judge reads both alike)
KIND_HOOKS: tuple[type, ...] = (StoreBacked, OneHost, TreePerHost, CountsBackend, CountsMetaRequests, WritesBack,
                                 DeclaresValidityChecks)
#: the hooks that take a target, whose KindTarget[...] must name the type the kind's section builds
_TARGET_HOOKS = ("check", "plan", "one_host", "tree_per_host", "counters", "write_back_s")


def settings_of(target: KindTarget[S], kind: str) -> S:
    """The target's settings, which the scenario's check made sure it has (a kind's plan needs them)."""
    spec = target.settings
    if spec is None:
        raise FsbenchError(f"target {target.name!r}: a {kind} target needs a `{kind}:` section: add it "
                           f"under targets.{target.name}")
    return spec


def is_store_backed(kind: object) -> bool:
    """Whether the kind's plans name the object store behind its targets."""
    return isinstance(kind, StoreBacked) and bool(kind.object_store)


def one_host_reason(kind: object, target: KindTarget[Any]) -> str:
    """Why the target can live on one host only, when its kind says ('' otherwise)."""
    return kind.one_host(target) if isinstance(kind, OneHost) else ""


def tree_per_host_reason(kind: object, target: KindTarget[Any]) -> str:
    """Why each host of the target has a file tree of its own, when its kind says ('' otherwise)."""
    return kind.tree_per_host(target) if isinstance(kind, TreePerHost) else ""


# -- checked at registration (each hook's signature by fsbench.api.signatures, its settings type here) ----------

def settings_problems(kind: object) -> list[str]:
    """Where a kind's hooks take other settings than its section builds (KindTarget[X] or X of `texts`)."""
    section = getattr(kind, "section", None)
    if section is not None and not isinstance(section, Section):
        return []  # a hand-written checker: its type is the kind's own business (mypy's, for the author)
    built: object = section.type if isinstance(section, Section) else type(None)
    out = []
    bound = _type_arguments(type(kind))
    for hook in (*_TARGET_HOOKS, "texts"):
        method = getattr(kind, hook, None)
        if method is None:
            continue
        for param, annotation in _hints(method).items():
            named = _settings_type(annotation, hook == "texts" and param == "settings")
            named = bound.get(named, Any) if isinstance(named, TypeVar) else named
            if named is not None and named is not Any and not _takes(named, built):
                out.append(f"`{hook}` takes {_name(named)} settings ({param}: {_name(annotation)}) but its "
                           f"section builds {_name(built)}")
    return out


def _type_arguments(cls: type) -> dict[Any, Any]:
    """The type variables of a kind's generic bases and what the kind fills them with
    (`class S3fsKind(ObjectClientKind[S3fs])`: C -> S3fs), so its inherited hooks are checked too."""
    out: dict[Any, Any] = {}
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            params = getattr(origin, "__parameters__", ())
            for var, arg in zip(params, typing.get_args(base)):
                out.setdefault(var, arg)
    return out


def _hints(method: Any) -> dict[str, Any]:
    """The parameter annotations of a method, resolved; {} when they cannot be (a name only for mypy)."""
    try:
        hints = typing.get_type_hints(method)
    except Exception:  # noqa: BLE001 - an annotation of TYPE_CHECKING imports cannot be resolved at run time
        return {}
    hints.pop("return", None)
    return hints


def _settings_type(annotation: Any, plain: bool) -> Any:
    """X of KindTarget[X] (or of `X | None` for texts' settings); None when the annotation names none."""
    if typing.get_origin(annotation) is KindTarget:
        return typing.get_args(annotation)[0]
    if plain and annotation is not object:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else (annotation if not typing.get_args(annotation) else None)
    return None


def _takes(named: Any, built: object) -> bool:
    """Whether a hook taking `named` settings takes what the section builds (the same class or a base of it)."""
    return named is built or (isinstance(named, type) and isinstance(built, type) and issubclass(built, named))


def _name(t: Any) -> str:
    return "no" if t is type(None) else getattr(t, "__name__", None) or str(t)


class KindRegistry(Registry[TargetKind[Any]]):
    """The target kinds, each checked when it registers: its members and hooks' signatures (as every
    registry checks them), and that its hooks take the settings its section builds."""

    def contract_problems(self, plugin: object) -> list[str]:
        return super().contract_problems(plugin) + settings_problems(plugin)
