"""One case (CaseRun) and its side jobs on fake hosts: raw output first, work folders removed, failures as data."""

from __future__ import annotations

import threading

from fsbench.api.tools import HostInfo
from fsbench.run.case_context import host_infos
from fsbench.run.case_run import CaseEnv, CaseRun
from fsbench.run.run_processes import CASE_MARKER
from fsbench.run.side_jobs import SideJobs
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.transport.fake import WORK_ROOT, Call
from tests.unit.runkit import DATA, FIO_JSON, Lab, fio_writes, lab

ONE_CASE = f"""\
    settings: {{scratch: /scratch}}
    targets:
      t: {{path: {DATA}}}
    workloads:
      w: {{tool: fio, options: {{rw: write, size: 1m}}, drop_caches: false}}
    """


def _case_run(run: Lab) -> tuple[CaseRun, TargetSession]:
    """The lab's first case, constructed as the runner does, on its target's session (set up)."""
    case = run.cases[0]
    session = TargetSession(run.sc.targets[case.target], dict(run.hosts), run.rd.run_id, run.events.append,
                            scratch="/scratch/run")
    assert session.setup(threading.Event()) is None
    env = CaseEnv(run.sc, run.rd, dict(run.hosts), run.controller, HostInfo("controller", "127.0.0.1"),
                  run.cancel, run.events.append)
    return CaseRun(env, case, host_infos(run.sc, case.hosts)), session


def _cleaned_up(host) -> list[str]:
    """The folders a case's end removed on a (remote, fake) host: its one stop-then-remove command each."""
    return [c.argv[-1] for c in host.log if c.op == "run" and "fsbench-case-clean-up" in c.argv]


def test_a_case_keeps_its_raw_output_and_leaves_no_work_folder_behind(tmp_path):
    run = lab(tmp_path, ONE_CASE)
    case_run, session = _case_run(run)
    outcome = case_run.run(session)
    assert outcome.status == "ok", outcome.reason
    raw = run.rd.path / "raw" / run.cases[0].case_id / "local"
    assert (raw / "fio.json").read_bytes() == FIO_JSON  # fetched from the host before anything parsed it
    assert (raw / "command").read_text().startswith("fio --output-format=json")
    assert (raw / "exit_status").read_text() == "0\n"
    host = run.hosts["local"]
    fio = next(c for c in host.log if c.op == "run" and c.argv[0] == "fio")
    assert fio.cwd.startswith(WORK_ROOT) and fio.env[CASE_MARKER] == run.cases[0].case_id
    assert fio.cwd in host.ops("remove_tree")  # the work folder, once raw/ had its outputs
    test_dir = session.test_dir(run.cases[0])
    assert test_dir in host.ops("makedirs") and _cleaned_up(host) == [test_dir]
    assert not any(p.startswith(fio.cwd) for p in host.files)
    rows = run.rd.case_rows(run.cases[0].case_id)
    assert rows and all(r["case_id"] == run.cases[0].case_id and r["host"] == "local" for r in rows)


def test_a_parser_error_fails_only_the_case_and_keeps_the_output(tmp_path):
    run = lab(tmp_path, ONE_CASE)
    run.hosts["local"].on(["fio", "--output-format=json"], then=lambda call: fio_writes(run.hosts["local"], call,
                                                                                       b"{ not json"))
    case_run, session = _case_run(run)
    outcome = case_run.run(session)
    assert outcome.status == "failed" and outcome.reason.startswith("unusable output")
    assert (run.rd.path / "raw" / run.cases[0].case_id / "local" / "fio.json").read_bytes() == b"{ not json"
    assert run.rd.case_rows(run.cases[0].case_id) == []


def test_what_a_case_left_running_is_stopped_and_said(tmp_path):
    run = lab(tmp_path, ONE_CASE)
    run.hosts["local"].on(lambda argv: "fsbench-case-clean-up" in argv, stdout="4242 sleeper\n")
    case_run, session = _case_run(run)
    outcome = case_run.run(session)
    assert outcome.status == "ok"
    assert "stopped what the case left running on local: sleeper (pid 4242)" in outcome.extra["warnings"]
    (clean,) = [c for c in run.hosts["local"].log if "fsbench-case-clean-up" in c.argv]
    assert f"{CASE_MARKER}={run.cases[0].case_id}" in clean.argv and clean.argv[-1] == session.test_dir(run.cases[0])
    script = clean.argv[2]
    # the strays are stopped before the case's folder goes (one could write into it again): one command
    assert script.index("kill -s TERM") < script.index('rm -rf -- "$4"')
    assert session.test_dir(run.cases[0]) not in run.hosts["local"].ops("remove_tree")  # no second command


def test_a_collector_runs_beside_the_tool_and_its_output_is_kept(tmp_path):
    run = lab(tmp_path, ONE_CASE.rstrip(" ") + """\
    collectors:
      probe: {kind: command, command: "echo probe ${case.id}"}
    """)
    case_run, session = _case_run(run)
    assert case_run.run(session).status == "ok"
    calls = [c for c in run.hosts["local"].log if c.op == "run"]
    probe = next(i for i, c in enumerate(calls) if any("echo probe" in a for a in c.argv))
    fio = next(i for i, c in enumerate(calls) if c.argv[0] == "fio")
    assert probe < fio  # started before the tool
    raw = run.rd.path / "raw" / run.cases[0].case_id / "local"
    assert "echo probe" in (raw / "collector-probe.command").read_text()


class Job:
    """A side job that writes what it is told into a shared list, and refuses to start when asked to."""

    def __init__(self, name: str, said: list[str], refuse: str | None = None, lost: dict[str, str] | None = None):
        self.name, self.said, self.refuse, self._lost = name, said, refuse, lost or {}

    def start(self) -> str | None:
        self.said.append(f"start {self.name}")
        return self.refuse

    def tool_start(self) -> None:
        self.said.append(f"tool_start {self.name}")

    def tool_end(self) -> None:
        self.said.append(f"tool_end {self.name}")

    def stop(self) -> None:
        self.said.append(f"stop {self.name}")

    def collect(self) -> list:
        return []

    def lost(self) -> dict[str, str]:
        return self._lost


def test_side_jobs_start_in_order_and_all_stop_at_once():
    """Their stops run at once (each waits on its own end), so their order is not defined: each stops once,
    after every earlier hook."""
    said: list[str] = []
    jobs = SideJobs([Job("monitor", said), Job("collector", said), Job("server", said)])
    assert jobs.start() is None
    jobs.tool_start()
    jobs.tool_end()
    jobs.stop()
    assert said[:9] == ["start monitor", "start collector", "start server",
                        "tool_start monitor", "tool_start collector", "tool_start server",
                        "tool_end monitor", "tool_end collector", "tool_end server"]
    assert sorted(said[9:]) == ["stop collector", "stop monitor", "stop server"]


def test_a_side_job_that_cannot_start_stops_those_before_it_and_no_later_one_starts():
    said: list[str] = []
    jobs = SideJobs([Job("monitor", said), Job("server", said, refuse="no server listening"), Job("watch", said)])
    assert jobs.start() == "no server listening"
    jobs.stop()
    assert said[:2] == ["start monitor", "start server"]  # the watch never started
    assert sorted(said[2:]) == ["stop monitor", "stop server"]  # the refusing one is stopped too, all at once


def test_the_hosts_side_jobs_lost_are_gathered_and_a_failed_tool_names_them_first(tmp_path):
    from fsbench.core.errors import CommandResult
    from fsbench.run.case_outcome import ended

    said: list[str] = []
    jobs = SideJobs([Job("monitor", said, lost={"client5": "10.0.0.5:22: the connection was lost"}),
                     Job("server", said, lost={"client5": "10.0.0.5:22: the connection was lost"}),
                     Job("collector", said)])
    assert jobs.start() is None
    jobs.stop()
    assert jobs.lost() == {"client5": "10.0.0.5:22: the connection was lost"}
    case = lab(tmp_path, ONE_CASE).cases[0]
    failed = CommandResult("controller", ["fio", "--client=ip:10.0.0.5"], 1, "", "")
    outcome, rows = ended(case, failed, 3.0, lambda: None, tmp_path, jobs.lost())
    assert rows is None and outcome.status == "failed"
    assert outcome.reason.startswith("client5 lost while the case ran (10.0.0.5:22: the connection was lost): fio "
                                     "failed on controller"), outcome.reason
    outcome, _ = ended(case, failed, 3.0, lambda: None, tmp_path)
    assert outcome.reason.startswith("fio failed on controller"), outcome.reason


def test_a_lost_host_while_the_tool_runs_fails_the_case_and_still_cleans_up(tmp_path):
    from fsbench.core.errors import FsbenchError

    run = lab(tmp_path, ONE_CASE)

    def lost(call: Call) -> None:
        raise FsbenchError("local: the connection was lost")

    run.hosts["local"].on(["fio", "--output-format=json"], then=lost)
    case_run, session = _case_run(run)
    outcome = case_run.run(session)
    assert outcome.status == "failed" and "the connection was lost" in outcome.reason
    assert _cleaned_up(run.hosts["local"]) == [session.test_dir(run.cases[0])]
