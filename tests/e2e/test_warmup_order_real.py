"""fsbench's background imports (fsbench.core.warmup) and the first case, with real fio: the first cache drop
runs beside the imports (its sync waits on the layout's writeback, which has nothing to do with them), and the
measured run starts only once they ended, so nothing of fsbench's own competes with a measurement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import require, write_scenario
from tests.paths import REPO

PROBE = """
import json, sys, time
from fsbench.core import warmup
from fsbench.transport import local

marks = {"imports_end": None, "drops": [], "fio": []}
def slow_imports(report):
    time.sleep(1.5)  # imports that outlast the layout of 1 MiB
    marks["imports_end"] = time.monotonic()
warmup._import_all = slow_imports
run = local.LocalTransport.run
def timed(self, argv, **kw):
    began = time.monotonic()
    if argv[0] == "fio":
        marks["fio"].append(began)
    elif "drop_caches" in " ".join(argv):
        marks["drops"].append(began)
    return run(self, argv, **kw)
local.LocalTransport.run = timed
from fsbench.cli import main
try:
    main(["run", sys.argv[1], "-o", sys.argv[2], "--progress", "none", "--no-report"], standalone_mode=False)
finally:
    print(json.dumps(marks))
"""


def test_the_first_drop_runs_beside_the_imports_and_the_measurement_after_them(tmp_path: Path) -> None:
    require("fio")
    (tmp_path / "data").mkdir()
    scenario = write_scenario(tmp_path, f"""\
        name: warmup-order
        targets:
          t: {{path: {tmp_path / 'data'}}}
        workloads:
          read:
            tool: fio
            options: {{rw: randread, bs: 4k, size: 1m, ioengine: psync, time_based: 1, runtime: 0.3}}
            drop_caches: true
        """)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(scenario), str(tmp_path / "out")], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    marks = json.loads(proc.stdout.strip().splitlines()[-1])
    layout, measured = marks["fio"]  # the prepare step, then the measured run
    assert marks["imports_end"] is not None and len(marks["drops"]) == 1
    assert layout < marks["drops"][0] < marks["imports_end"] < measured, marks
