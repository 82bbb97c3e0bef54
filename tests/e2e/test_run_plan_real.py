"""`fsbench plan --show` shows what a real run then runs: the same command lines and job files, byte for byte
(once the run id and the scratch folder's random part are known), because both come from the run's own
derivation of a case's folder and build context (fsbench.run.case_context)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_cli, write_scenario


def _sections(plan: str) -> dict[str, dict[str, list[str]]]:
    """The plan's `-- title` sections: their commands (`$ ...`) and files (`--- name` then `| line`)."""
    out: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    name = ""
    for line in plan.splitlines():
        if line.startswith("-- "):
            current = out.setdefault(line[3:].split(" (")[0].split(",")[0], {"$": []})
            name = ""
        elif line.startswith("   $ "):
            current["$"].append(line[5:])
        elif line.startswith("   --- "):
            name = line[7:]
            current[name] = []
        elif line.startswith("   | ") or line == "   |":
            current[name].append(line[5:])
    return out


def test_plan_show_prints_the_commands_and_files_the_run_writes(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: same
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          r: {{tool: fio, options: {{rw: read, size: 1m, bs: 64k}}, dataset: d, drop_caches: false}}
        """)
    plan = run_cli("plan", str(scenario), "--show", check=True).stdout
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", check=True)
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "t__r__r1" / "local"
    token = re.search(rf"fsbench-{re.escape(run.name)}-([0-9a-f]{{12}})", (raw / "job.fio").read_text())
    assert token, (raw / "job.fio").read_text()
    known = plan.replace("<run-id>", run.name).replace("<random>", token.group(1))
    shown = _sections(known)
    for title, folder in (("prepare", raw / "prepare"), ("run", raw)):
        section = shown[title]
        assert section["$"] == (folder / "command").read_text().splitlines(), title
        files = [n for n in section if n != "$"]
        assert files == ["job.fio"]
        assert section["job.fio"] == (folder / "job.fio").read_text().rstrip("\n").splitlines(), title
    assert f"data in {tmp_path}/t/fsbench-{run.name}-{token.group(1)}/data/d (shared dataset)" in known
