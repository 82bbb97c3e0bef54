"""One side of a comparison: a run's cases, per-case values, workload definitions and host facts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fsbench.analysis.summarise import case_values
from fsbench.config.yamllines import load_data
from fsbench.core.csv_cells import unguard_frame
from fsbench.core.stats_settings import Floors
from fsbench.run.run_files import read_run_bytes, read_run_csv, read_run_parquet
from fsbench.run.store import RunDir

#: workload keys that do not change what one case ran (sweeps show up as the cases' parameters)
NOT_WHAT_RAN = {"description", "repetitions", "timeout", "targets", "sweep"}

Point = tuple[str, str, tuple[tuple[str, str], ...]]  # (target, workload, ((param, value), ...))


@dataclass
class RunData:
    """What a comparison needs from one run directory, as plain tables (easy to build by hand in tests)."""

    label: str
    cases: pd.DataFrame  # cases.csv as strings: case_id, target, workload, tool, status, reason, hosts, param_*
    values: pd.DataFrame  # analysis.summarise.case_values of the results: one value per case and measurement
    workloads: dict[str, dict] = field(default_factory=dict)  # scenario.yaml `workloads`
    hosts: list[dict] = field(default_factory=list)  # hosts.csv rows (host, kernel, ..., <tool>_version)
    manifest: dict = field(default_factory=dict)
    path: Path | None = None
    floors: Floors = field(default_factory=Floors)  # scenario.yaml settings.stats: when a difference counts

    @classmethod
    def from_frames(cls, label: str, results: pd.DataFrame, cases: pd.DataFrame, **kw: object) -> RunData:
        """A run from a tidy results table and a cases table."""
        cases = cases.astype(object).where(cases.notna(), "").astype(str)  # blanks, not "nan"
        for col, default in (("status", "ok"), ("reason", ""), ("hosts", ""), ("tool", "")):
            if col not in cases:
                cases[col] = default
        results = results.drop(columns=[c for c in results.columns if c.startswith("param_")])
        for col in ("host", "job"):  # all-blank columns come back from CSV as float NaN
            if col in results:
                results[col] = results[col].astype("string").fillna("").astype(str)
        # kw: RunData's other fields by name (workloads, hosts, manifest, path, floors), each typed there
        return cls(label, cases.reset_index(drop=True), case_values(results), **kw)  # type: ignore[arg-type]

    def point_of(self, case: pd.Series) -> Point:
        """The comparison key of a case: what it ran, not its id."""
        params = tuple(sorted((c.removeprefix("param_"), str(case[c])) for c in self.cases.columns
                              if c.startswith("param_") and str(case[c]) != ""))
        return str(case["target"]), str(case["workload"]), params

    def definition(self, workload: str) -> dict:
        """The parts of a workload's resolved definition that decide what a case ran."""
        spec = self.workloads.get(workload) or {}
        return {k: v for k, v in spec.items() if k not in NOT_WHAT_RAN}

    def tool_versions(self, tool: str, hosts: str) -> set[str]:
        """Versions of a tool on the hosts a case ran on (empty when unknown, e.g. ingested runs)."""
        names = set(hosts.replace(",", " ").split())
        column = f"{tool}_version"
        return {str(h[column]) for h in self.hosts
                if h.get(column) and (not names or h.get("host") in names)}

    def host_facts(self) -> dict[str, dict]:
        """Facts per host name."""
        return {str(h.get("host", "")): h for h in self.hosts}


def load_run(path: str | Path, label: str | None = None) -> RunData:
    """Read a run directory (schema and tables checked first: RunDirError naming a damaged file)."""
    rd = RunDir.open(Path(path))
    rd.check_files()
    run = rd.path
    scenario = load_data(run / "scenario.yaml") if (run / "scenario.yaml").exists() else {}
    cases = _read_strings(run / "cases.csv")
    hosts = _read_strings(run / "hosts.csv").to_dict("records")
    pq, csvf = run / "results.parquet", run / "results.csv"
    if os.path.lexists(pq):  # each read bounded, of a regular file (fsbench.run.run_files)
        results = read_run_parquet(pq)
    elif os.path.lexists(csvf):
        results = unguard_frame(read_run_csv(csvf, keep_default_na=False, na_values=[""]))
    else:
        results = pd.DataFrame(columns=["case_id", "repetition", "target", "workload", "operation", "metric",
                                        "unit", "stat", "host", "value"])
    settings = (scenario or {}).get("settings") if isinstance(scenario, dict) else None
    stats = settings.get("stats") if isinstance(settings, dict) else None
    return RunData.from_frames(label or rd.run_id, results, cases, workloads=(scenario or {}).get("workloads") or {},
                               hosts=hosts, manifest=rd.manifest, path=run,
                               floors=Floors.of(stats if isinstance(stats, dict) else None))


def _read_strings(path: Path) -> pd.DataFrame:
    """A CSV as strings: parameters stay `1`, not `1.0` as they would in a float column with blanks."""
    if not os.path.lexists(path) or not read_run_bytes(path).strip():  # bounded, a regular file
        return pd.DataFrame()
    return unguard_frame(read_run_csv(path, dtype=str, keep_default_na=False))
