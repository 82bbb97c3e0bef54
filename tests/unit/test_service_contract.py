"""The service kind contract (fsbench.api.services): a kind that does not fit it is refused as it registers, by
name; a kind's settings are one declaration (its section's checker and its type)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from fsbench.api.registry import PluginError, Registry
from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.config.yamllines import LineMap
from fsbench.scenario.model import Service


@dataclass(frozen=True)
class Echo:
    """A toy service's settings."""

    greeting: str = option(s.line_text, "hello", doc="what it says")


ECHO = Section(Echo, "echo settings")


class EchoKind:
    """A service kind that fits its contract."""

    name = "echo"
    section = ECHO
    exports: tuple[str, ...] = ("greeting",)

    def settings(self, checked: dict | None) -> Echo:
        return ECHO.build(checked) or ECHO.default()

    def plan(self, service: ServiceSpec[Echo]) -> ServicePlan:
        spec = service.settings or ECHO.default()
        return ServicePlan(start=[f"echo {spec.greeting}"], exports={"greeting": spec.greeting})


def _registry() -> Registry:
    return Registry("service kind", "fsbench.service_kinds", (), ServiceKind, ())


def test_a_service_kind_that_fits_registers_and_plans_with_its_typed_settings():
    kind: ServiceKind[Echo] = EchoKind()
    registry = _registry()
    assert registry.register(kind) is kind
    service = Service(name="e", kind="echo", settings=kind.settings({"greeting": "hi"}))
    assert kind.plan(service).start == ["echo hi"] and kind.settings(None) == Echo("hello")


def test_a_service_kind_whose_plan_takes_other_parameters_is_refused_with_its_name():
    class TwoArgs(EchoKind):
        name = "two-args"

        def plan(self, service: ServiceSpec[Echo], host: str) -> ServicePlan:  # type: ignore[override]
            return ServicePlan()

    with pytest.raises(PluginError) as err:
        _registry().register(TwoArgs())
    assert str(err.value) == ("the service kind plug-in 'two-args' does not keep to its contract: plan(service: "
                              "'ServiceSpec[Echo]', host: 'str') does not take what plan(self, service: "
                              "'ServiceSpec[S]') is given: it also needs 'host', which callers do not give")


def test_a_service_kind_lacking_exports_is_refused():
    class NoExports:
        name = "no-exports"
        section = None

        def settings(self, checked: dict | None) -> None:
            return None

        def plan(self, service: ServiceSpec[None]) -> ServicePlan:
            return ServicePlan()

    with pytest.raises(PluginError, match="the service kind plug-in 'no-exports' lacks exports: a service kind declares name, section, exports, "
                                          "settings, plan"):
        _registry().register(NoExports())  # type: ignore[arg-type]


def test_every_built_in_service_kind_fits_and_keeps_its_messages():
    from fsbench.services import SERVICE_KINDS

    assert all(isinstance(k, ServiceKind) for k in SERVICE_KINDS) and "redis" in SERVICE_KINDS.names()
    redis = SERVICE_KINDS.get("redis")
    issues: list = []
    checked = redis.section({"appendfsync": "sometimes", "existing": {"url": "redis://:pw@h:1"}},  # type: ignore
                            ("services", "r", "redis"), LineMap("s.yaml"), issues)
    assert [i.message for i in issues] == [
        "expected one of always, everysec, no; got 'sometimes'",
        "the URL holds a password: it would be written into the run directory"]
    assert redis.settings(checked).existing is None and redis.settings(None).appendfsync == "everysec"


def test_ceph_labs_nested_osds_are_one_declaration_too():
    from fsbench.services.ceph_lab import SECTION, CephLab, Osd

    issues: list = []
    checked = SECTION({"osds": [{"store": "memstore", "size": "1g", "class": "ssd"}, {"size": "2g"}],
                       "osd_memory_target": "1g"}, ("services", "ceph", "ceph-lab"), LineMap("s.yaml"), issues)
    lab = SECTION.build(checked)
    assert issues == [] and lab is not None
    assert lab.osds == (Osd("memstore", 2**30, "ssd"), Osd("bluestore", 2 * 2**30, "hdd"))
    assert isinstance(lab.osds[0].size, int) and lab.osd_memory_target == 2**30
    assert SECTION.build(SECTION({"osds": []}, (), LineMap("s.yaml"), issues)).osds == CephLab().osds  # type: ignore
