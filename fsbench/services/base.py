"""The service kind protocol: a kind's settings section and the commands that start, probe and stop it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

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


@runtime_checkable
class ServiceKind(Protocol):
    """A kind of service; one module under fsbench/services/ (or a package's entry point)."""

    name: str
    #: the kind's settings section (under the service's key named like the kind), or None
    section: object
    #: keys it adds to ${services.NAME.*} beyond port, host and dir
    exports: tuple[str, ...]

    def settings(self, checked: dict | None) -> object:
        """Typed settings from the checked section."""
        ...

    def plan(self, service: object) -> ServicePlan:
        """The service's files and commands (the generic kind: those the scenario wrote)."""
        ...
