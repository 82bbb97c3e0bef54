"""The service kind contract: a kind's typed settings and the commands that start, probe and stop it.

A service kind is any object that satisfies `ServiceKind[S]`, S being its settings type (fsbench's own
annotate `PLUGIN: ServiceKind[Redis]`, so mypy checks each). Its plan gets the service as a
`ServiceSpec[S]`, whose `settings` is already that type; the registry refuses a kind that lacks a
member or whose methods have other parameters than the contract's, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

S = TypeVar("S")
S_co = TypeVar("S_co", covariant=True)

#: what every service exports to targets as ${services.NAME.KEY}
BASE_EXPORTS = ("port", "host", "dir")


@dataclass(frozen=True)
class ServicePlan:
    """What a service is, as shell text with run-time placeholders (${service.port}...) still in it."""

    files: dict[str, str] = field(default_factory=dict)  # written into ${service.dir} first
    start: list[str] = field(default_factory=list)
    ready: str | None = None
    stop: list[str] = field(default_factory=list)
    #: more values for targets, ${services.NAME.KEY}: KEY -> text with the service's placeholders
    exports: dict[str, str] = field(default_factory=dict)
    #: values made up per run (keys): NAME -> length, as ${service.NAME} and ${services.S.NAME}; names in
    #: fsbench.core.secrets.SECRET_WORDS are secrets (masked, passed in the environment)
    generated: dict[str, int] = field(default_factory=dict)
    #: the port when the scenario gives none ("auto": a free one at run time)
    default_port: str | None = None
    #: more free ports the kind itself needs, as ${service.port_NAME} (beside the scenario's `ports:`)
    ports: tuple[str, ...] = ()
    #: files or folders on the host (text with placeholders) -> name under services/<name>/<host>/,
    #: fetched after the stop commands (a server's logs, kept when its data is deleted)
    logs: dict[str, str] = field(default_factory=dict)
    #: False: the kind's settings name a server that runs already (`existing:`), so fsbench treats the
    #: service as `managed: false`: only its ready probe runs, nothing is started, stopped or signalled
    managed: bool = True
    #: names (/proc/PID/comm) of the processes the service runs on its hosts: a monitor expects them there
    #: and nowhere else (the generic kind's are the command words of its start lines)
    processes: tuple[str, ...] = ()
    #: why a target using the service must run on the service's own hosts ("" when it may run anywhere):
    #: e.g. client files the kind makes on its host only; the scenario check refuses other client hosts
    clients_local_only: str = ""
    #: files in the service's folder (text with placeholders) its clients read (a lab's client conf): copied,
    #: at the same path, to every other host of the targets that use the service, before their setup; gone
    #: with the run's scratch space there
    client_files: tuple[str, ...] = ()
    #: folders beside them the clients write into (where that conf puts their logs and sockets), made there
    client_folders: tuple[str, ...] = ()


class ServiceSpec(Protocol[S_co]):
    """What a service kind reads of one of its services (fsbench.scenario.model.Service satisfies it)."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> S_co | None:
        """The kind's own settings, built by its `settings`; None when the service has no section."""
        ...

    @property
    def files(self) -> Mapping[str, str]: ...

    @property
    def start(self) -> tuple[str, ...]: ...

    @property
    def ready(self) -> str | None: ...

    @property
    def stop(self) -> tuple[str, ...]: ...

    @property
    def managed(self) -> bool:
        """False: the server runs already; fsbench only probes it."""
        ...


@runtime_checkable
class ServiceKind(Protocol[S]):
    """A kind of service, S its settings; one module under fsbench/services/ (or a package's entry point)."""

    @property
    def name(self) -> str: ...

    @property
    def section(self) -> object:
        """The checker of the kind's settings (a Section of S; None: it has none), under the service's key
        named like the kind (`redis: {appendfsync: always}`)."""
        ...

    @property
    def exports(self) -> tuple[str, ...]:
        """Keys it adds to ${services.NAME.*} beyond port, host and dir."""
        ...

    def settings(self, checked: dict[str, Any] | None) -> S | None:
        """Typed settings from the checked section."""
        ...

    def plan(self, service: ServiceSpec[S]) -> ServicePlan:
        """The service's files and commands (the generic kind: those the scenario wrote)."""
        ...
