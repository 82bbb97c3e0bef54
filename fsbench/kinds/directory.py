"""A directory or mount point that exists (or that the target's own setup commands make)."""

from __future__ import annotations

from fsbench.kinds.base import KindPlan


class DirectoryKind:
    """The default kind: fsbench only writes into <path>/fsbench-<run>/ and removes it again."""

    name = "directory"
    address = "directory"
    section = None
    client_process = ""

    def settings(self, checked: dict | None) -> object:
        return None

    def texts(self, settings: object) -> list[tuple[str, str]]:
        return []

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        return []

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        return KindPlan()


PLUGIN = DirectoryKind()
