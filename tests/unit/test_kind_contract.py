"""The target kind contract (fsbench.api.kinds): a kind that does not fit it is refused as it registers, by
name, and a kind's settings are written once (its section's checker and its type from one dataclass)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import fsbench.api.registry
from fsbench.api.kinds import KIND_HOOKS, KindIssue, KindPlan, KindRegistry, KindTarget, TargetKind, settings_of
from fsbench.api.registry import PluginError
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.config.yamllines import LineMap
from fsbench.core.errors import FsbenchError
from fsbench.scenario.model import Target


@dataclass(frozen=True)
class Toy:
    """A toy kind's settings."""

    size: int = option(s.integer(1), 4, required=True, doc="how big")
    words: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple)


@dataclass(frozen=True)
class Other:
    """Settings of another kind."""

    colour: str = option(s.line_text, "red")


TOY = Section(Toy, "toy settings")


class ToyKind:
    """A kind that fits its contract."""

    name = "toy"
    address = "directory"
    section = TOY
    client_process = ""

    def settings(self, checked: dict | None) -> Toy | None:
        return TOY.build(checked)

    def texts(self, settings: Toy | None) -> list[tuple[str, str]]:
        return [("words", " ".join(settings.words))] if settings else []

    def check(self, target: KindTarget[Toy]) -> list[KindIssue]:
        return []

    def plan(self, target: KindTarget[Toy], values: dict[str, str], scratch: str) -> KindPlan:
        return KindPlan(prepare=[["mkdir", "-p", target.path]] * settings_of(target, self.name).size)


def _register(kind: object) -> str:
    registry = KindRegistry("target kind", "fsbench.target_kinds", (), TargetKind, KIND_HOOKS)
    with pytest.raises(PluginError) as err:
        registry.register(kind)  # type: ignore[arg-type]
    return str(err.value)


def test_a_kind_that_fits_registers_and_plans_with_its_typed_settings():
    registry = KindRegistry("target kind", "fsbench.target_kinds", (), TargetKind, KIND_HOOKS)
    kind: TargetKind[Toy] = ToyKind()
    assert registry.register(kind) is kind and registry.get("toy") is kind
    target = Target(name="t", path="/mnt/toy", kind="toy", settings=kind.settings({"size": 2, "words": ["a", "b"]}))
    assert target.settings == Toy(size=2, words=("a", "b"))
    assert kind.plan(target, {}, "/scratch").prepare == [["mkdir", "-p", "/mnt/toy"]] * 2


def test_a_hook_with_a_wrong_signature_is_refused_with_the_kinds_name():
    class NoScratch(ToyKind):
        name = "no-scratch"

        def plan(self, target: KindTarget[Toy], values: dict[str, str]) -> KindPlan:  # type: ignore[override]
            return KindPlan()

    assert _register(NoScratch()) == (
        "the target kind plug-in 'no-scratch' does not keep to its contract: plan(target: 'KindTarget[Toy]', values: "
        "'dict[str, str]') does not take what plan(self, target: 'KindTarget[S]', values: 'dict[str, str]', scratch: "
        "'str') is given: it has no parameter 'scratch'")


def test_a_misnamed_parameter_and_a_wrong_optional_hook_are_refused():
    class Renamed(ToyKind):
        name = "renamed"

        def check(self, tgt: KindTarget[Toy]) -> list[KindIssue]:  # type: ignore[override]
            return []

        def one_host(self) -> str:  # the OneHost hook takes the target
            return ""

    message = _register(Renamed())
    assert message.startswith("the target kind plug-in 'renamed' does not keep to its contract: check(tgt: "
                              "'KindTarget[Toy]') does not take what check(self, target: 'KindTarget[S]') is given: "
                              "its parameter 1 is 'tgt', not 'target'")
    assert message.endswith("one_host() does not take what one_host(self, target: 'KindTarget[Any]') is given: it "
                            "has no parameter 'target'")


def test_a_misspelt_hook_is_refused_instead_of_ignored():
    class Misspelt(ToyKind):
        name = "misspelt"

        def one_hots(self, target: KindTarget[Toy]) -> str:
            return "one host only"

    assert _register(Misspelt()).endswith("it has 'one_hots', which is no hook: did you mean 'one_host'?")

    class ChecksMisspelt(ToyKind):
        name = "checks-misspelt"
        validity_check = ()  # RbdKind's `validity_checks`, one letter short

    assert _register(ChecksMisspelt()).endswith("it has 'validity_check', which is no hook: did you mean "
                                                "'validity_checks'?")


def test_hooks_taking_other_settings_than_the_section_builds_are_refused():
    class Mixed(ToyKind):
        name = "mixed"

        def check(self, target: KindTarget[Other]) -> list[KindIssue]:  # type: ignore[override]
            return []

        def texts(self, settings: Other | None) -> list[tuple[str, str]]:  # type: ignore[override]
            return []

    message = _register(Mixed())
    assert message.startswith("the target kind plug-in 'mixed' does not keep to its contract: ")
    assert "`check` takes Other settings (target: KindTarget) but its section builds Toy" in message
    assert "`texts` takes Other settings" in message


def test_a_kind_lacking_a_member_is_refused_through_its_entry_point(monkeypatch):
    class Bare:
        name = "bare"

        def plan(self, target, values, scratch):
            return KindPlan()

    class EntryPoint:
        name, value = "bare", "fsbench_bare:PLUGIN"

        def load(self):
            return Bare()

    monkeypatch.setattr(fsbench.api.registry, "_entry_points", lambda group: [EntryPoint()])
    registry = KindRegistry("target kind", "fsbench.target_kinds", (), TargetKind, KIND_HOOKS)
    with pytest.raises(PluginError) as err:
        registry.names()
    assert str(err.value) == ("the target kind plug-in 'bare' (entry point bare = fsbench_bare:PLUGIN in "
                              "fsbench.target_kinds) lacks address, section, client_process, settings, texts, check: "
                              "a target kind declares name, address, section, client_process, settings, texts, "
                              "check, plan (fsbench.api.kinds.TargetKind)")


def test_every_built_in_kind_fits_its_contract():
    from fsbench.kinds import KINDS

    assert all(isinstance(k, TargetKind) for k in KINDS) and len(KINDS.names()) == 12


def test_a_section_checks_its_keys_and_builds_its_type_from_one_declaration():
    issues: list = []
    lm = LineMap("s.yaml", {("t", "toy", "sise"): 3})
    checked = TOY({"sise": 2, "words": "x"}, ("t", "toy"), lm, issues)
    assert [(i.line, i.message) for i in issues] == [
        (3, "unknown key 'sise'"), (None, "expected a list, got str 'x'"), (None, "missing required key 'size'")]
    assert issues[2].hint == "how big" and checked == {"words": [], "size": None}
    assert issues[0].hint == "did you mean 'size'? allowed here: size, words"
    assert TOY.build({"size": 3, "words": ["a"]}) == Toy(3, ("a",)) and TOY.build(None) is None
    assert TOY.default() == Toy()


def test_a_plan_without_its_section_says_which_target_and_what_to_add():
    with pytest.raises(FsbenchError, match=r"target 't': a toy target needs a `toy:` section: add it under "
                                           r"targets\.t"):
        ToyKind().plan(Target(name="t", path="/mnt/t", kind="toy"), {}, "/scratch")
