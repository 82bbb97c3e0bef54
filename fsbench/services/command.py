"""The generic service: the files, start commands, readiness probe and stop commands a scenario writes."""

from __future__ import annotations

from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec


class CommandService:
    """Whatever the scenario's `files`, `start`, `ready` and `stop` say."""

    name = "command"
    section = None
    exports: tuple[str, ...] = ()

    def settings(self, checked: dict | None) -> None:
        return None

    def plan(self, service: ServiceSpec[None]) -> ServicePlan:
        return ServicePlan(dict(service.files), list(service.start), service.ready, list(service.stop))


PLUGIN: ServiceKind[None] = CommandService()
