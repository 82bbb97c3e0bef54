"""Preflight's tool checks: one version everywhere; missing tools refuse the run unless skipping is allowed."""

from __future__ import annotations

import threading

from fsbench.run.preflight import Preflight, _tool_checks
from fsbench.scenario.load import load_scenario_text
from fsbench.scenario.plan import plan_cases

SCENARIO = """\
name: tools
hosts: {a: {transport: local}, b: {transport: local}}
targets: {t: {path: /srv/bench/t, hosts: [a, b]}}
workloads:
  meta: {tool: mdtest, options: {n: 10}}
  vdb: {tool: vdbench, jobs: {rd1: {elapsed: 1}}}
"""


def _check(facts: dict[str, dict], text: str = SCENARIO) -> Preflight:
    sc = load_scenario_text(text, "tools.yaml")
    pf = Preflight()
    _tool_checks(sc, plan_cases(sc), {h: {"host": h, **f} for h, f in facts.items()}, pf)
    return pf


def test_mixed_mdtest_versions_are_refused():
    pf = _check({"a": {"mdtest_version": "mdtest-4.0.0 (Open MPI 4.1.4)", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "mdtest-3.3.0 (Open MPI 4.1.4)", "vdbench_version": "/x"}})
    assert [f[:2] for f in pf.failures] == [("(all)", "mdtest version")]
    assert "mdtest-3.3.0" in pf.failures[0][2] and "mdtest-4.0.0" in pf.failures[0][2]


def test_same_mdtest_built_against_another_mpi_is_refused_too():
    pf = _check({"a": {"mdtest_version": "mdtest-4.0.0 (Open MPI 4.1.4)", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "mdtest-4.0.0 (Open MPI 5.0.3)", "vdbench_version": "/x"}})
    assert [f[1] for f in pf.failures] == ["mdtest version"]


def test_mdtest_missing_everywhere_refuses_the_run_but_vdbench_is_bring_your_own():
    pf = _check({"a": {"mdtest_version": "not found", "vdbench_version": "not found"},
                 "b": {"mdtest_version": "not found", "vdbench_version": "not found"}})
    assert sorted((h, c) for h, c, _ in pf.failures) == [("a", "mdtest installed"), ("b", "mdtest installed")]
    assert "fsbench deploy" in pf.failures[0][2]
    assert pf.warnings == ["vdbench is not installed on a, b: its cases will be skipped"]


def test_an_optional_workload_is_skipped_where_its_tool_is_missing():
    text = SCENARIO.replace("tool: mdtest,", "tool: mdtest, optional: true,")
    pf = _check({"a": {"mdtest_version": "not found", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "not found", "vdbench_version": "/x"}}, text)
    assert pf.failures == [] and pf.warnings == ["mdtest is not installed on a, b: its cases will be skipped"]


def test_missing_on_some_hosts_only_is_always_refused():
    text = SCENARIO.replace("tool: mdtest,", "tool: mdtest, optional: true,")
    pf = _check({"a": {"mdtest_version": "mdtest-4.0.0", "vdbench_version": "/x"},
                 "b": {"mdtest_version": "not found", "vdbench_version": "not found"}}, text)
    assert [(h, c) for h, c, _ in pf.failures] == [("b", "mdtest installed"), ("b", "vdbench installed")]


# -- a target path that cannot be used as it stands -----------------------------------------------------------

DEAD = """\
name: dead
targets: {t: {path: /mnt/fsbench-x, destructive: true, setup: ["mkdir -p ${target.path}"]}}
workloads: {w: {tool: fio, options: {rw: write, size: 1m}}}
"""


def test_a_dead_fuse_mount_at_a_target_path_is_named_not_a_crash():
    """A FUSE mount whose client died (ENOTCONN) at the path: refused, with what to do, and left alone."""
    from fsbench.run.preflight import _target_host
    from fsbench.transport.fake import fake_hosts

    sc = load_scenario_text(DEAD, "dead.yaml")
    host = fake_hosts("local")["local"]
    host.on(["stat"], exit_status=1,
            stderr="stat: cannot statx '/mnt/fsbench-x': Transport endpoint is not connected\n")
    found = _target_host(sc.targets["t"], {"local": host}, 0.0, True, "local")
    assert [f[:2] for f in found] == [("local", "target t")]
    assert "client has gone" in found[0][2] and "umount -l /mnt/fsbench-x" in found[0][2]
    assert not host.commands(["umount"]) and not host.commands(["fusermount"])  # not fsbench's: left alone


def test_a_path_that_does_not_exist_yet_is_no_dead_mount():
    from fsbench.run.preflight import _target_host
    from fsbench.transport.fake import fake_hosts

    sc = load_scenario_text(DEAD, "dead.yaml")
    host = fake_hosts("local")["local"]
    host.on(["stat"], exit_status=1, stderr="stat: cannot statx '/mnt/fsbench-x': No such file or directory\n")
    assert _target_host(sc.targets["t"], {"local": host}, 0.0, True, "local") == []


def test_the_local_host_reads_an_unreadable_path_as_no_directory(tmp_path):
    from fsbench.transport.local import LocalTransport

    # pathlib passes ENAMETOOLONG on, as it does ENOTCONN (a dead FUSE mount): `test -d` says no to both
    assert LocalTransport("local").is_dir(str(tmp_path / ("x" * 300))) is False


# -- the programs a case across hosts starts on them -----------------------------------------------------------

ACROSS = """\
name: across
hosts: {%s}
targets: {t: {path: /srv/bench/t, hosts: [%s]}}
workloads: {w: {tool: fio, options: {rw: write, size: 1m}}}
"""


def test_the_servers_programs_are_looked_for_on_every_host_at_once_and_each_missing_one_named():
    """fio across 12 hosts starts `fio --server` on each: preflight asks all 12 at once (1,000 hosts asked one
    after the other would wait 1,000 round trips), and names each host that lacks it, in the hosts' order."""
    from fsbench.run.preflight import _server_checks
    from fsbench.transport.fake import fake_hosts

    names = [f"c{i}" for i in range(1, 13)]
    sc = load_scenario_text(ACROSS % (", ".join(f"{n}: {{transport: local}}" for n in names), ", ".join(names)),
                            "across.yaml")
    hosts = fake_hosts(*names)
    asking = threading.Barrier(len(names), timeout=10)  # passes only when all 12 are asked together

    def wait_for_all(call):
        asking.wait()
        return None

    for n in names:
        hosts[n].on(["/bin/sh", "-c", "command -v fio"], exit_status=1 if n in ("c4", "c11") else 0,
                    then=wait_for_all)
    pf = Preflight()
    _server_checks(sc, plan_cases(sc), dict(hosts), pf)
    assert [(h, c) for h, c, _ in pf.failures] == [("c4", "fio installed"), ("c11", "fio installed")]
    assert "fio --server" in pf.failures[0][2] and "fsbench deploy" in pf.failures[0][2]
    assert all(len(hosts[n].commands(["/bin/sh"])) == 1 for n in names)  # one question a host, not one a case


def test_a_host_s_facts_and_its_target_are_asked_at_once():
    """Each host's probe (40 ms here) and its target's checks (as long again) need nothing of each other: the
    target's `df` and the facts' clock reading pass a barrier only when both are asked together."""
    from fsbench.run.preflight import run_preflight
    from fsbench.transport.fake import fake_hosts

    sc = load_scenario_text("name: once\nhosts: {a: {transport: local}}\ntargets: {t: {path: /srv/bench/t, hosts: [a]}}\n"
                            "workloads: {w: {tool: fio, options: {rw: read, size: 1m}}}\n", "once.yaml")
    hosts = fake_hosts("a")
    hosts["a"].dirs.add("/srv/bench/t")
    both = threading.Barrier(2, timeout=10)

    def together(call):
        both.wait()
        return None

    hosts["a"].on(["date", "+%s.%N"], stdout="1700000000.0\n", then=together)
    hosts["a"].on(["df"], stdout="Filesystem 1-blocks Used Available Capacity Mounted\n/dev/x 9 1 999999999999 1% /\n",
                  then=together)
    hosts["a"].on(["fio", "--version"], stdout="fio-3.33\n")
    hosts["a"].on(lambda argv: "fsbench-resolve" in argv, stdout="/root\0/root\0realpath -m\0/srv/bench/t")
    pf = run_preflight(sc, plan_cases(sc), dict(hosts))
    assert not both.broken and pf.failures == [] and pf.hosts[0]["host"] == "a"
    assert hosts["a"].commands(["df"]) and hosts["a"].commands(["date"])
