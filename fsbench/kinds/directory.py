"""A directory or mount point that exists (or that the target's own setup commands make)."""

from __future__ import annotations

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind


class DirectoryKind:
    """The default kind: fsbench only writes into <path>/fsbench-<run>/ and removes it again."""

    name = "directory"
    address = "directory"
    section = None
    client_process = ""

    def settings(self, checked: dict | None) -> None:
        return None

    def texts(self, settings: None) -> list[tuple[str, str]]:
        return []

    def check(self, target: KindTarget[None]) -> list[KindIssue]:
        return []

    def plan(self, target: KindTarget[None], values: dict[str, str], scratch: str) -> KindPlan:
        return KindPlan()


PLUGIN: TargetKind[None] = DirectoryKind()
