"""The cases' records of a run (cases.csv and the manifest's statuses, kept across a resume) and its outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fsbench.core.csv_cells import unguard_row
from fsbench.core.errors import RunDirError
from fsbench.core.events import Event, Listener
from fsbench.run.run_files import read_run_rows
from fsbench.run.store import STATUS_OK, STATUS_PENDING, STATUS_SKIPPED, RunDir, utc_now
from fsbench.scenario.plan import Case

#: what an earlier attempt recorded about a case that stays ok (a resume keeps it as it was)
KEPT = ("reason", "exit_status", "started", "ended", "duration_s", "tool_wall_s", "warnings")


class Records:
    """One record per case (cases.csv's row), written through after every change."""

    def __init__(self, rd: RunDir, cases: list[Case]):
        self.rd = rd
        self.by_id: dict[str, dict] = {}
        previous = rd.manifest.get("cases", {})
        for c in cases:
            self.by_id[c.case_id] = {
                "case_id": c.case_id, "index": c.index, "target": c.target, "workload": c.workload,
                "tool": c.tool, "repetition": c.repetition, "status": previous.get(c.case_id, STATUS_PENDING),
                "reason": "", "exit_status": "", "started": "", "ended": "", "duration_s": "",
                "estimate_s": c.estimate_s, "tool_wall_s": "", "hosts": " ".join(c.hosts), "warnings": "",
                "params": c.params,
            }

    def keep_earlier(self) -> None:
        """Keep what earlier attempts recorded (cases.csv) about cases whose status is ok: they will not rerun."""
        # bounded, a regular file (fsbench.run.run_files); as written before the spreadsheet guard
        for row in map(unguard_row, read_run_rows(self.rd.path / "cases.csv")):
            rec = self.by_id.get(row["case_id"])
            if rec and rec["status"] == STATUS_OK:
                rec.update({k: row.get(k, "") for k in KEPT})

    def begin(self) -> None:
        """The run is going: the manifest says so, with every case's status."""
        self.rd.manifest["status"] = "running"
        self.rd.manifest["cases"] = {cid: r["status"] for cid, r in self.by_id.items()}
        self.rd.save_manifest()
        self.write()

    def finish(self, case: Case, status: str, reason: str = "", **extra: object) -> None:
        """A case ended: its record, the manifest and cases.csv at once (a kill after this keeps it)."""
        rec = self.by_id[case.case_id]
        rec.update(status=status, reason=reason, ended=utc_now(), **extra)
        self.rd.manifest["cases"][case.case_id] = status
        self.rd.save_manifest()
        self.write()

    def write(self) -> None:
        self.rd.write_cases(list(self.by_id.values()))

    def close(self, interrupted: bool, emit: Listener) -> RunOutcome:
        """The end of a run: results from the ok cases' rows, cases.csv, and the manifest's status."""
        rows = [row for cid, rec in self.by_id.items() if rec["status"] == STATUS_OK for row in self.rd.case_rows(cid)]
        self.rd.write_results(rows)
        counts = self.counts()
        good = counts.get(STATUS_OK, 0) + counts.get(STATUS_SKIPPED, 0)
        status = "interrupted" if interrupted else "complete" if good == len(self.by_id) else "failed"
        self.write()
        if not self.rd.settle(status):
            raise RunDirError(f"{self.rd.path / 'manifest.json'}: cannot be written: the run ended ({status}) but "
                              "its manifest still says otherwise")
        emit(Event("run_end", status=status, data={"counts": counts, "run_dir": str(self.rd.path)}))
        return RunOutcome(self.rd.path, counts, interrupted)

    def close_full(self, emit: Listener) -> RunOutcome:
        """The end of a run stopped by a full disk: the manifest says so (from the reserve), resumable."""
        self.rd.mark_out_of_space()
        counts = self.counts()
        emit(Event("run_end", status="out-of-space", data={"counts": counts, "run_dir": str(self.rd.path)}))
        return RunOutcome(self.rd.path, counts, out_of_space=True)

    def counts(self) -> dict[str, int]:
        """How many cases ended in each status."""
        out: dict[str, int] = {}
        for r in self.by_id.values():
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out


EXIT_OUT_OF_SPACE = 5

@dataclass
class RunOutcome:
    """How a run ended: its directory and the count of cases per status."""

    run_dir: Path
    counts: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    out_of_space: bool = False

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        if self.out_of_space:
            return EXIT_OUT_OF_SPACE
        good = self.counts.get(STATUS_OK, 0) + self.counts.get(STATUS_SKIPPED, 0)
        return 0 if good == sum(self.counts.values()) else 1
