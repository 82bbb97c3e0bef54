"""What a tool is given and gives back: how to run a case (Invocation), the hosts and target of a build
(BuildContext), and what its option check knows of the scenario (CheckContext)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from fsbench.core.inventory import HostSpec


@dataclass
class Invocation:
    """How to run a tool for one case on one host.

    `argv` runs with the case's work directory as current directory; `files` are written
    there first (job files, parameter files); `outputs` are files the tool writes there
    that must be collected into the raw directory before anything parses them.
    """

    argv: list[str]
    files: dict[str, str] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    #: run argv on the controller (this machine) instead of the case's host, e.g. fio --client, mpirun
    controller: bool = False
    #: commands started in the background on each host before argv, stopped after it (fio --server)
    servers: dict[str, list[str]] = field(default_factory=dict)
    #: (address, port) that must accept connections before argv runs
    wait_ports: list[tuple[str, int]] = field(default_factory=list)
    #: folders to create on each host before the run (per-host test directories)
    host_dirs: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    #: instead of argv: several commands in order (mdtest's create, stat, read, remove phases), with the
    #: page cache dropped before each when the workload asks; their outputs are concatenated
    steps: list[list[str]] = field(default_factory=list)
    #: instead of argv: one command per host (name -> argv), all started at once, each in its own
    #: raw/<case>/<host>/ with its own outputs and parsed there; the tool's `CombinesHosts` hook then
    #: gives the rows (per host and an aggregate)
    per_host: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class HostInfo:
    """What a multi-host build needs of a host: how others reach it, MPI slots, its SSH settings."""

    name: str
    address: str
    slots: int = 1
    spec: HostSpec | None = None  # the inventory's, for MPI's ssh launch agent (None: a local host)
    facts: dict[str, Any] = field(default_factory=dict)  # what preflight gathered there (hosts.csv's columns)

    @property
    def is_root(self) -> bool:
        """Whether commands run as root there (mpirun then needs --allow-run-as-root)."""
        return str(self.facts.get("uid", "")).strip() == "0"


@dataclass
class BuildContext:
    """Hosts of the case and a way to choose a free port, for tools that span several hosts."""

    hosts: dict[str, HostInfo] = field(default_factory=dict)
    port: int = 0
    #: facts of the controller (this machine), where multi-host launchers (mpirun, fio --client) run
    controller: HostInfo | None = None
    #: what the target's path is to the tool: "directory" (test_dir is a folder in it), "device" (test_dir
    #: is the device or file itself) or "url" (test_dir is the URL)
    address: str = "directory"
    #: the target's kind and settings, for tools that need more than a path (an rbd pool, an S3 bucket)
    target_kind: str = "directory"
    target_settings: Any = None
    #: the object store behind the target (fsbench.kinds.StoreAccess: storage, bucket, env), for
    #: tools that test the store itself (juicefs objbench); None when the target has none
    store: Any = None
    #: the run's id: tools on a URL target put their files under <url>/fsbench-<run id>/<case id>
    run_id: str = ""
    #: the scenario's `secrets:` by name, resolved and already masked (fsbench.core.secrets), for tools whose
    #: options refer to one as ${secrets.NAME} (objbench's keys of another store); values go only into env
    secrets: dict[str, str] = field(default_factory=dict)
    #: the target client's count of its metadata-engine requests (fsbench.api.kinds.CountsMetaRequests: a file
    #: at the mount's root and the prefix of its lines), for tools that time single calls; None without
    meta_counters: tuple[str, str] | None = None

    def multi(self) -> bool:
        """Whether the case spans several hosts (each tool then uses its own multi-node engine)."""
        return len(self.hosts) > 1


class JobFileOrigin(Protocol):
    """Where in a job file an option was set (fio's jobfile Origin): the file, and its line (None: not in one)."""

    @property
    def file(self) -> str: ...

    @property
    def line(self) -> int | None: ...


@dataclass(frozen=True)
class OptionIssue:
    """A problem with a workload's options: key path below the workload, message, hint.

    `origin` (a JobFileOrigin: fio's job files) is set when the option came from a job file: the issue is
    then located at that file and line, and `option` names it there (`[job] filename`).
    """

    path: str
    message: str
    hint: str = ""
    origin: JobFileOrigin | None = None
    option: str = ""


class CheckTarget(NamedTuple):
    """One target a workload runs on, as its option check sees it."""

    name: str
    path: str
    destructive: bool = False
    kind: str = "directory"


@dataclass(frozen=True)
class CheckContext:
    """What a tool's option check knows of the scenario around the workload."""

    #: the targets the workload runs on
    targets: tuple[CheckTarget, ...] = ()
    #: the workload's `allow_commands` (options that run commands are refused without it)
    allow_commands: bool = False
    #: the workload's job file (its path, for issues located there)
    job_file: str | None = None
    #: each target's kind settings by target name, for tools that must keep to them (fio's rbd engine)
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: the names and addresses of each target's hosts (vdbench: an hd= on another machine is an opt-in)
    target_hosts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: by target name: whether an object store is behind it (for tools that test the store itself)
    stores: Mapping[str, bool] = field(default_factory=dict)
    #: the names of the scenario's secrets (a tool's option may refer to one as ${secrets.NAME})
    secrets: tuple[str, ...] = ()
    #: each target's hosts in order with their MPI slots, for tools that place ranks over them (mdtest)
    host_slots: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    #: by target name: why each of its hosts has a file tree of its own (an RBD image each), '' when they share one
    own_trees: Mapping[str, str] = field(default_factory=dict)

    @property
    def destructive(self) -> bool:
        """Whether every target of the workload may be overwritten (none: False)."""
        return bool(self.targets) and all(t.destructive for t in self.targets)
