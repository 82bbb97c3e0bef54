"""A case whose tool writes nothing skips the quiet wait after it: nothing can arrive at the store later."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from fsbench.validity.case import CaseValidity


class _Tool:
    def __init__(self, writes: bool) -> None:
        self._writes = writes

    def writes(self, options: dict, job_file_text: str, jobs: object, job_file: str) -> bool:
        return self._writes


def _validity(writes: bool, tmp_path: Path) -> CaseValidity:
    sc = SimpleNamespace(settings=SimpleNamespace(validity={}), targets={"t": SimpleNamespace(services=(), path="/mnt/t")},
                         services={}, resolve_hosts=lambda names: list(names))
    case = SimpleNamespace(tool="fio", options={}, job_file_text="", jobs=(), job_file="", target="t", hosts=("h",),
                           drop_caches=False)
    return CaseValidity(sc, case, {}, {"h": None}, tmp_path, (_Tool(writes), None))  # type: ignore[arg-type, dict-item]


def test_a_reading_tool_does_not_wait_for_the_store_to_go_quiet(tmp_path: Path) -> None:
    waited: list[bool] = []
    for writes in (False, True):
        v = _validity(writes, tmp_path)
        v.watch.settle = lambda: waited.append(True)  # type: ignore[method-assign]
        v.settle()
    assert waited == [True]  # only the writing case waited
