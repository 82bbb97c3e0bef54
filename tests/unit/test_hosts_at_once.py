"""Steps that ask every host of a case or run the same question ask them all at once, not one after the other:
a workload's own binary looked for on its hosts, and a dead run's processes stopped on its hosts."""

from __future__ import annotations

import threading
import uuid
from types import SimpleNamespace

from fsbench.core.errors import FsbenchError
from fsbench.core.events import ignore
from fsbench.run.leftovers import _stop_processes
from fsbench.run.presence import ToolPresence
from fsbench.transport.fake import fake_hosts

NAMES = [f"c{i}" for i in range(1, 13)]


def _together(barrier: threading.Barrier):
    def wait(call):
        barrier.wait()
        return None
    return wait


def test_a_workload_s_own_binary_is_looked_for_on_every_host_at_once_and_once_a_host():
    hosts = fake_hosts(*NAMES)
    barrier = threading.Barrier(len(NAMES), timeout=10)
    for name, host in hosts.items():
        host.on(["/bin/sh"], exit_status=1 if name in ("c3", "c10") else 0, then=_together(barrier))
    sc = SimpleNamespace(workloads={})
    presence = ToolPresence(sc, dict(hosts), [])  # type: ignore[arg-type]
    case = SimpleNamespace(tool="vdbench", options={"binary": "/opt/vdbench/vdbench"}, hosts=NAMES)
    assert presence.absent(case) == ["c3", "c10"]  # type: ignore[arg-type]
    assert presence.absent(case) == ["c3", "c10"]  # type: ignore[arg-type]  # from what was found: no new probe
    assert all(len(hosts[n].commands(["/bin/sh"])) == 1 for n in NAMES)
    assert "/opt/vdbench/vdbench" in hosts["c1"].commands(["/bin/sh"])[0][-1]


def test_a_dead_run_s_processes_are_stopped_on_every_host_at_once_and_a_host_that_fails_is_named():
    hosts = fake_hosts(*NAMES)
    barrier = threading.Barrier(len(NAMES), timeout=10)

    def lost(call):
        barrier.wait()
        raise FsbenchError("c7: the connection was lost")

    for name, host in hosts.items():
        host.on(["/bin/sh"], then=lost if name == "c7" else _together(barrier))
    local = fake_hosts("local")["local"]
    run_id = f"gone-{uuid.uuid4().hex}"  # no process of this machine carries it
    problems = _stop_processes(run_id, NAMES, hosts.get, local, ignore)
    assert problems == [f"c7: cannot stop the processes of run {run_id}: c7: the connection was lost"]
    assert all(len(hosts[n].commands(["/bin/sh"])) == 1 for n in NAMES)
    assert run_id in " ".join(hosts["c1"].commands(["/bin/sh"])[0])
