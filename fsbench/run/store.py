"""The run directory (design.md section 3): manifest, scenario, cases, hosts, raw outputs, results."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

import yaml

from fsbench.core.csv_cells import unguard_frame
from fsbench.core.errors import RunDirError
from fsbench.core.secrets import redact, redact_data
from fsbench.core.version import SCHEMA_VERSION, __version__
from fsbench.run import run_dir_tables
from fsbench.run.run_dir_checks import check_cases, check_files
from fsbench.run.run_dir_end import out_of_space, settle_manifest
from fsbench.run.run_dir_name import new_run_folder
from fsbench.run.run_files import RESTORE, read_run_csv, read_run_json, read_run_parquet

if TYPE_CHECKING:
    import pandas

STATUS_OK, STATUS_FAILED, STATUS_INTERRUPTED, STATUS_PENDING = "ok", "failed", "interrupted", "pending"
STATUS_SKIPPED = "skipped"  # the tool is not installed where the case would run: said plainly, not failed


def utc_now() -> str:
    """ISO time in UTC, seconds precision."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()


def scenario_hash(resolved: dict) -> str:
    """A hash of what ran: the resolved scenario, keys sorted."""
    blob = json.dumps(resolved, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


#: kept free in every run directory so that a full disk can still record how the run ended
RESERVE_BYTES = 256 * 1024

class RunDirLocked(RunDirError):
    """Another fsbench process works in this run directory."""


@dataclass
class RunDir:
    """A run directory on disk, written incrementally so an interrupted run can be resumed."""

    path: Path
    manifest: dict = field(default_factory=dict)
    _lock: IO[str] | None = field(default=None, repr=False)

    @classmethod
    def create(cls, root: Path, scenario_name: str, resolved: dict, inputs: dict[str, str] | None = None,
               claim: Callable[[Path, str], bool] | None = None) -> "RunDir":
        """A new, unique run directory under root; inputs: the digests of the files the run reads (a resume
        compares them, fsbench.scenario.inputs); claim(folder, run id): whether the id is free beyond root
        too (the controller's index of runs: another run started in the same second into another folder
        holds it), else the next suffix is tried."""
        path = new_run_folder(root, scenario_name, claim)
        try:
            (path / "raw").mkdir()
            rd = cls._initialise(path, scenario_name, resolved, inputs or {})
        except OSError as exc:  # never leave a run directory without a manifest behind
            shutil.rmtree(path, ignore_errors=True)
            if out_of_space(exc):
                raise RunDirError(f"{root}: no space left to create a run directory: free some space or give "
                                  "another folder with -o") from None
            raise RunDirError(f"{path}: cannot create the run directory: {exc.strerror or exc}") from None
        return rd

    @classmethod
    def _initialise(cls, path: Path, scenario_name: str, resolved: dict, inputs: dict[str, str]) -> "RunDir":
        rd = cls(path, {
            "schema_version": SCHEMA_VERSION,
            "fsbench_version": __version__,
            "run_id": path.name,
            "scenario": scenario_name,
            "scenario_hash": scenario_hash(resolved),
            "inputs": inputs,
            "started": utc_now(),
            "ended": None,
            "status": "running",
            "cases": {},
            "attempts": 1,
        })
        rd.save_manifest()
        (path / "scenario.yaml").write_text(redact(yaml.safe_dump(redact_data(resolved), sort_keys=False,
                                                                   allow_unicode=True)))
        rd.keep_reserve()
        return rd

    # -- one process per run directory ----------------------------------------------------------
    def lock(self) -> None:
        """Hold the run directory for this process (released at exit, also by SIGKILL: it is a flock)."""
        fh = open(self.path / "lock", "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "{}"
            fh.close()
            try:
                info = json.loads(holder)
            except json.JSONDecodeError:
                info = {}
            raise RunDirLocked(f"{self.path} is in use by fsbench (pid {info.get('pid', '?')} on "
                               f"{info.get('host', '?')}, since {info.get('since', '?')}): wait for it to end, "
                               "or stop that process first") from None
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": utc_now()}) + "\n")
        fh.flush()
        self._lock = fh

    def unlock(self) -> None:
        """Let the run directory go (the lock file stays, empty of meaning)."""
        fh = self._lock
        if fh is not None:
            fh.close()
            self._lock = None

    # -- a full disk ----------------------------------------------------------------------------
    def keep_reserve(self) -> None:
        """Set aside a little space, given back when the disk fills so the end can still be recorded."""
        reserve = self.path / ".reserve"
        if not reserve.exists():
            try:
                with reserve.open("wb") as fh:
                    fh.write(b"\0" * RESERVE_BYTES)
            except OSError:
                reserve.unlink(missing_ok=True)

    def release_reserve(self) -> None:
        """Give the reserve back to the file system (the disk is full: clean-up needs a little room)."""
        (self.path / ".reserve").unlink(missing_ok=True)

    def mark_out_of_space(self) -> None:
        """Record that the run stopped on a full disk (using the reserve); resumable."""
        self.release_reserve()
        self.settle("out-of-space")

    def settle(self, status: str, **extra: object) -> bool:
        """Record how the run ended, whatever happens meanwhile (a full disk, a Ctrl-C); whether the manifest
        could be written (fsbench.run.run_dir_end)."""
        self.manifest.update(status=status, ended=utc_now(), **extra)
        return settle_manifest(self.path, self.manifest, self.save_manifest, self.release_reserve)

    def is_about(self, exc: OSError) -> bool:
        """Whether an OSError is this run directory's (stop the run) rather than a target's (fail a case).

        A full disk without a file name is a write to an open file: ours (tools' own writes fail the tool).
        """
        if exc.filename is None:
            return out_of_space(exc)
        return os.path.abspath(str(exc.filename)).startswith(os.path.abspath(self.path) + os.sep)

    def record_error(self, folder: Path, exc: BaseException) -> str:
        """An unexpected error's traceback in folder/fsbench-error.txt (masked); its path in the run, or ""."""
        import traceback

        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "fsbench-error.txt").write_text(redact(text))
        except OSError:
            return ""
        return str((folder / "fsbench-error.txt").relative_to(self.path))

    @classmethod
    def open(cls, path: Path) -> "RunDir":
        """An existing run directory; checks its schema version."""
        mf = path / "manifest.json"
        if not mf.exists():
            raise RunDirError(f"{path}: not a run directory (no manifest.json); "
                              "give the folder `fsbench run` printed")
        manifest = read_run_json(mf)  # bounded, a regular file, not nested deeper than fsbench writes
        if not isinstance(manifest, dict):
            raise RunDirError(f"{mf}: damaged manifest: a JSON {type(manifest).__name__}, where fsbench writes an "
                              f"object; {RESTORE}")
        version = manifest.get("schema_version")
        if version != SCHEMA_VERSION:
            raise RunDirError(f"{mf}: schema_version {version!r}; this fsbench reads {SCHEMA_VERSION}")
        for key, kind in (("run_id", str), ("cases", dict)):
            if not isinstance(manifest.get(key, {} if key == "cases" else None), kind):
                raise RunDirError(f"{mf}: damaged manifest: {key!r} is {type(manifest.get(key)).__name__}, not "
                                  f"{'text' if kind is str else 'an object'}; {RESTORE}")
        return cls(path, manifest)

    def check_cases(self) -> None:
        """Refuse a cases.csv that is not what fsbench wrote (--resume reads it; the rest it writes anew)."""
        check_cases(self.path)

    def check_files(self) -> None:
        """Refuse a run directory whose tables are not what fsbench wrote, naming the file and what is wrong."""
        check_files(self.path)

    @property
    def run_id(self) -> str:
        return self.manifest["run_id"]

    def save_manifest(self) -> None:
        """Write manifest.json atomically."""
        _atomic_write(self.path / "manifest.json", json.dumps(self.manifest, indent=2) + "\n")

    def raw_dir(self, case_id: str, host: str) -> Path:
        """raw/<case_id>/<host>/, created."""
        d = self.path / "raw" / case_id / host
        d.mkdir(parents=True, exist_ok=True)
        return d

    def set_case_rows(self, case_id: str, rows: list[dict]) -> None:
        """The parsed rows of one case (rebuilt into results.csv at the end)."""
        d = self.path / "raw" / case_id
        d.mkdir(parents=True, exist_ok=True)
        _atomic_write(d / "rows.json", json.dumps(rows))

    def case_rows(self, case_id: str) -> list[dict]:
        """The parsed rows of one case, or [] when it has none."""
        f = self.path / "raw" / case_id / "rows.json"
        return read_run_json(f) if os.path.lexists(f) else []

    def write_cases(self, records: list[dict]) -> None:
        """cases.csv: one row per case with its status and parameters (param_<name>)."""
        run_dir_tables.write_cases(self.path, records)

    def write_hosts(self, hosts: list[dict]) -> None:
        """hosts.csv: one row per host with its facts."""
        run_dir_tables.write_hosts(self.path, hosts)

    def write_results(self, rows: list[dict]) -> None:
        """results.csv and results.parquet from all rows."""
        run_dir_tables.write_results(self.path, rows)


def load_results(path: str | os.PathLike) -> "pandas.DataFrame":
    """Results of a run directory merged with its cases (status and param_* columns)."""
    p = Path(path)
    rd = RunDir.open(p)
    rd.check_files()
    pq, csvf = rd.path / "results.parquet", rd.path / "results.csv"
    if os.path.lexists(pq):
        results = read_run_parquet(pq)
    elif os.path.lexists(csvf):
        results = unguard_frame(read_run_csv(csvf, keep_default_na=False, na_values=[""]))
    else:
        raise RunDirError(f"{p}: no results.csv yet (the run may still be going or was interrupted early)")
    if not os.path.lexists(rd.path / "cases.csv"):
        raise RunDirError(f"{p}: no cases.csv yet (the run may still be going or was interrupted early)")
    cases = unguard_frame(read_run_csv(rd.path / "cases.csv", keep_default_na=False, na_values=[""]))
    keep = ["case_id", "status"] + [c for c in cases.columns if c.startswith("param_")]
    return results.merge(cases[keep], on="case_id", how="left")
