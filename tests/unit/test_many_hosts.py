"""Past a handful of hosts (issue 35): settings.min_hosts, placement per group of hosts, stragglers and the
compact per-host table, all-hosts-at-once steps."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pandas as pd

from fsbench.core.at_once import each
from fsbench.report.per_host import attach_per_host, spread
from fsbench.run.min_hosts import without_unanswered
from fsbench.run.preflight import Preflight
from fsbench.scenario import load_scenario
from fsbench.scenario.plan import plan_cases
from fsbench.tools.placement import compact_placement, host_ranges
from fsbench.transport.fake import fake_hosts

SCENARIO = """\
name: many
{settings}services:
  redis: {{kind: redis, hosts: [meta]}}
targets:
  t: {{path: /var/tmp/x, hosts: [clients], setup: ["mkdir -p ${{target.path}}"]}}
workloads:
  w: {{tool: fio, options: {{rw: write, size: 1m}}}}
"""


def scenario(tmp_path: Path, settings: str = "", clients: int = 4):
    inv = tmp_path / "inventory.yaml"
    hosts = "".join(f"  client{i}: {{address: 10.9.0.{i}, groups: [clients]}}\n" for i in range(1, clients + 1))
    inv.write_text(f"defaults: {{user: root}}\nhosts:\n{hosts}  meta1: {{address: 10.9.0.99, groups: [meta]}}\n")
    path = tmp_path / "sc.yaml"
    path.write_text(SCENARIO.format(settings=settings))
    sc = load_scenario(path, [], inv)
    return sc, plan_cases(sc)


def silent(*hosts: str) -> Preflight:
    return Preflight(failures=[(h, "reachable", "connection refused") for h in hosts])


def test_without_min_hosts_a_silent_host_still_refuses(tmp_path):
    sc, cases = scenario(tmp_path)
    pf = silent("client3")
    got = without_unanswered(sc, cases, fake_hosts(*sc.hosts), pf)
    assert got[0] is sc and got[3] is None and pf.failures == [("client3", "reachable", "connection refused")]


def test_min_hosts_leaves_out_a_silent_client_and_plans_again(tmp_path):
    sc, cases = scenario(tmp_path, "settings: {min_hosts: 4}\n")
    assert cases[0].hosts == ("client1", "client2", "client3", "client4")
    pf = silent("client3")
    hosts = fake_hosts(*sc.hosts)
    smaller, again, transports, warning = without_unanswered(sc, cases, hosts, pf)
    assert pf.failures == [] and set(transports) == {"client1", "client2", "client4", "meta1"}
    assert again[0].hosts == ("client1", "client2", "client4")
    assert warning is not None and "client3 (connection refused)" in warning and "4 of 5 answered" in warning
    assert warning in smaller.warnings


def test_min_hosts_refuses_below_its_floor_or_without_a_service_host(tmp_path):
    sc, cases = scenario(tmp_path, "settings: {min_hosts: 5}\n")
    pf = silent("client3")
    assert without_unanswered(sc, cases, fake_hosts(*sc.hosts), pf)[3] is None
    assert pf.failures[-1][1] == "min_hosts" and "4 of 5 hosts answered, settings.min_hosts is 5" in pf.failures[-1][2]
    sc, cases = scenario(tmp_path, "settings: {min_hosts: 1}\n")
    pf = silent("meta1")
    assert without_unanswered(sc, cases, fake_hosts(*sc.hosts), pf)[3] is None
    assert "meta1 runs a service" in pf.failures[-1][2]


def test_placement_of_many_hosts_reads_as_groups():
    assert host_ranges(["client1", "client2", "client3", "client5", "meta1"]) == "client1-client3, client5, meta1"
    ranks = {f"client{i}": f"ranks {2 * i - 2}, {2 * i - 1}" for i in range(1, 33)}
    assert compact_placement(ranks) == [("client1-client32 (32 hosts)", "2 ranks each")]
    fio = {**{f"c{i}": "a fio server running the job file (4 jobs)" for i in range(1, 16)}, "c16": "nothing"}
    assert compact_placement(fio) == [("c1-c15 (15 hosts)", "a fio server running the job file (4 jobs) each"),
                                      ("c16 (1 host)", "nothing")]


def test_stragglers_are_the_hosts_far_worse_than_the_median():
    bw = {f"h{i}": 100.0 for i in range(1, 10)} | {"h10": 70.0, "h11": 85.0}
    s = spread(bw, "bandwidth")
    assert s is not None and s["median"] == 100.0 and s["slowest"] == "h10"
    assert [h for h, _ in s["stragglers"]] == ["h10"] and round(s["spread"], 2) == 0.30
    lat = {"a": 1.0, "b": 1.1, "c": 1.5}  # a latency: the higher one is the slow host
    s = spread(lat, "latency_mean")
    assert s is not None and s["fastest"] == "a" and [h for h, _ in s["stragglers"]] == ["c"]
    assert spread({"a": 1.0}, "bandwidth") is None


def test_the_per_host_table_of_32_hosts_gives_median_fastest_slowest_spread():
    hosts = [f"client{i}" for i in range(1, 33)]
    values = {h: 100.0 for h in hosts} | {"client7": 50.0}
    rows = [{"workload": "w", "target": "t", "operation": "write", "metric": "bandwidth", "unit": "MiB/s",
             "host": h, "value": v, "stat": ""} for h, v in values.items()]
    rows.append({**rows[0], "host": "all", "value": 3150.0})
    views = [{}]
    attach_per_host(views, [{"workload": "w"}], pd.DataFrame(rows))
    table = views[0]["per_host"][0]
    assert table["head"] == ["target", "operation", "all", "hosts", "median", "fastest", "slowest", "spread",
                             "stragglers"]
    row = table["rows"][0]
    assert row[3] == "32" and row[6].startswith("client7 ") and row[7] == "50%" and row[8] == "1"
    assert len(table["notes"]) == 1 and "client7" in table["notes"][0] and "50% worse" in table["notes"][0]


def test_each_runs_the_hosts_steps_at_once_and_keeps_their_order():
    began = time.monotonic()
    names = each([f"h{i}" for i in range(16)], lambda h: (time.sleep(0.2), threading.current_thread().name, h)[2])
    assert names == [f"h{i}" for i in range(16)] and time.monotonic() - began < 1.5


def test_host_facts_are_one_command_a_host_and_one_probe_at_a_time_where_that_cannot_be_read():
    from fsbench.host import facts
    from fsbench.transport.local import LocalTransport

    probes = {"a": ["/bin/sh", "-c", "printf 'a-1.0'"], "b": ["/bin/sh", "-c", "echo b-2.0 >&2"],
              "c": ["/bin/sh", "-c", "echo c-3.0; exit 3"]}
    row = facts.gather(LocalTransport("here"), probes)
    assert row["hostname"] == os.uname().nodename and int(row["cpus"]) >= 1
    assert (row["a_version"], row["b_version"], row["c_version"]) == ("a-1.0", "b-2.0", "not found")
    fake = fake_hosts("f")["f"]  # answers no `sh -c` script it was not told of: asked one probe at a time
    fake.on(["uname", "-n"], stdout="f1\n")
    fake.on(["fio", "--version"], stdout="fio-3.33\n")
    row = facts.gather(fake, {"fio": ["fio", "--version"]})
    assert row["hostname"] == "f1" and row["fio_version"] == "fio-3.33"
    assert fake.commands(["/bin/sh"]) and fake.commands(["uname", "-n"]) == [["uname", "-n"]]


def test_the_host_probe_reads_a_probes_stderr_only_when_it_wrote_some(tmp_path, monkeypatch):
    from fsbench.host import facts
    from fsbench.transport.local import LocalTransport

    # a `tail` first on PATH counts its calls: of two probes, only the one that wrote to stderr is tailed
    calls = tmp_path / "tails"
    (tmp_path / "tail").write_text(f'#!/bin/sh\necho x >> {calls}\nexec /usr/bin/tail "$@"\n')
    (tmp_path / "tail").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(facts, "BASE_FACTS", ())
    row = facts.gather(LocalTransport("here"), {"quiet": ["/bin/sh", "-c", "echo q-1"],
                                                "loud": ["/bin/sh", "-c", "echo l-2 >&2"]})
    assert (row["quiet_version"], row["loud_version"]) == ("q-1", "l-2")
    assert calls.read_text().split() == ["x"]


def test_a_placement_warning_on_many_hosts_names_them_as_ranges():
    from fsbench.tools.placement import placement

    where, warnings = placement("mdtest", {"tasks": 20}, [(f"client{i}", 2) for i in range(1, 33)])
    assert compact_placement(where) == [("client1-client20 (20 hosts)", "1 rank each"),
                                        ("client21-client32 (12 hosts)", "none")]
    assert warnings == ["mdtest's 20 ranks run on client1-client20 only, not on client21-client32: give tasks >= 32"]
    _, few = placement("mdtest", {"tasks": 2}, [("h1", 1), ("h2", 1), ("h3", 1), ("h4", 1)])
    assert few == ["mdtest's 2 ranks run on h1, h2 only, not on h3, h4: give tasks >= 4"]  # a handful: by name


def test_the_reports_placement_of_16_hosts_is_a_row_of_groups():
    from fsbench.report.per_host import placement_groups

    rows = [{"case_id": "t__md__r1", "target": "t", "workload": "md", "host": f"client{i}", "runs": f"rank {i - 1}"}
            for i in range(1, 17)]
    placed = placement_groups(rows)
    assert placed["compact"] and placed["rows"][0]["groups"] == ["client1-client16 (16 hosts): 1 rank each"]
    assert not placement_groups(rows[:3])["compact"]
