"""Placement across hosts: mdtest's ranks, one-host tools, processes expected where they live, one-host targets."""

from __future__ import annotations

import textwrap

from fsbench.api.tools import Invocation
from fsbench.kinds import KINDS
from fsbench.run.monitor_expect import expected_processes
from fsbench.scenario.load import load_scenario_text
from fsbench.tools.mdtest.placement import describe, ranks
from fsbench.tools.placement import placement

THREE = [("client1", 2), ("client2", 2), ("client3", 2)]


def test_mdtest_ranks_spread_by_node_by_default_and_fill_slots_on_request():
    assert ranks(2, THREE) == {"client1": [0], "client2": [1], "client3": []}
    assert ranks(2, THREE, "slot") == {"client1": [0, 1], "client2": [], "client3": []}
    assert ranks(4, THREE, ppn=2) == {"client1": [0, 1], "client2": [2, 3], "client3": []}
    assert ranks(8, THREE, "slot")["client1"] == [0, 1, 6]  # oversubscribed: round-robin again
    assert describe(ranks(4, THREE)) == "client1: ranks 0, 3 · client2: rank 1 · client3: rank 2"


def test_placement_warns_when_a_workload_of_several_hosts_runs_on_fewer():
    where, warn = placement("mdtest", {"tasks": 2, "map_by": "slot"}, THREE)
    assert where == {"client1": "ranks 0, 1", "client2": "none", "client3": "none"}
    assert warn == ["mdtest's 2 ranks run on client1 only, not on client2, client3: give tasks >= 3 or map_by: node"]
    where, warn = placement("juicefs-bench", {}, THREE, Invocation(argv=["juicefs", "bench"]))
    assert where["client1"] == "all of juicefs-bench" and where["client3"] == "nothing"
    assert warn and "runs on client1 only, not on client2, client3" in warn[0]
    where, warn = placement("metabench", {}, THREE, Invocation(argv=[], per_host={h: ["m"] for h, _ in THREE}))
    assert set(where.values()) == {"its own metabench process"} and warn == []
    assert placement("fio", {}, [("solo", 1)]) == ({"solo": "all of fio"}, [])


def test_a_tool_that_reaches_every_host_itself_is_not_called_a_one_host_tool():
    """vdbench across hosts runs here with one hd= line per host (seed 003's three clients): no warning."""
    from fsbench.api.tools import BuildContext, HostInfo
    from fsbench.tools.vdbench.adapter import PLUGIN as VDBENCH

    class Case:
        case_id, options, prepare = "c", {"binary": "/opt/vdbench/vdbench"}, False
        jobs = {"fsd1": {"depth": 1, "width": 2, "files": 3, "size": "4k"},
                "fwd1": {"fsd": "fsd1", "operation": "read", "threads": 1},
                "rd1": {"fwd": "fwd1", "fwdrate": "max", "format": True, "elapsed": 5, "interval": 1}}

    hosts = {h: HostInfo(h, f"10.0.0.{i}") for i, (h, _) in enumerate(THREE, 1)}
    inv = VDBENCH.build(Case(), "/mnt/t", BuildContext(hosts=hosts))
    assert "hd=client2,system=10.0.0.2" in next(iter(inv.files.values()))
    where, warn = placement("vdbench", Case.options, THREE, inv)
    assert warn == [] and set(where) == {"client1", "client2", "client3"}
    assert set(where.values()) == {"its part of vdbench, started from this machine by vdbench itself"}


SCENARIO = """\
name: layout
hosts:
  meta1: {transport: local, groups: [meta]}
  client1: {transport: local, groups: [clients]}
  client2: {transport: local, groups: [clients]}
monitor: {processes: [juicefs, mariadbd]}
services:
  db: {hosts: [meta], port: auto, start: ["(mariadbd --port ${service.port} &)"], ready: "true"}
targets:
  shared:
    kind: juicefs
    path: /mnt/fsbench-layout-shared
    hosts: [clients]
    services: [db]
    juicefs: {meta: "mysql://u:p@(${services.db.host}:${services.db.port})/j"}
  embedded:
    kind: juicefs
    path: /mnt/fsbench-layout-embedded
    hosts: [clients]
    juicefs: {meta: "sqlite3:///var/tmp/fsbench-layout.db"}
workloads:
  w: {tool: fio, options: {rw: write, size: 1m}}
"""


def test_processes_are_expected_only_where_they_live():
    sc = load_scenario_text(textwrap.dedent(SCENARIO), "layout.yaml")
    assert expected_processes(sc, "shared", KINDS, host="meta1") == {"mariadbd"}
    assert expected_processes(sc, "shared", KINDS, host="client1") == {"juicefs"}
    assert expected_processes(sc, "shared", KINDS) == {"juicefs", "mariadbd"}  # without a host: as before


KINDS_SCENARIO = """\
name: kinds
hosts:
  meta1: {transport: local, groups: [meta]}
  client1: {transport: local, groups: [clients]}
monitor: {processes: [juicefs, redis-server, mariadbd, postgres, etcd, fsbench-s3]}
services:
  s3: {kind: s3, hosts: [meta]}
  redis: {kind: redis, hosts: [meta]}
  db: {kind: mysql, hosts: [meta], mysql: {server: mariadb}}
  pg: {kind: postgres, hosts: [meta]}
  etcd: {kind: etcd, hosts: [meta], etcd: {auth: none}}   # its certificates would stay on meta
targets:
%s
workloads:
  w: {tool: fio, options: {rw: write, size: 1m}}
"""


def test_service_kinds_declare_their_processes_which_are_expected_on_their_hosts_only():
    engines = {"redis": "redis", "db": "mysql", "pg": "postgres", "etcd": "etcd"}
    targets = "".join(f"  {n}: {{kind: juicefs, path: /mnt/fsbench-kinds-{n}, hosts: [clients], services: [{n}, s3],"
                      f" juicefs: {{meta: 'redis://h/1'}}}}\n" for n in engines)
    sc = load_scenario_text(KINDS_SCENARIO % targets, "kinds.yaml")
    seen = {"redis": "redis-server", "db": "mariadbd", "pg": "postgres", "etcd": "etcd"}
    for target, proc in seen.items():
        # the engine and the shared S3 server on the meta host, the client on the clients, nothing else anywhere
        assert expected_processes(sc, target, KINDS, host="meta1") == {proc, "fsbench-s3"}, target
        assert expected_processes(sc, target, KINDS, host="client1") == {"juicefs"}, target


def test_an_embedded_engine_target_is_narrowed_to_its_first_host_with_a_warning():
    sc = load_scenario_text(textwrap.dedent(SCENARIO), "layout.yaml")
    assert sc.targets["embedded"].hosts == ("client1",) and sc.targets["shared"].hosts == ("clients",)
    assert any(w.startswith("targets.embedded: runs on client1 only, not on client2: its metadata engine (sqlite3://) "
                            "is embedded") for w in sc.warnings)


def test_per_host_tables_break_each_aggregate_down_by_host():
    import pandas as pd

    from fsbench.report.per_host import per_host_tables

    rows = [{"workload": "w", "target": "t", "operation": "write", "metric": "bandwidth", "unit": "B/s",
             "host": h, "value": v} for h, v in (("client1", 1.0), ("client2", 3.0), ("all", 4.0))]
    one_host = [{**r, "workload": "solo", "host": "client1"} for r in rows[:1]]
    tables = per_host_tables(pd.DataFrame(rows + one_host))
    assert tables == [{"workload": "w", "metric": "bandwidth", "unit": "B/s", "hosts": ["client1", "client2"],
                       "rows": [{"target": "t", "operation": "write", "values": {"client1": 1.0, "client2": 3.0},
                                 "all": 4.0}]}]


def test_run_notes_record_placement_and_the_run_warnings_for_the_report(tmp_path):
    from fsbench.report.per_host import placement_groups, run_warning_groups
    from fsbench.run.notes import PLACEMENT_CSV, WARNINGS_CSV, read_csv, write_run_notes
    from fsbench.scenario.plan import plan_cases

    text = textwrap.dedent(SCENARIO).replace(
        "  w: {tool: fio, options: {rw: write, size: 1m}}",
        "  w: {tool: fio, options: {rw: write, size: 1m}}\n  md: {tool: mdtest, options: {n: 2, tasks: 1}}")
    sc = load_scenario_text(text, "layout.yaml")
    cases = plan_cases(sc)
    said = write_run_notes(sc, cases, tmp_path)
    # mdtest's one rank on two hosts: said on the terminal once, and kept with its cases for the report
    assert said == ["workloads.md: mdtest's 1 rank run on client1 only, not on client2: give tasks >= 2"]
    groups = run_warning_groups(read_csv(tmp_path / WARNINGS_CSV))
    by_text = {g["warning"].split(":")[0]: g["cases"] for g in groups}
    assert by_text["targets.embedded"] == [c.case_id for c in cases if c.target == "embedded"]
    assert by_text["workloads.md"] == ["shared__md__r1"]
    placed = placement_groups(read_csv(tmp_path / PLACEMENT_CSV))
    assert placed["hosts"] == ["client1", "client2"]
    assert {"workload": "md", "targets": "shared", "runs": ["rank 0", "none"]} in placed["rows"]
    assert any(r["workload"] == "w" and r["runs"][0].startswith("a fio server") for r in placed["rows"])


def test_views_get_the_per_host_tables_of_their_workloads_and_metrics():
    import pandas as pd

    from fsbench.report.per_host import attach_per_host

    rows = [{"workload": "w", "target": "t", "operation": "write", "metric": m, "unit": "B/s", "stat": "value",
             "host": h, "value": v} for m in ("bandwidth", "iops") for h, v in (("client1", 1e6), ("client2", 3e6),
                                                                               ("all", 4e6))]
    views = [{"title": "fio"}, {"title": "other"}]
    attach_per_host(views, [{"workload": "w", "metrics": ["bandwidth"]}, {"workload": "x"}], pd.DataFrame(rows))
    assert [t["head"] for t in views[0]["per_host"]] == [["target", "operation", "client1", "client2", "all"]]
    assert views[0]["per_host"][0]["rows"][0][:2] == ["t", "write"] and views[1]["per_host"] == []


RBD_TWO_CLIENTS = """\
name: rbd-ranks
hosts:
  client1: {transport: local, slots: 2}
  client2: {transport: local, slots: 2}
targets:
  own:
    kind: rbd
    path: /mnt/fsbench-rbd-ranks
    hosts: [client1, client2]
    rbd: {pool: rbd, conf: /etc/ceph/ceph.conf}
workloads:
  md: {tool: mdtest, options: {tasks: TASKS, n: 10}}
"""


def test_mdtest_ranks_over_hosts_each_with_its_own_rbd_tree_are_refused_and_one_host_ranks_pass():
    """An rbd target maps an image per host, each with its own ext4: mdtest's ranks on two hosts see no
    common tree (seed 004 across hosts aborted so). Refused at validation; one rank, or ppn, stays on one host."""
    import pytest

    from fsbench.core.errors import ScenarioError

    with pytest.raises(ScenarioError) as err:
        load_scenario_text(RBD_TWO_CLIENTS.replace("TASKS", "2"), "rbd.yaml")
    text = str(err.value)
    assert "rbd.yaml:" in text and "workloads.md.options.tasks" in text
    assert "mdtest's 2 ranks would run on client1, client2 for target 'own'" in text and "ppn: 2" in text
    assert load_scenario_text(RBD_TWO_CLIENTS.replace("TASKS", "1"), "rbd.yaml").workloads["md"]
    assert load_scenario_text(RBD_TWO_CLIENTS.replace("TASKS", "2").replace("n: 10", "n: 10, ppn: 2"),
                              "rbd.yaml").workloads["md"]
    # a tasks that is no count gets mdtest's own message, not a crash of this check
    with pytest.raises(ScenarioError, match="tasks must be a whole number"):
        load_scenario_text(RBD_TWO_CLIENTS.replace("TASKS", "many"), "rbd.yaml")
    # one rank: the placement says why it stays on client1, instead of asking for more ranks
    where, warn = placement("mdtest", {"tasks": 1}, [("client1", 2), ("client2", 2)],
                            own_trees="each host mounts an ext4 of its own RBD image")
    assert warn == ["mdtest runs on client1 only, not on client2: each host mounts an ext4 of its own RBD image, "
                    "and its ranks must share one tree"]
    # a shared file system (cephfs) still gets the advice to spread
    assert "give tasks >= 2" in placement("mdtest", {"tasks": 1}, [("client1", 2), ("client2", 2)])[1][0]
