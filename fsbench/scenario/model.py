"""The validated scenario: plain typed data, nothing touched yet."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

USE_CASE_KEYS = (
    "application", "resources", "data_scale", "file_sizes", "access_pattern", "required_performance", "notes",
)


@dataclass(frozen=True)
class Host:
    """A machine that runs tools: this one (`local`) or one reached over SSH (its spec from the inventory)."""

    name: str
    transport: str = "local"
    address: str = ""
    groups: tuple[str, ...] = ()
    slots: int = 1
    spec: object = None  # fsbench.inventory.HostSpec for ssh hosts

    @property
    def reach(self) -> str:
        """The address other hosts use (fio servers, MPI hostfiles)."""
        spec_address = getattr(self.spec, "target", "") if self.spec is not None else ""
        return self.address or spec_address or ("127.0.0.1" if self.transport == "local" else self.name)


@dataclass(frozen=True)
class Service:
    """A server the scenario owns (start, readiness probe, stop) or merely expects (probe only)."""

    name: str
    description: str = ""
    hosts: tuple[str, ...] = ()
    managed: bool = True
    port: int | str | None = None  # a number, "auto" (a free port chosen at run time) or none
    ports: tuple[str, ...] = ()  # more named free ports: ${service.port_NAME}
    files: dict = field(default_factory=dict)
    start: tuple[str, ...] = ()
    ready: str | None = None
    ready_timeout_s: float = 60.0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class JuiceFS:
    """A JuiceFS volume fsbench formats and mounts at the target's path."""

    meta: str
    storage: str = "file"
    bucket: str = ""
    volume: str = ""
    binary: str = "juicefs"
    format_options: tuple[str, ...] = ()
    mount_options: tuple[str, ...] = ()
    access_key_env: str = ""
    secret_key_env: str = ""


@dataclass(frozen=True)
class Target:
    """A system under test: a directory or mount path, with optional setup/teardown commands."""

    name: str
    path: str
    description: str = ""
    baseline: bool = False
    setup: tuple[str, ...] = ()
    teardown: tuple[str, ...] = ()
    destructive: bool = False
    setup_timeout_s: float = 300.0
    hosts: tuple[str, ...] = ()
    kind: str = "directory"
    services: tuple[str, ...] = ()
    ready: str | None = None
    ready_timeout_s: float = 60.0
    juicefs: JuiceFS | None = None
    fstype: str | None = None


@dataclass(frozen=True)
class Sweep:
    """Parameters swept explicitly: the product of `product` axes times the zipped `zip` axes."""

    product: dict[str, list] = field(default_factory=dict)
    zip: dict[str, list] = field(default_factory=dict)

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

    name: str
    tool: str
    options: dict
    description: str = ""
    jobs: dict = field(default_factory=dict)
    job_file: str | None = None
    job_file_text: str | None = None
    sweep: Sweep = field(default_factory=Sweep)
    repetitions: int | None = None
    timeout_s: float | None = None
    targets: tuple[str, ...] = ()
    drop_caches: bool | None = None  # None: only after a prepare step laid files out
    optional: bool = False  # skip (not refuse) where the tool is missing
    dataset: str = ""  # cases of a target naming the same dataset share one data folder ("" = own)
    prepare: str = "auto"  # auto: lay out the files of a reading case first, untimed; none
    allow_commands: bool = False  # tool options that run commands (fio exec_prerun...) allowed


@dataclass(frozen=True)
class Settings:
    """Run-wide settings."""

    repetitions: int = 1
    case_timeout_s: float | None = None
    cooldown_s: float = 0.0
    output_root: str = "reports"
    progress: str = "auto"
    scratch: str = "/var/tmp/fsbench"


@dataclass(frozen=True)
class Monitor:
    """Resource monitoring during every case, on every host the case involves."""

    enabled: bool = True
    interval_s: float = 1.0
    processes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Deploy:
    """How `fsbench deploy` (and `before_run`) puts missing tools on hosts."""

    install: bool = False
    packages: dict = field(default_factory=dict)
    upload: dict = field(default_factory=dict)  # tool -> {"from": local path, "to": remote path}
    before_run: bool = False
    mdtest_method: str = "auto"  # auto (this machine's build where platforms match, else build), upload, build
    ior_source: str = ""  # IOR release tarball (path or URL) to build mdtest from
    vdbench_zip: str = ""  # the vdbench zip the user downloaded from Oracle
    vdbench_home: str = "/opt/vdbench"


@dataclass
class Scenario:
    """A fully validated scenario with variables resolved."""

    name: str
    file: str
    description: str
    use_case: dict[str, str]
    variables: dict[str, object]
    hosts: dict[str, Host]
    targets: dict[str, Target]
    workloads: dict[str, Workload]
    settings: Settings
    resolved: dict  # the resolved data, as written to the run directory's scenario.yaml
    base_dir: Path = field(default_factory=Path)
    services: dict[str, Service] = field(default_factory=dict)
    monitor: Monitor = field(default_factory=Monitor)
    inventory: dict = field(default_factory=dict)  # name -> HostSpec of the hosts reached over SSH
    inventory_file: str = ""
    deploy: Deploy = field(default_factory=Deploy)
    secrets: dict = field(default_factory=dict)  # name -> fsbench.secrets.SecretRef (never a value)

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
