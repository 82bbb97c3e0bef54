"""The case loop on fake hosts (no subprocess): resume, a failed case, Ctrl-C, teardown order, leftovers."""

from __future__ import annotations

import json

import pytest

from fsbench.core.errors import FsbenchError
from fsbench.run.store import RunDir
from fsbench.transport.fake import Call, interrupt, journal, result
from tests.unit.runkit import DATA, fio_writes, lab, said

#: a service used by one target and one fio case: its start, the target's setup, the case, teardown, stop
ONE_SERVICE_ONE_TARGET = f"""\
    settings: {{scratch: /scratch}}
    services:
      s: {{start: ["echo start"], ready: "true", stop: ["echo stop"]}}
    targets:
      t: {{path: {DATA}, services: [s], setup: ["echo up"], teardown: ["echo down"]}}
    workloads:
      w: {{tool: fio, options: {{rw: write, size: 1m}}, drop_caches: false}}
    """

TWO_REPETITIONS = f"""\
    settings: {{scratch: /scratch, repetitions: 2}}
    targets:
      t: {{path: {DATA}, setup: ["echo up"], teardown: ["echo down"]}}
    workloads:
      w: {{tool: fio, options: {{rw: write, size: 1m}}, drop_caches: false}}
    """


def _fio(cmds: list[list[str]]) -> list[list[str]]:
    return [c for c in cmds if c[:1] == ["fio"] and "--output-format=json" in c]


def test_a_failed_case_is_a_result_and_the_next_case_runs(tmp_path):
    run = lab(tmp_path, TWO_REPETITIONS)
    run.hosts["local"].on(["fio", "--output-format=json"], exit_status=1, stderr="fio: disk on fire", times=1)
    outcome = run.run()
    records = run.records()
    assert [r["status"] for r in records.values()] == ["failed", "ok"]
    assert "fio failed on local" in records["t__w__r1"]["reason"] and "disk on fire" in records["t__w__r1"]["reason"]
    assert records["t__w__r1"]["exit_status"] == "1"
    assert outcome.exit_code == 1 and run.manifest()["status"] == "failed"
    assert len(_fio(run.hosts["local"].commands())) == 2
    rows = json.loads((run.rd.path / "raw" / "t__w__r2" / "rows.json").read_text())
    assert {r["case_id"] for r in rows} == {"t__w__r2"} and any(r["metric"] == "bandwidth" for r in rows)


def test_a_plug_in_bug_in_one_case_fails_that_case_only(tmp_path):
    run = lab(tmp_path, TWO_REPETITIONS)

    def bug(call: Call) -> None:
        raise ZeroDivisionError("a transport plug-in's bug")

    run.hosts["local"].on(["fio", "--output-format=json"], then=bug, times=1)
    run.run()
    records = run.records()
    assert records["t__w__r1"]["status"] == "failed" and records["t__w__r2"]["status"] == "ok"
    assert "unexpected error: ZeroDivisionError: a transport plug-in's bug" in records["t__w__r1"]["reason"]
    assert (run.rd.path / "raw" / "t__w__r1" / "fsbench-error.txt").exists()


def test_resume_runs_only_the_cases_that_are_not_ok(tmp_path):
    first = lab(tmp_path, TWO_REPETITIONS)
    first.hosts["local"].on(["fio", "--output-format=json"], exit_status=1, times=1)
    first.run()
    assert [r["status"] for r in first.records().values()] == ["failed", "ok"]
    again = lab(tmp_path / "again", TWO_REPETITIONS)  # new hosts: a new process resuming the same directory
    again.rd = RunDir.open(first.rd.path)
    outcome = again.run()
    fio = _fio(again.hosts["local"].commands())
    assert len(fio) == 1  # r2 was ok: not run again
    assert [c.cwd for c in again.hosts["local"].log if c.op == "run" and c.argv in fio][0].endswith("t__w__r1/local")
    assert [r["status"] for r in again.records().values()] == ["ok", "ok"] and outcome.exit_code == 0
    assert again.manifest()["status"] == "complete"


def test_ctrl_c_mid_case_marks_the_manifest_and_still_tears_down(tmp_path):
    run = lab(tmp_path, ONE_SERVICE_ONE_TARGET)
    run.hosts["local"].on(["fio", "--output-format=json"], then=interrupt)  # a second Ctrl-C: raised in fsbench
    with pytest.raises(KeyboardInterrupt):
        run.run()
    assert run.manifest()["status"] == "interrupted"
    order = [_said(c) for c in journal(run.hosts) if c.op == "run"]
    fio = next(i for i, c in enumerate(order) if c.startswith("fio "))
    after = order[fio + 1:]
    assert _index(after, "echo down") < _index(after, "echo stop") < _index(after, "rm -rf -- /scratch/")
    assert not run.leftovers.actions  # each clean-up ran, so each is crossed off


def test_the_first_ctrl_c_stops_the_case_as_interrupted_and_the_run_resumable(tmp_path):
    run = lab(tmp_path, TWO_REPETITIONS)

    def press(call: Call):
        run.cancel.set()  # what the CLI's first Ctrl-C does: the transport stops the tool
        fio_writes(run.hosts["local"], call)
        stopped = result(call, exit_status=-15)
        stopped.interrupted = True
        return stopped

    run.hosts["local"].on(["fio", "--output-format=json"], then=press)
    outcome = run.run()
    records = run.records()
    assert records["t__w__r1"]["status"] == "interrupted" and records["t__w__r2"]["status"] == "pending"
    assert outcome.exit_code == 130 and run.manifest()["status"] == "interrupted"
    assert len(_fio(run.hosts["local"].commands())) == 1
    assert "echo down" in [_said(c) for c in run.hosts["local"].log if c.op == "run"]


def test_services_stop_after_their_targets_in_reverse_of_their_start(tmp_path):
    run = lab(tmp_path, f"""\
        settings: {{scratch: /scratch}}
        services:
          db: {{start: ["echo start db"], ready: "true", stop: ["echo stop db"]}}
          cache: {{start: ["echo start cache"], ready: "true", stop: ["echo stop cache"]}}
        targets:
          a: {{path: {DATA}, services: [db, cache], setup: ["echo setup a"], teardown: ["echo teardown a"]}}
          b: {{path: {DATA}, services: [db], setup: ["echo setup b"], teardown: ["echo teardown b"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}, drop_caches: false}}
        """)
    assert run.run().exit_code == 0
    said = [_said(c) for c in journal(run.hosts) if c.op == "run" and "echo" in _said(c)]
    assert [s for s in said if s.startswith("echo ")] == [
        "echo start db", "echo start cache", "echo setup a", "echo teardown a",
        "echo stop cache",  # its last target was a: stopped right after a's teardown
        "echo setup b", "echo teardown b", "echo stop db"]


def test_leftovers_are_recorded_before_each_action_and_crossed_off_after(tmp_path):
    run = lab(tmp_path, ONE_SERVICE_ONE_TARGET)
    seen: dict[str, list[str]] = {}

    def snapshot(call: Call) -> None:  # what leftovers.json holds at the moment the command starts
        seen[_said(call)] = [a.what for a in run.leftovers.actions]

    for word in ("echo start", "echo up", "echo down", "echo stop"):
        run.hosts["local"].on(lambda argv, w=word: said(argv) == w, then=snapshot)
    assert run.run().exit_code == 0
    assert "service s" in seen["echo start"]
    assert {"service s", "target t", "scratch folders"} <= set(seen["echo up"])
    assert "target t" in seen["echo down"] and "service s" in seen["echo stop"]
    assert "target t" not in seen["echo stop"]  # crossed off once its teardown ran
    assert not run.leftovers.actions


def test_a_clean_up_that_fails_stays_in_leftovers_for_the_next_run(tmp_path):
    run = lab(tmp_path, TWO_REPETITIONS)
    run.hosts["local"].on(["rm", "-rf", "--", f"/scratch/{run.rd.run_id}"], exit_status=1, stderr="busy")
    run.run()
    pending = run.leftovers.actions
    assert [(a.host, a.what) for a in pending] == [("local", "scratch folders")]
    assert pending[0].commands[0] == ["rm", "-rf", "--", f"/scratch/{run.rd.run_id}"]
    assert any("could not remove /scratch/" in e.message for e in run.events)


def test_a_host_lost_in_teardown_keeps_the_others_clean_up_going(tmp_path):
    run = lab(tmp_path, TWO_REPETITIONS)

    def lost(call: Call) -> None:
        raise FsbenchError("local stopped answering")

    run.hosts["local"].on(lambda argv: said(argv) == "echo down", then=lost)
    assert run.run().exit_code == 0  # the cases ran; the teardown's failure is a warning
    assert any("teardown of t on local failed: local stopped answering" in e.message for e in run.events)
    assert [a.what for a in run.leftovers.actions] == ["target t"]  # kept: the next run undoes it


def _said(call: Call) -> str:
    return said(call.argv)


def _index(items: list[str], prefix: str) -> int:
    return next(i for i, s in enumerate(items) if s.startswith(prefix))
