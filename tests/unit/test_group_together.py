"""run_on_group with a transport kind that runs a step's commands together (ssh-relay's `run_together`): its hosts
go in one call from the caller's thread, every other host through `each` as before, results in the hosts' order.
The relay itself is tests/e2e/test_relay_transport.py's."""

from __future__ import annotations

import threading

from fsbench.core.errors import CommandResult
from fsbench.run.case_hosts import clean_up, make_folders
from fsbench.transport.fake import FakeTransport
from fsbench.transport.group import goes_together, run_on_group


class Together(FakeTransport):
    """A fake host whose kind runs a step together: each call records the hosts it was given."""

    calls: list[list[str]] = []
    threads: list[str] = []
    fail_start: set[str] = set()

    @staticmethod
    def run_together(items, *, timeout, cwd, cancel):
        Together.calls.append([tr.host for tr, _ in items])
        Together.threads.append(threading.current_thread().name)
        out: list[CommandResult | BaseException] = []
        for tr, argv in items:
            if tr.host in Together.fail_start:
                out.append(ConnectionError(f"{tr.host}: no master"))
            else:
                out.append(tr.run(argv, timeout=timeout, cwd=cwd, cancel=cancel))
        return out


def _mixed():
    Together.calls, Together.threads, Together.fail_start = [], [], set()
    journal: list = []
    hosts = {n: Together(n, journal=journal) for n in ("r1", "r2", "r3")}
    hosts.update({n: FakeTransport(n, journal=journal) for n in ("d1", "d2")})
    return {n: hosts[n] for n in ("r1", "d1", "r2", "d2", "r3")}


def test_hosts_of_a_kind_that_runs_together_go_in_one_call_from_the_callers_thread():
    hosts = _mixed()
    got = run_on_group(hosts, {n: ["echo", n] for n in hosts})
    assert Together.calls == [["r1", "r2", "r3"]]
    assert Together.threads == [threading.current_thread().name]
    assert list(got) == ["r1", "d1", "r2", "d2", "r3"] and got.ok
    assert {n: hosts[n].commands() for n in hosts} == {n: [["echo", n]] for n in hosts}
    assert goes_together(hosts["r1"]) and not goes_together(hosts["d1"])


def test_a_host_that_could_not_start_is_a_failed_result_that_says_why_and_the_others_stand():
    hosts = _mixed()
    Together.fail_start = {"r2"}
    got = run_on_group(hosts, ["true"])
    assert set(got.failed()) == {"r2"}
    assert got["r2"].extra["error"] == "r2: no master" and got["r2"].extra["error_type"] == "ConnectionError"


class Broken(Together):
    @staticmethod
    def run_together(items, *, timeout, cwd, cancel):
        raise RuntimeError("relay gone")


def test_a_call_that_fails_whole_fails_each_of_its_hosts_not_the_step():
    hosts = _mixed()
    hosts.update({n: Broken(n) for n in ("r1", "r2", "r3")})
    got = run_on_group(hosts, ["true"])
    assert set(got.failed()) == {"r1", "r2", "r3"} and got["r1"].stderr_tail == "relay gone"
    assert got["d1"].ok and got["d2"].ok


def test_an_environment_of_the_call_keeps_every_host_on_its_own_path():
    hosts = _mixed()
    assert run_on_group(hosts, ["true"], env={"K": "v"}).ok
    assert Together.calls == []  # run()'s env file is per host: not a step's one command


def test_a_cases_end_and_folders_go_together_where_they_can_one_command_a_host():
    hosts = _mixed()
    used = {n: hosts[n] for n in ("r1", "d1")}  # r2, r3 and d2 ran nothing of the case (mdtest's ranks)
    make_folders(hosts, {"r2": "/data/r2"}, "/data/case", True, True)
    assert Together.calls == [["r1", "r2", "r3"]] * 2
    assert hosts["r2"].commands() == [["rm", "-rf", "--", "/data/case"], ["mkdir", "-p", "--", "/data/r2"]]
    assert [c.op for c in hosts["d1"].journal if c.host == "d1"] == ["remove_tree", "makedirs"]
    clean_up(used, hosts, "/data/case", "run1", "c1", lambda e: None)
    assert Together.calls[2:] == [["r1", "r2", "r3"]]
    assert hosts["r1"].commands()[-1][3] == "fsbench-case-clean-up"  # its strays stopped, then the folder
    assert hosts["r3"].commands()[-1] == ["rm", "-rf", "--", "/data/case"]
    assert hosts["d2"].ops("remove_tree")


def test_a_root_folder_is_never_removed_through_a_step_either():
    hosts = _mixed()
    said = []
    clean_up(dict(hosts), dict(hosts), "/", "run1", "c1", said.append)
    assert all(c[3] == "fsbench-case-stop" for n in ("r1", "r2", "r3") for c in hosts[n].commands())
    assert sorted(e.message for e in said) == sorted(f"refusing to remove '/' on {n}" for n in hosts)
