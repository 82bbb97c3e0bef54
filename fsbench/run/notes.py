"""Which host runs what in each case, and the run's own warnings, written into the run directory.

`placement.csv` (case_id, target, workload, host, runs) says, per case and host, which ranks, jobs or
process ran there (as `fsbench plan --show` prints it); `run-warnings.csv` (warning, cases) keeps what
the scenario and the placement warned about before any case ran (a one-host target, a workload that
names several hosts and runs on fewer), so the report's Warnings table has them, not only the terminal.
"""

from __future__ import annotations

import csv
from pathlib import Path

from fsbench.core.secrets import redact
from fsbench.run.run_files import read_run_rows
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case

PLACEMENT_CSV = "placement.csv"
WARNINGS_CSV = "run-warnings.csv"
PLACEMENT_COLUMNS = ("case_id", "target", "workload", "host", "runs")
WARNINGS_COLUMNS = ("warning", "cases")


def case_placement(sc: Scenario, case: Case) -> tuple[dict[str, str], list[str]]:
    """({host: what runs there}, warnings) of one case, from the command lines the plan builds for it."""
    from fsbench.api.kinds import tree_per_host_reason
    from fsbench.kinds import KINDS
    from fsbench.run.plan_show import plan_context
    from fsbench.tools import get_tool
    from fsbench.tools.placement import placement

    ctx, folder = plan_context(sc, case)
    inv = get_tool(case.tool).build(case, folder, ctx)
    target = sc.targets[case.target]
    return placement(case.tool, dict(case.options), [(h, sc.hosts[h].slots) for h in case.hosts], inv,
                     tree_per_host_reason(KINDS.get(target.kind), target))


def write_run_notes(sc: Scenario, cases: list[Case], run_dir: Path) -> list[str]:
    """Write placement.csv and run-warnings.csv; return the placement warnings (one per text) for the terminal."""
    rows: list[dict] = []
    warned: dict[str, list[str]] = {}
    for w in sc.warnings:  # the scenario's (targets.sqlite: runs on client1 only...): the cases they concern
        target = w.split(":", 1)[0].removeprefix("targets.") if w.startswith("targets.") else None
        warned[w] = [c.case_id for c in cases if c.target == target]
    new: list[str] = []
    for case in cases:
        try:
            where, warnings = case_placement(sc, case)
        except Exception as exc:  # noqa: BLE001 - a note only: the run goes on, and says why it is missing
            where, warnings = {h: "unknown" for h in case.hosts}, [
                f"workloads.{case.workload}: which host runs what is unknown ({type(exc).__name__}: {exc})"]
        rows += [{"case_id": case.case_id, "target": case.target, "workload": case.workload, "host": h, "runs": what}
                 for h, what in where.items()]
        for text in (w if w.startswith("workloads.") else f"workloads.{case.workload}: {w}" for w in warnings):
            if text not in warned:
                new.append(text)
            warned.setdefault(text, []).append(case.case_id)
    _write(run_dir / PLACEMENT_CSV, PLACEMENT_COLUMNS, rows)
    _write(run_dir / WARNINGS_CSV, WARNINGS_COLUMNS,
           [{"warning": redact(text), "cases": " ".join(ids)} for text, ids in warned.items()])
    return [redact(t) for t in new]


def read_csv(path: Path) -> list[dict]:
    """Rows of a run note; [] when the run directory has none (made by an older fsbench); RunDirError naming
    it when it is not a plain file or too big (fsbench.run.run_files)."""
    return read_run_rows(path)


def _write(path: Path, columns: tuple[str, ...], rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=columns)
        out.writeheader()
        out.writerows(rows)
