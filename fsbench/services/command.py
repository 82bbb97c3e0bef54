"""The generic service: the files, start commands, readiness probe and stop commands a scenario writes."""

from __future__ import annotations

from fsbench.services.base import ServicePlan


class CommandService:
    """Whatever the scenario's `files`, `start`, `ready` and `stop` say."""

    name = "command"
    section = None
    exports: tuple[str, ...] = ()

    def settings(self, checked: dict | None) -> object:
        return None

    def plan(self, service: object) -> ServicePlan:
        return ServicePlan(dict(getattr(service, "files", {})), list(getattr(service, "start", ())),
                           getattr(service, "ready", None), list(getattr(service, "stop", ())))


PLUGIN = CommandService()
