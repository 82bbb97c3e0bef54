"""The validated scenario: plain typed data, nothing touched yet.

Each dataclass here is also the declaration of its part of the file: fields made with `option()`
carry their checker, documentation and default, and the loader derives its checks from them
(fsbench.config.schema.struct_of), so the shape of a scenario is written down once. The run-wide
sections live in run_settings, the report's in report_settings, checkers of single values in value_checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.inventory import HostSpec
from fsbench.scenario import repetitions as reps
from fsbench.scenario import value_checks as v
from fsbench.scenario.report_settings import Report
from fsbench.scenario.run_settings import Deploy, Monitor, Settings

USE_CASE_KEYS = (
    "application", "resources", "data_scale", "file_sizes", "access_pattern", "required_performance", "notes",
)
#: a campaign is hours of measurements, not millions of cases: bigger plans are refused at validation,
#: before the cases are even listed (a 600-byte sweep can otherwise ask for 10^12 of them)
MAX_REPETITIONS = reps.MAX_REPETITIONS
MAX_SWEEP_POINTS = 10_000
MAX_CASES = 10_000
#: shell commands: values of variables put into them are shell-quoted (fsbench.scenario.variables)
_commands = s.list_of(s.command, allow_single=True)


@dataclass(frozen=True)
class Host:
    """A machine that runs tools: this one (`local`) or one reached over SSH (its spec from the inventory)."""

    name: str = ""
    transport: str = option(s.string, "local", doc="local, or ssh (the default for a host of the inventory), "
                                                  "ssh-relay (through relay hosts), or a plug-in's transport")
    address: str = option(s.address, "")
    groups: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple)
    slots: int = option(s.integer(1), 1)
    spec: HostSpec | None = None  # the inventory's, for ssh hosts

    @property
    def reach(self) -> str:
        """The address other hosts use (fio servers, MPI hostfiles)."""
        spec_address = self.spec.target if self.spec is not None else ""
        return self.address or spec_address or ("127.0.0.1" if self.transport == "local" else self.name)


@dataclass(frozen=True)
class Service:
    """A server the scenario owns (start, readiness probe, stop) or merely expects (probe only)."""

    name: str = ""
    description: str = option(s.string, "")
    hosts: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple, doc="hosts or groups it runs on")
    managed: bool = option(s.boolean, True, doc="false: already running; only the ready probe runs")
    port: int | str | None = option(v.port, None, doc="a number, or auto (a free port chosen at run time)")
    ports: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple,
                                    doc="names of more free ports: ${service.port_NAME}")
    files: dict = option(s.mapping_of(s.string, name_rule=True, what="file"), factory=dict, convert=dict)
    start: tuple[str, ...] = option(_commands, (), convert=tuple)
    ready: str | None = option(s.command, None)
    ready_timeout_s: float = option(s.duration, 60.0, key="ready_timeout")
    stop: tuple[str, ...] = option(_commands, (), convert=tuple)
    kind: str = option(s.string, "command", doc="command (start/ready/stop as written), or a plug-in's kind")
    #: the kind's own settings (its section), typed by the kind
    settings: object = None


@dataclass(frozen=True)
class Target:
    """A system under test: a path (folder, device or URL) of some kind, with optional setup/teardown."""

    name: str = ""
    path: str = option(s.line_text, "", required=True,
                       doc="the directory or mount point under test (a device or URL for such kinds)")
    description: str = option(s.string, "")
    baseline: bool = option(s.boolean, False)
    setup: tuple[str, ...] = option(_commands, (), convert=tuple)
    teardown: tuple[str, ...] = option(_commands, (), convert=tuple)
    destructive: bool = option(s.boolean, False)
    existing_mount: bool = option(s.boolean, False,
                                  doc="the path is a mount the user made: fsbench only checks it is a mount "
                                      "point, and never mounts, unmounts or removes it")
    setup_timeout_s: float = option(s.duration, 300.0, key="setup_timeout")
    hosts: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple)
    kind: str = option(s.string, "directory", doc="directory, device, juicefs, or a plug-in's kind")
    services: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple)
    ready: str | None = option(s.command, None)
    ready_timeout_s: float = option(s.duration, 60.0, key="ready_timeout")
    extends: str | None = option(s.string, None)
    fstype: str | None = option(s.string, None,
                                doc="the file system type the path must be on (findmnt), e.g. fuse.juicefs")
    client_process: str | None = option(v.process_name, None,
                                        doc="the process that serves this target on its hosts (as in "
                                            "/proc/PID/comm, e.g. s3fs): its CPU and peak memory are "
                                            "reported beside each result")
    #: the kind's own settings (its section, e.g. `juicefs:`), typed by the kind
    settings: object = None


@dataclass(frozen=True)
class Sweep:
    """Parameters swept explicitly: the product of `product` axes times the zipped `zip` axes."""

    product: dict[str, list] = option(s.mapping_of(s.list_of(s.scalar), name_rule=False), factory=dict, convert=dict)
    zip: dict[str, list] = option(s.mapping_of(s.list_of(s.scalar), name_rule=False), factory=dict, convert=dict)

    def size(self) -> int:
        """How many points there are, without listing them."""
        import math

        zipped = min((len(v) for v in self.zip.values()), default=1)
        return math.prod(len(v) for v in self.product.values()) * zipped

    def points(self) -> list[dict]:
        """Every combination, in declaration order."""
        import itertools

        prod_names = list(self.product)
        prod = [dict(zip(prod_names, combo)) for combo in itertools.product(*self.product.values())]
        zip_names = list(self.zip)
        zipped = [dict(zip(zip_names, combo)) for combo in zip(*self.zip.values())] if zip_names else [{}]
        return [{**p, **z} for p in prod for z in zipped]


@dataclass(frozen=True)
class Workload:
    """A tool with its options, an optional job file, explicit sweeps and repetitions."""

    name: str = ""
    tool: str = option(s.string, "", required=True,
                       doc="fio, mdtest, vdbench, juicefs-bench, juicefs-objbench, metabench, nnbench, "
                           "or a plug-in's tool")
    options: dict = option(s.mapping_of(s.scalar_or_list, name_rule=False), factory=dict, convert=dict)
    description: str = option(s.string, "")
    jobs: dict = option(s.mapping_of(s.mapping_of(s.scalar, name_rule=False), what="job"), factory=dict,
                        convert=dict)
    job_file: str | None = option(s.string, None, doc="an existing fio job file, relative to the scenario file")
    job_file_text: str | None = None
    sweep: Sweep = field(default_factory=Sweep)
    repetitions: reps.Repetitions | None = option(reps.check, None, doc="a count, or {min, max, target_ci, "
                                                  "budget}: adaptive (fsbench.scenario.repetitions)")
    timeout_s: float | None = option(s.duration, None, key="timeout")
    targets: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple, doc="default: every target")
    drop_caches: bool | None = option(s.boolean, None, doc="sync and drop the page cache on every involved host "
                                      "before each case (default: only after a prepare step laid out files)")
    drop_caches_level: int = option(v.drop_level, 3, doc="what drop_caches drops, the value written to "
                                    "/proc/sys/vm/drop_caches: 1 the page cache only (seed 001's `echo 1`), "
                                    "3 the page cache, dentries and inodes (the default)")
    drop_client_cache: bool | None = option(s.boolean, None, doc="empty the target client's own cache folders "
                                            "(s3fs use_cache, rclone's VFS cache, JuiceFS's cache-dir), "
                                            "unmounted, before each case (default: as drop_caches)")
    optional: bool = option(s.boolean, False, doc="where its tool is not installed, skip the cases (said in "
                                                  "the report) instead of refusing to run")
    dataset: str = option(s.name, "", doc="cases naming the same dataset on a target share one data folder "
                                          "(default: a reading workload's own)")
    overwrite: bool = option(s.boolean, False, doc="write over the dataset's files as the last case left them "
                                                   "(default: a case that writes them starts from an empty "
                                                   "dataset folder, so it measures new files)")
    prepare: str = option(s.one_of("auto", "none"), "auto",
                          doc="auto: before a case that reads, lay its files out untimed and unmonitored")
    allow_commands: bool = option(s.boolean, False, doc="allow tool options that run commands "
                                                        "(fio exec_prerun, exec_postrun, exec engine)")


@dataclass(frozen=True)
class Collector:
    """A command beside every case it applies to, on the case's hosts: juicefs stats, juicefs profile's
    access log, iostat... Its output goes to raw/<case>/<host>/collector-<name>.txt, and where its kind
    has a parser, into a time series (collector-<name>-<host>.csv) and rows of the tidy table."""

    name: str = ""
    kind: str = option(s.string, "command", doc="command (your own), juicefs-stats, juicefs-profile, or a plug-in's")
    description: str = option(s.string, "")
    command: str | None = option(s.command, None, doc="kind command: shell text, e.g. iostat -x 1; may use "
                                                     "${target.path}, ${host.name}, ${case.id}, ${case.dir}")
    targets: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple,
                                      doc="default: every target (of the kinds it applies to)")
    workloads: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple, doc="default: every workload")
    hosts: tuple[str, ...] = option(s.list_of(s.string), (), convert=tuple,
                                    doc="hosts or groups it runs on; default: the case's hosts")
    interval_s: float = option(s.duration, 1.0, key="interval", doc="juicefs-stats: seconds between lines")
    options: dict = option(s.mapping_of(s.scalar, name_rule=False), factory=dict, convert=dict,
                           doc="the kind's own: binary (juicefs), verbosity (juicefs-stats)")

    def applies(self, target: str, workload: str, targets: list[str]) -> bool:
        """Whether it runs beside a case of this target and workload (targets: those it may apply to)."""
        return target in (self.targets or targets) and (not self.workloads or workload in self.workloads)


USE_CASE = s.Struct({k: s.Key(s.string, default="") for k in USE_CASE_KEYS}, what="use case")


@dataclass
class Scenario:
    """A fully validated scenario with variables resolved.

    Its option() fields are the file's top-level keys, in the order the file documents them; a part
    built from the plug-ins (`s.part("target", many=True)`) is supplied by the loader
    (fsbench.scenario.sections.scenario_struct), which also builds this by keyword.
    """

    name: str = option(s.name, "", required=True, doc="a short name, used in the run directory's name")
    description: str = option(s.string, "")
    use_case: dict[str, str] = option(USE_CASE, factory=dict, blank=dict)
    variables: dict[str, object] = option(s.anything, factory=dict, blank=dict)
    inventory_file: str = option(s.string, "", key="inventory",
                                 doc="a host inventory file (relative to this file); --inventory overrides it")
    hosts: dict[str, Host] = option(s.part("host", many=True), factory=dict, blank=dict)
    settings: Settings = option(s.part("settings"), factory=Settings)
    services: dict[str, Service] = option(s.part("service", many=True), factory=dict, blank=dict)
    report: Report = option(s.part("report"), factory=Report)
    monitor: Monitor = option(s.part("monitor"), factory=Monitor)
    collectors: dict[str, Collector] = option(s.part("collector", many=True), factory=dict, blank=dict,
                                              doc="commands beside each case: juicefs stats, juicefs profile's "
                                                  "access log, iostat...")
    deploy: Deploy = option(s.part("deploy"), factory=Deploy)
    #: name -> fsbench.core.secrets.SecretRef (never a value)
    secrets: dict = option(s.part("secret", many=True), factory=dict, blank=dict,
                           doc="NAME: {env: VARIABLE} or {file: PATH}; used as ${secrets.NAME}, never written anywhere")
    targets: dict[str, Target] = option(s.part("target", many=True), factory=dict, required=True)
    workloads: dict[str, Workload] = option(s.part("workload", many=True), factory=dict, required=True)
    file: str = ""
    #: the resolved data, as written to the run directory's scenario.yaml
    resolved: dict = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path)
    inventory: dict = field(default_factory=dict)  # name -> HostSpec of the hosts reached over SSH
    #: what the user should know but that does not stop the run (a literal secret in the file)
    warnings: list[str] = field(default_factory=list)

    def collector_targets(self, c: Collector, kinds: tuple[str, ...]) -> list[str]:
        """The targets a collector may apply to: its own list, else every target of the kinds it serves."""
        return list(c.targets) or [t.name for t in self.targets.values() if not kinds or t.kind in kinds]

    def resolve_hosts(self, names: tuple[str, ...] | list[str]) -> list[str]:
        """Host names for a list of host or group names (default: the first host)."""
        if not names:
            return [next(iter(self.hosts))]
        out: list[str] = []
        for n in names:
            members = [n] if n in self.hosts else [h.name for h in self.hosts.values() if n in h.groups]
            out += [m for m in members if m not in out]
        return out

    @property
    def baseline(self) -> str:
        """The baseline target's name (the first target when none is marked)."""
        for t in self.targets.values():
            if t.baseline:
                return t.name
        return next(iter(self.targets))
