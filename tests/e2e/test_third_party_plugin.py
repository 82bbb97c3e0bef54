"""A tool from another package, found through its entry point: one package, nothing else changed.

This is the walkthrough of docs/architecture.md ("How to add a tool"), run for real: a package
`fsbench_dd` with a `dd` tool, installed (as a .dist-info on the path) beside fsbench.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tests.conftest import write_scenario
from tests.paths import REPO

PLUGIN = '''\
"""dd as an fsbench tool: write COUNT blocks of BS bytes, read dd's own summary line."""

import re
from pathlib import Path

from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult, measurement
from fsbench.api.tools import Invocation, OptionIssue

_SUMMARY = re.compile(r"^(\\d+) bytes .* copied, ([\\d.]+) s, ")


class DdTool:
    name = "dd"
    bring_your_own = False
    accepts = ("directory",)
    metrics = {}
    operations = ("write",)
    primary_metrics = ("bandwidth",)
    packages = {"apt-get": ["coreutils"], "dnf": ["coreutils"], "zypper": ["coreutils"]}

    def check_options(self, options, job_file_text, jobs, ctx):
        return [OptionIssue(k, f"unknown dd option {k!r}", "known: bs, count") for k in options
                if k not in ("bs", "count")]

    def estimate_seconds(self, options, job_file_text, jobs, job_file=None):
        return 1.0

    def build(self, case, test_dir, ctx=None):
        o = case.options
        return Invocation(argv=["dd", "if=/dev/zero", f"of={test_dir}/dd.out", f"bs={o.get('bs', '1M')}",
                                f"count={o.get('count', 8)}", "conv=fsync"])

    def parse_outputs(self, raw_dir):
        return self.parse_file(raw_dir / "stderr")

    def parse_file(self, path):
        for line in Path(path).read_text(errors="replace").splitlines():
            m = _SUMMARY.match(line)
            if m:
                size, seconds = float(m.group(1)), float(m.group(2))
                return ParseResult([measurement("dd", "write", "bandwidth", size / seconds),
                                    measurement("dd", "write", "io_bytes", size)])
        raise ParseError("dd", str(path), "no dd summary line")

    def version_argv(self, options=None):
        return ["dd", "--version"]


PLUGIN = DdTool()
'''


def _install(site: Path) -> None:
    pkg = site / "fsbench_dd"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(PLUGIN)
    info = site / "fsbench_dd-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fsbench-dd\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fsbench.tools]\ndd = fsbench_dd:PLUGIN\n")


def _fsbench(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    return subprocess.run([sys.executable, "-m", "fsbench", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_tool_from_another_package_runs_is_ingested_and_reported(tmp_path):
    site = tmp_path / "site"
    _install(site)
    scenario = write_scenario(tmp_path, f"""\
        name: dd-plugin
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          write: {{tool: dd, options: {{bs: 1M, count: 4}}}}
        """)
    typo = write_scenario(tmp_path, scenario.read_text().replace("count: 4", "cuont: 4"), "typo.yaml")
    checked = _fsbench(site, "validate", str(typo))
    assert checked.returncode == 3 and "unknown dd option 'cuont'" in checked.stderr
    proc = _fsbench(site, "run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    results = pd.read_csv(run / "results.csv")
    assert set(results.tool) == {"dd"} and results[results.metric == "io_bytes"].value.iloc[0] == 4 * 2**20
    assert (run / "report.html").exists() and "dd" in (run / "hosts.csv").read_text()
    ingested = _fsbench(site, "ingest", "dd", str(run / "raw" / "t__write__r1" / "local" / "stderr"))
    assert ingested.returncode == 0 and "bandwidth" in ingested.stdout
    without = subprocess.run([sys.executable, "-m", "fsbench", "validate", str(scenario)], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert without.returncode == 3 and "unknown tool 'dd'" in without.stderr


def test_a_broken_plugin_is_named_not_a_traceback(tmp_path):
    """A scenario naming a plug-in that cannot be imported is refused with its name; one that does not name it
    is checked without importing it (validate imports only the plug-ins a scenario names)."""
    site = tmp_path / "site"
    _install(site)
    (site / "fsbench_dd" / "__init__.py").write_text("raise ImportError('missing dependency: frobnicate')\n")
    fio_only = write_scenario(tmp_path, f"""\
        name: broken
        targets: {{t: {{path: {tmp_path}/t}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """, "fio.yaml")
    assert _fsbench(site, "validate", str(fio_only)).returncode == 0
    scenario = write_scenario(tmp_path, fio_only.read_text().replace("tool: fio, options: {rw: write, size: 1m}",
                                                                    "tool: dd, options: {bs: 1M}"))
    proc = _fsbench(site, "validate", str(scenario))
    assert proc.returncode == 2 and "the tool plug-in 'dd' (fsbench_dd:PLUGIN) cannot be loaded" in proc.stderr
    assert "frobnicate" in proc.stderr and "Traceback" not in proc.stderr
