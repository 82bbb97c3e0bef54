"""The cases' records of a run: cases.csv and the manifest's statuses, kept across a resume."""

from __future__ import annotations

import csv

from fsbench.core.csv_cells import unguard_row
from fsbench.run.store import STATUS_OK, STATUS_PENDING, RunDir, utc_now
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
        old = self.rd.path / "cases.csv"
        if not old.exists():
            return
        with old.open(newline="") as fh:
            for row in map(unguard_row, csv.DictReader(fh)):  # as written before the spreadsheet guard
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

    def counts(self) -> dict[str, int]:
        """How many cases ended in each status."""
        out: dict[str, int] = {}
        for r in self.by_id.values():
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out
