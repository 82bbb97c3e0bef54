"""How the suite spreads over pytest-xdist workers (tox runs `pytest -n 3`): work units, and their order.

A work unit goes to one worker whole and runs there in order. An end-to-end module is one unit, so its
module-scoped servers start once; the modules that share a lab (tests/e2e/labs.py) or must never run beside
each other are one unit together (GROUPS). Every unit test module is a unit of its own.

Units are handed out heaviest first (BUDGET_S: seconds each took alone, from `pytest --durations=0` on this
machine kind), so the long campaigns start at once and the small units fill the gaps at the end: the
suite's wall time is then close to its total divided by the workers, never a campaign started last.

xdist's own `--dist loadgroup` cannot do this here: it marks a group by rewriting `item._nodeid`, which
pytest 9 no longer reads, so every test became a unit of its own (a module's fixtures ran on several workers
at once, and two multi-host labs claimed the same addresses).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from xdist.scheduler import LoadScopeScheduling

#: end-to-end modules that form one unit (module stem -> unit name)
GROUPS: dict[str, str] = {
    # one Ceph lab per session, shared by its modules; test_multihost_ceph's own cluster joins them: never two
    # clusters at once on 2 cores (their OSDs starve each other's heartbeats)
    "test_backend_counters_real": "ceph-lab", "test_ceph": "ceph-lab", "test_multihost_ceph": "ceph-lab",
    # one HDFS with its S3 server per session
    "test_hdfs_s3_juicefs": "hadoop-lab",
}

#: seconds a unit takes on one of three workers (measured 2026-11-27, session 10, with `--durations=0`; any
#: other end-to-end module counts DEFAULT_E2E_S, a unit test module UNIT_S): the order units are handed out in,
#: and the budget per unit that docs/benchmarks.md keeps
BUDGET_S: dict[str, int] = {
    "e2e:hadoop-lab": 255, "e2e:ceph-lab": 315, "e2e:test_multihost_campaigns": 270,
    "e2e:test_meta_engines": 110, "e2e:test_target_faults_real": 60, "e2e:test_s3_fuse_clients": 95, "e2e:test_hardening": 65,
    "e2e:test_hosts_and_processes": 50, "e2e:test_runtime_faults": 50, "e2e:test_run_local": 45,
    "e2e:test_service_kinds_real": 40, "e2e:test_mdtest_real": 40, "e2e:test_juicefs_evaluation": 35,
    "e2e:test_deploy_and_caches": 30, "e2e:test_adaptive_real": 30, "e2e:test_ssh_transport": 30,
    "e2e:test_quickstart": 30, "e2e:test_seed_reports": 25, "e2e:test_compare_runs": 25,
    "e2e:test_monitor_real": 25, "e2e:test_report_delivery": 25, "e2e:test_multihost": 20,
    "e2e:test_damaged_run_dirs_real": 21, "e2e:test_multihost_scale": 120, "e2e:test_compare_gate": 41, "e2e:test_monitor_own_servers_real": 35,
    "e2e:test_fresh_rounds_real": 35, "e2e:test_relay_transport": 45,
}
DEFAULT_E2E_S, UNIT_S = 15, 1


def unit_of(nodeid: str) -> str:
    """The work unit of a test: `e2e:<group or module>` for an end-to-end test, else its module's path."""
    path = PurePosixPath(nodeid.split("::", 1)[0])
    if "e2e" in path.parts:
        return f"e2e:{GROUPS.get(path.stem, path.stem)}"
    return str(path)


def budget_s(unit: str) -> int:
    """The seconds a unit is expected to take alone."""
    return BUDGET_S.get(unit, DEFAULT_E2E_S if unit.startswith("e2e:") else UNIT_S)


def heaviest_first(nodeids: list[str]) -> list[str]:
    """The tests ordered by their unit's budget (heaviest first), each unit's tests kept in their order."""
    first: dict[str, int] = {}
    for i, nodeid in enumerate(nodeids):
        first.setdefault(unit_of(nodeid), i)
    return sorted(nodeids, key=lambda n: (-budget_s(unit_of(n)), first[unit_of(n)]))


class UnitScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with this suite's units, handed out in the order the workers collected them
    (tests/conftest.py orders them with heaviest_first)."""

    def __init__(self, config, log=None):
        super().__init__(config, log)
        config.option.loadscopereorder = False  # keep the heaviest-first order, not "most tests first"

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)
