"""The generic collector: the scenario's own command (iostat -x 1, ceph -s, redis-cli --stat...), its
output kept in raw/ beside the case, not parsed."""

from __future__ import annotations

from collections.abc import Iterable

from fsbench.api.collectors import Collected, CollectorKind, CollectorSpec
from fsbench.core.shell import render, sh


class CommandCollector:
    """Whatever `command:` says, until the case's tool ends."""

    name = "command"
    tool = ""
    target_kinds: tuple[str, ...] = ()

    def check(self, collector: CollectorSpec) -> list[tuple[tuple, str, str]]:
        if not collector.command:
            return [((), "a command collector needs `command:`", "e.g. command: iostat -x 1")]
        return []

    def command(self, collector: CollectorSpec, values: dict[str, str]) -> list[str]:
        return sh(render(str(collector.command), values))

    def after(self, collector: CollectorSpec, output: str) -> list[str] | None:
        return None

    def parse(self, collector: CollectorSpec, output: str, after: str | None, host: str) -> Collected:
        return Collected()

    def parse_lines(self, collector: CollectorSpec, output: Iterable[str], after: Iterable[str] | None,
                    host: str) -> Collected:
        """Nothing to parse: the output (any size) is not even read."""
        return Collected()


PLUGIN: CollectorKind = CommandCollector()
