"""A block device or a file tested raw (fio filename=, vdbench lun=): only with `destructive: true`."""

from __future__ import annotations

from fsbench.kinds.base import KindPlan


class DeviceKind:
    """The target's path is the device (or file) itself; tools address it, nothing is created in it."""

    name = "device"
    address = "device"
    section = None
    client_process = ""

    def settings(self, checked: dict | None) -> object:
        return None

    def texts(self, settings: object) -> list[tuple[str, str]]:
        return []

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        if not getattr(target, "destructive", False):
            return [(("destructive",), "a device target is written raw: its data is destroyed",
                     "set `destructive: true` on it if that is what you mean")]
        return []

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        return KindPlan()


PLUGIN = DeviceKind()
