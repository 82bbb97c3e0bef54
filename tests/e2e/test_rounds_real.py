"""settings.order: rounds for real: fio on two folders sharing a service, repetition 1 of every target before
repetition 2 (each round's targets in an order of its own), each case measuring under its own target's setup,
and the plan saying that order."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from fsbench.report.context import build_context
from tests.conftest import require, run_cli, write_scenario


def _scenario(tmp_path: Path) -> Path:
    state = tmp_path / "shared-state"
    return write_scenario(tmp_path, f"""\
        name: rounds
        monitor: {{enabled: false}}
        settings:
          scratch: {tmp_path}/scratch
          order: rounds
          repetitions: 2
        services:
          shared:        # one server for both targets, each target setting it its own way (as Redis' appendfsync)
            start: ["true"]
            ready: "true"
        collectors:
          state: {{command: "cat {state}"}}
        targets:
          a: {{path: {tmp_path}/a, services: [shared], setup: ["mkdir -p ${{target.path}}", "echo a > {state}"]}}
          b: {{path: {tmp_path}/b, services: [shared], setup: ["mkdir -p ${{target.path}}", "echo b > {state}"]}}
        workloads:
          w1: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m}}}}
          w2: {{tool: fio, options: {{rw: write, bs: 64k, size: 2m}}}}
        """)


def _ran(run: Path) -> list[dict]:
    with (run / "cases.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["status"] == "ok"]
    return sorted(rows, key=lambda r: r["started"])


def test_rounds_interleave_targets_and_each_case_runs_under_its_own_setup(tmp_path):
    require("fio")
    scenario = _scenario(tmp_path)
    plan = run_cli("plan", str(scenario), check=True).stdout
    # each round's targets in an order of its own (settings.shuffle, drawn from the scenario's name): here
    # round 1 of w2 runs b first, so the shared service is set b's way, then a's, in the same round
    order = ["a__w1__r1", "b__w1__r1", "a__w1__r2", "b__w1__r2", "b__w2__r1", "a__w2__r1", "a__w2__r2", "b__w2__r2"]
    assert [plan.index(cid) for cid in order] == sorted(plan.index(cid) for cid in order), plan
    assert "in rounds: repetition 1 of every target of a workload, then 2" in plan
    assert "each round's targets in an order of its own" in plan
    shown = run_cli("plan", "--show", str(scenario), check=True).stdout
    assert [shown.index(f"case {i}: {cid}") for i, cid in enumerate(order, 1)] == sorted(
        shown.index(f"case {i}: {cid}") for i, cid in enumerate(order, 1))
    out = tmp_path / "out"
    run_cli("run", str(scenario), "--output", str(out), check=True)
    run = next(out.iterdir())
    assert [r["case_id"] for r in _ran(run)] == order
    for cid in order:  # the shared service was set the case's own target's way when it ran
        seen = (run / "raw" / cid / "local" / "collector-state.txt").read_text().split()
        assert seen[:1] == [cid[0]], (cid, seen)

    # the report compares the targets round by round (both ran rounds 1 and 2 together)
    ctx = build_context(run)
    measured = [m for v in ctx["views"] for m in v["measurements"]]
    assert measured and all(dict(val["reps"]).keys() == {1, 2} for m in measured for val in m["values"].values())
    assert ctx["generated"] and all(line.split(":")[0] in {v["title"] for v in ctx["views"]} | {"What it means"}
                                    or line.startswith(("Each value", "For the use case"))
                                    for _, lines in ctx["generated"] for line in lines)

    # resume: a case undone is run again, alone, still under its own target's setup
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["cases"]["a__w2__r1"] = "failed"
    manifest["status"] = "failed"
    (run / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "shared-state").write_text("b\n")
    run_cli("run", str(scenario), "--resume", str(run), check=True)
    assert _ran(run)[-1]["case_id"] == "a__w2__r1"
    assert (run / "raw" / "a__w2__r1" / "local" / "collector-state.txt").read_text().split()[:1] == ["a"]
