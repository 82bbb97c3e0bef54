"""A plug-in's settings written once: one dataclass of option() fields is its section's checker and its type.

    @dataclass(frozen=True)
    class Fuse:
        mount: str = option(s.command_line, "", required=True, doc="shell text that mounts ${target.path}")

    SECTION = Section(Fuse, "fuse settings")     # checks `fuse:` in a scenario, with line numbers
    SECTION.build(checked)                       # -> Fuse | None, each key's checked value or its default

The same mechanism writes the scenario itself (fsbench.scenario.model, fsbench.config.schema.option).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from fsbench.config import schema as s
from fsbench.config.yamllines import LineMap

S = TypeVar("S")


class Section(s.Struct, Generic[S]):
    """The checker of a plug-in's section, derived from its settings dataclass, which it also builds."""

    def __init__(self, cls: type[S], what: str,
                 extra: Callable[[dict[str, Any], tuple[Any, ...], LineMap, list[Any]], None] | None = None):
        derived = s.struct_of(cls, what, extra=extra)
        super().__init__(derived.keys, derived.what, derived.extra)
        self.type = cls

    def build(self, checked: dict[str, Any] | None, **given: object) -> S | None:
        """The typed settings of a checked section; None when the scenario has no such section."""
        if not checked:
            return None
        built: S = s.build(self.type, checked, **given)
        return built

    def default(self) -> S:
        """The settings of a section the scenario left out, for kinds that have defaults for every key."""
        return self.type()
