"""A block device or a file tested raw (fio filename=, vdbench lun=): only with `destructive: true`."""

from __future__ import annotations

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind


class DeviceKind:
    """The target's path is the device (or file) itself; tools address it, nothing is created in it."""

    name = "device"
    address = "device"
    section = None
    client_process = ""

    def settings(self, checked: dict | None) -> None:
        return None

    def texts(self, settings: None) -> list[tuple[str, str]]:
        return []

    def check(self, target: KindTarget[None]) -> list[KindIssue]:
        if not target.destructive:
            return [(("destructive",), "a device target is written raw: its data is destroyed",
                     "set `destructive: true` on it if that is what you mean")]
        return []

    def plan(self, target: KindTarget[None], values: dict[str, str], scratch: str) -> KindPlan:
        return KindPlan()


PLUGIN: TargetKind[None] = DeviceKind()
