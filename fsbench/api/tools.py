"""The tool plug-in contract: what a tool declares, what it is given, and its optional hooks.

A tool is any object that satisfies `ToolAdapter` (fsbench's own annotate `PLUGIN: ToolAdapter`, so mypy
checks them). Each optional hook is a small Protocol of its own; the core asks `isinstance(tool, Reads)`,
never a name string, and the registry refuses a plug-in whose hook has another signature than its Protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from fsbench.api.case import Case
from fsbench.api.transport import Transport
from fsbench.core.tidy import ParseResult, higher_is_better


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
    spec: Any = None  # fsbench.core.inventory.HostSpec, for MPI's ssh launch agent
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

    def multi(self) -> bool:
        """Whether the case spans several hosts (each tool then uses its own multi-node engine)."""
        return len(self.hosts) > 1


@dataclass(frozen=True)
class OptionIssue:
    """A problem with a workload's options: key path below the workload, message, hint.

    `origin` (fsbench.tools.fio.jobfile.Origin) is set when the option came from a job file: the
    issue is then located at that file and line, and `option` names it there (`[job] filename`).
    """

    path: str
    message: str
    hint: str = ""
    origin: Any = None
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

    @property
    def destructive(self) -> bool:
        """Whether every target of the workload may be overwritten (none: False)."""
        return bool(self.targets) and all(t.destructive for t in self.targets)


@runtime_checkable
class ToolAdapter(Protocol):
    """A benchmark tool as a plug-in: one package under fsbench/tools/ exposing PLUGIN (or an entry point).

    Declarations read by the loader, preflight, deploy, ingest and the report; optional hooks are the
    Protocols below (TOOL_HOOKS).
    """

    @property
    def name(self) -> str:
        """The tool's name in scenarios (`tool: fio`)."""
        ...

    @property
    def bring_your_own(self) -> bool:
        """A tool users bring themselves (vdbench): where it is missing its cases are skipped with the reason."""
        ...

    @property
    def accepts(self) -> tuple[str, ...]:
        """Target addresses it works on (directory, device, url) and kinds it reaches itself."""
        ...

    @property
    def metrics(self) -> dict[str, str]:
        """Metric -> unit it adds to the tidy table's vocabulary."""
        ...

    @property
    def operations(self) -> tuple[str, ...]:
        """Its operations in their natural order, for tables."""
        ...

    @property
    def primary_metrics(self) -> tuple[str, ...]:
        """What a report shows first, in order of preference."""
        ...

    @property
    def packages(self) -> dict[str, list[str]]:
        """Package manager -> the names that install it."""
        ...

    def check_options(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                      ctx: CheckContext) -> list[OptionIssue]:
        """Validate a workload's options before anything runs."""
        ...

    def estimate_seconds(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                         job_file: str | None = None) -> float:
        """A rough duration of one case, for plans and ETAs."""
        ...

    def build(self, case: Case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """Build the command and input files of one case, writing its data under test_dir."""
        ...

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """Parse what a case left in its raw directory (raises ParseError)."""
        ...

    def parse_file(self, path: Path) -> ParseResult:
        """Parse one existing output file or directory (for `fsbench ingest`)."""
        ...

    def version_argv(self, options: dict[str, Any] | None = None) -> list[str]:
        """The command that prints the tool's version (or finds it), for a workload's options."""
        ...


# --- optional hooks: methods -------------------------------------------------------------------------


@runtime_checkable
class LongestSeconds(Protocol):
    """The longest a case may run as the tool allows it (fio at its rate_min), for the case timeout."""

    def longest_seconds(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                        job_file: str | None = None) -> float: ...


@runtime_checkable
class Reads(Protocol):
    """Whether a case reads files it needs laid out first (a prepare step then runs)."""

    def reads(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
              job_file: str | None = None) -> bool: ...


@runtime_checkable
class Writes(Protocol):
    """Whether a case makes its files from scratch (a dataset's folder is emptied before it)."""

    def writes(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
               job_file: str | None = None) -> bool: ...


@runtime_checkable
class LayoutBytes(Protocol):
    """Bytes a prepare step lays out, for preflight's space check."""

    def layout_bytes(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                     job_file: str | None = None) -> float: ...


@runtime_checkable
class PrepareBytes(Protocol):
    """Bytes the prepare step writes (only the files of what reads), for plans."""

    def prepare_bytes(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                      job_file: str | None = None) -> float: ...


@runtime_checkable
class DeclaresWorkingSet(Protocol):
    """A tool that can say how many distinct bytes its buffered reads of a case cover (fio: size x numjobs)."""

    def read_working_set(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                         job_file: str | None = None) -> float: ...


@runtime_checkable
class PrepareStep(Protocol):
    """An untimed layout pass before a case that reads (None: nothing to lay out)."""

    def prepare(self, case: Case, test_dir: str, ctx: BuildContext | None = None) -> Invocation | None: ...


@runtime_checkable
class LayoutKey(Protocol):
    """What decides the files a prepare step lays out: two steps with one key write them once."""

    def layout_key(self, prep: Invocation) -> str: ...


@runtime_checkable
class CombinesHosts(Protocol):
    """The rows of a per-host case (Invocation.per_host) from each host's parse: per host and an aggregate."""

    def combine_hosts(self, parts: dict[str, ParseResult]) -> ParseResult: ...


@runtime_checkable
class Provides(Protocol):
    """The tool's own way onto a host (a build, the user's zip); returns what it did."""

    def provide(self, t: Transport, controller: Transport, binary: str, settings: Any) -> str: ...


# --- optional hooks: declarations ----------------------------------------------------------------------


@runtime_checkable
class DeclaresPrimaryMetrics(Protocol):
    """What a report shows first (every tool; a collector kind whose rows a report shows too)."""

    @property
    def primary_metrics(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresOperations(Protocol):
    """Operations in their natural order, for tables (every tool; a collector kind too)."""

    @property
    def operations(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresMetrics(Protocol):
    """Metric -> unit added to the tidy table's vocabulary (every tool)."""

    @property
    def metrics(self) -> dict[str, str]: ...


@runtime_checkable
class DeclaresPrepares(Protocol):
    """Where a case that reads gets its data written first: addresses or kinds (fio: a folder, an RBD image)."""

    @property
    def prepares(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresMeasures(Protocol):
    """The vocabulary's metrics its rows carry (a report view may name only those and its `metrics`)."""

    @property
    def measures(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresViews(Protocol):
    """The report's views of its workloads without `report.views`."""

    @property
    def views(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresColumns(Protocol):
    """The tool's own table: (heading, metrics) pairs (juicefs bench's ITEM | VALUE | COST)."""

    @property
    def columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]: ...


@runtime_checkable
class DeclaresOrder(Protocol):
    """The column its tables order rows by instead of the operations' natural order."""

    @property
    def order_by(self) -> str: ...


@runtime_checkable
class DeclaresHigherIsBetter(Protocol):
    """Its own metrics where a bigger value is better."""

    @property
    def higher_is_better(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresPlaceholderOptions(Protocol):
    """Options whose ${...} placeholders the tool fills itself (objbench's access_key: ${secrets.NAME})."""

    @property
    def placeholder_options(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresDeploySection(Protocol):
    """The schema of its own section under `deploy:` (fsbench.config.schema.Struct)."""

    @property
    def deploy_section(self) -> Any: ...


@runtime_checkable
class DeclaresValidityChecks(Protocol):
    """What fsbench checks of its numbers (fsbench.validity.checks.Check objects)."""

    @property
    def validity_checks(self) -> tuple[Any, ...]: ...


#: every optional hook of a tool; the registry checks the signature of each one a plug-in has
TOOL_HOOKS: tuple[type, ...] = (
    LongestSeconds, Reads, Writes, LayoutBytes, PrepareBytes, DeclaresWorkingSet, PrepareStep, LayoutKey,
    CombinesHosts, Provides, DeclaresPrepares, DeclaresMeasures, DeclaresViews, DeclaresColumns, DeclaresOrder,
    DeclaresHigherIsBetter, DeclaresPlaceholderOptions, DeclaresDeploySection, DeclaresValidityChecks)


@dataclass(frozen=True)
class Declarations:
    """A plug-in's declarations (a tool's, a collector kind's, or none: None) with their defaults filled in."""

    primary_metrics: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    metrics: dict[str, str] = field(default_factory=dict)
    bring_your_own: bool = False
    prepares: tuple[str, ...] = ("directory",)
    measures: tuple[str, ...] | None = None
    views: tuple[str, ...] = ("table",)
    columns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    order_by: str = ""
    higher_is_better: tuple[str, ...] = ()
    placeholder_options: tuple[str, ...] = ()
    deploy_section: Any = None
    validity_checks: tuple[Any, ...] = ()


#: declarations by plug-in identity (the plug-in kept with them, so its id is not reused): a plug-in declares
#: once, and a report asks for every cell, where 13 runtime Protocol checks each time cost seconds
_DECLARED: dict[int, tuple[object, Declarations]] = {}


def declarations(tool: object) -> Declarations:
    """What a tool (or any plug-in, or None) declares, defaults for the rest: for code that reads the rows of
    tools and collectors alike (the report), where a tool's required members are one plug-in's optional ones."""
    hit = _DECLARED.get(id(tool))
    if hit is None or hit[0] is not tool:
        hit = _DECLARED[id(tool)] = (tool, _declared(tool))
    return hit[1]


def _declared(tool: object) -> Declarations:
    d = Declarations()
    return Declarations(
        primary_metrics=tuple(tool.primary_metrics) if isinstance(tool, DeclaresPrimaryMetrics) else (),
        operations=tuple(tool.operations) if isinstance(tool, DeclaresOperations) else (),
        metrics=dict(tool.metrics) if isinstance(tool, DeclaresMetrics) else {},
        bring_your_own=bool(tool.bring_your_own) if isinstance(tool, ToolAdapter) else False,
        prepares=tuple(tool.prepares) if isinstance(tool, DeclaresPrepares) else d.prepares,
        measures=tuple(tool.measures) if isinstance(tool, DeclaresMeasures) else None,
        views=tuple(tool.views) or d.views if isinstance(tool, DeclaresViews) else d.views,
        columns=tuple(tool.columns) if isinstance(tool, DeclaresColumns) else (),
        order_by=tool.order_by if isinstance(tool, DeclaresOrder) else "",
        higher_is_better=tuple(tool.higher_is_better) if isinstance(tool, DeclaresHigherIsBetter) else (),
        placeholder_options=tuple(tool.placeholder_options) if isinstance(tool, DeclaresPlaceholderOptions) else (),
        deploy_section=tool.deploy_section if isinstance(tool, DeclaresDeploySection) else None,
        validity_checks=tuple(tool.validity_checks) if isinstance(tool, DeclaresValidityChecks) else (),
    )


def better_big(metric: str, plugin: object | None = None) -> bool:
    """Whether a bigger value of this metric is better, by what the plug-in whose rows carry it declares."""
    d = declarations(plugin)
    return higher_is_better(metric, d.higher_is_better, d.metrics)
