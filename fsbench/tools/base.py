"""The tool adapter interface and its registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from fsbench.core.tidy import ParseResult

if TYPE_CHECKING:
    from fsbench.scenario.plan import Case


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
    #: raw/<case>/<host>/ with its own outputs and parsed there; the tool's optional
    #: `combine_hosts({host: ParseResult})` then gives the rows (per host and an aggregate)
    per_host: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class HostInfo:
    """What a multi-host build needs of a host: how others reach it, MPI slots, its SSH settings."""

    name: str
    address: str
    slots: int = 1
    spec: object = None  # fsbench.core.inventory.HostSpec, for MPI's ssh launch agent
    facts: dict = field(default_factory=dict)  # what preflight gathered there (hosts.csv's columns)

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
    target_settings: object = None
    #: the object store behind the target (fsbench.kinds.StoreAccess: storage, bucket, env), for
    #: tools that test the store itself (juicefs objbench); None when the target has none
    store: object = None
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
    origin: object = None
    option: str = ""


@runtime_checkable
class ToolAdapter(Protocol):
    """A benchmark tool as a plug-in: one package under fsbench/tools/ exposing PLUGIN (or an entry point).

    Declarations read by the loader, preflight, deploy, ingest and the report:
    `accepts` (target addresses it works on: directory, device, url), `metrics` (metric -> unit it adds
    to the tidy table's vocabulary), `operations` (their natural order, for tables), `primary_metrics`
    (what a report shows first, in order of preference), `packages` (package manager -> names),
    `bring_your_own`; optionally `measures` (the vocabulary's metrics its rows carry: a report view of
    its workloads may name only those and its `metrics`; without it, any). Optional methods:
    `provide(transport, controller, binary, deploy settings)` (its own way onto a host),
    `prepare(case, dir, ctx)` (an untimed step before a case), `reads(...)`,
    `writes(...)` (a dataset's folder is emptied before such a case), `layout_bytes(...)` and
    `prepare_bytes(...)` (for plans, preflight's space check and datasets).
    """

    name: str
    #: a tool users bring themselves (vdbench: its licence forbids redistribution): where it is missing
    #: its cases are skipped with the reason instead of refusing the run
    bring_your_own: bool
    accepts: tuple[str, ...]
    metrics: dict[str, str]
    operations: tuple[str, ...]
    primary_metrics: tuple[str, ...]
    packages: dict[str, list[str]]

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict, ctx: dict) -> list[OptionIssue]:
        """Validate a workload's options before anything runs."""
        ...

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """A rough duration of one case, for plans and ETAs."""
        ...

    def build(self, case: "Case", test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """Build the command and input files of one case, writing its data under test_dir."""
        ...

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """Parse what a case left in its raw directory (raises ParseError)."""
        ...

    def parse_file(self, path: Path) -> ParseResult:
        """Parse one existing output file or directory (for `fsbench ingest`)."""
        ...

    def version_argv(self, options: dict | None = None) -> list[str]:
        """The command that prints the tool's version (or finds it), for a workload's options."""
        ...
