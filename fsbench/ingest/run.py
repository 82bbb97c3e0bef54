"""`fsbench ingest ... --run-dir OUT`: existing outputs as a run directory, so reports can compare them."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

from fsbench.core.errors import ParseError, RunDirError
from fsbench.ingest import parser_for, unreadable
from fsbench.run.store import STATUS_FAILED, STATUS_OK, RunDir, utc_now

_SAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def _name(text: str) -> str:
    return _SAFE.sub("_", text).strip("_") or "output"


def _workload_of(path: Path) -> str:
    """The file's name without its extensions: ssd/randread.json and hdd/randread.json compare."""
    name = path.name
    for suffix in (".stdout.txt", ".stdout", ".json", ".txt", ".log", ".html", ".out"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return _name(name[: -len(suffix)])
    return _name(path.stem)


def ingest_run_dir(tool: str, files: list[str], out: Path, target: str | None = None,
                   warn: Callable[[str], None] | None = None) -> tuple[Path, list[ParseError]]:
    """Write a run directory where each file is a case (its target: --target or the parent folder); warn gets
    what was left out of a usable file (also in its case's warnings in cases.csv)."""
    parse = parser_for(tool)
    if out.exists() and not out.is_dir():
        raise RunDirError(f"{out} exists and is not a folder; choose a new folder for --run-dir")
    if out.exists() and any(out.iterdir()):
        raise RunDirError(f"{out} exists and is not empty; choose a new folder for --run-dir")
    plan = []
    for f in files:
        p = Path(f)
        t = _name(target or p.resolve().parent.name)
        plan.append((p, t, _workload_of(p)))
    targets: dict[str, dict] = {}
    workloads: dict[str, dict] = {}
    for p, t, w in plan:
        targets.setdefault(t, {"path": str(p.resolve().parent), "baseline": not targets})
        workloads.setdefault(w, {"tool": tool, "description": f"ingested from existing {tool} output"})
    resolved = {"name": out.name, "description": f"{len(files)} existing {tool} outputs, ingested",
                "targets": targets, "workloads": workloads}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file on the way (/etc/passwd/x), no permission, a read-only file system
        raise RunDirError(f"{out}: cannot create the run directory there ({exc.filename or out.parent}: "
                          f"{exc.strerror or exc}); give a folder you can write to with --run-dir") from None
    rd = RunDir.create(out.parent, out.name, resolved)
    if rd.path != out:  # RunDir.create adds a time stamp; ingest writes exactly where asked
        rd.path.rename(out)
        rd.path = out
    rd.manifest.update(run_id=out.name, scenario=out.name, source="fsbench ingest")
    records, rows, errors = [], [], []
    seen: dict[str, int] = {}
    for i, (p, t, w) in enumerate(plan, start=1):
        key = f"{t}__{w}"
        seen[key] = seen.get(key, 0) + 1
        rep = seen[key]
        cid = f"{key}__r{rep}"
        record = {"case_id": cid, "index": i, "target": t, "workload": w, "tool": tool, "repetition": rep,
                  "status": STATUS_OK, "reason": "", "started": utc_now(), "ended": utc_now(), "params": {},
                  "hosts": "", "warnings": ""}
        refused = unreadable(tool, p)  # a device or a pipe would never end copying
        if refused is None:
            raw = rd.raw_dir(cid, "ingested")
            (shutil.copytree if p.is_dir() else shutil.copyfile)(p, raw / p.name)  # raw copy first
        try:
            if refused is not None:
                raise refused
            result = parse(p)  # the user's path in messages; the raw copy is already kept
        except ParseError as exc:
            errors.append(exc)
            record.update(status=STATUS_FAILED, reason=str(exc))
        else:
            context = {"run_id": out.name, "case_id": cid, "scenario": out.name, "target": t, "workload": w,
                       "repetition": rep, "source": str(p)}
            case_rows = [{**context, **r} for r in result.rows]
            rd.set_case_rows(cid, case_rows)
            rows.extend(case_rows)
            record["warnings"] = "; ".join(result.warnings)
            for w in result.warnings:
                if warn is not None:
                    warn(f"{p}: {w}")
        records.append(record)
        rd.manifest["cases"][cid] = record["status"]
    rd.write_cases(records)
    rd.write_results(rows)
    rd.write_hosts([])
    rd.manifest.update(status="complete" if not errors else "failed", ended=utc_now())
    rd.save_manifest()
    return out, errors
