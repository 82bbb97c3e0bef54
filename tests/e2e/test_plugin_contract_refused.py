"""A third-party plug-in that breaks its contract is refused by the real CLI, named with its entry point.

The dd tool of test_third_party_plugin, installed the same way (a .dist-info on the path), with one hook
misspelt or of another signature: before the contract was checked, fsbench took it and ignored the hook.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_scenario
from tests.e2e.test_third_party_plugin import PLUGIN as DD
from tests.paths import REPO

WHERE = "the tool plug-in 'dd' (entry point dd = fsbench_dd:PLUGIN in fsbench.tools) does not keep to its contract"

COLLECTOR = '''\
"""A sampler collector whose tail hook is misspelt."""

from fsbench.api.collectors import Collected


class Sampler:
    name, tool, target_kinds = "sampler", "", ()

    def check(self, collector):
        return []

    def command(self, collector, values):
        return ["vmstat", "1"]

    def after(self, collector, output):
        return None

    def parse(self, collector, output, after, host):
        return Collected()

    def tails_s(self, collector):
        return 1.0


PLUGIN = Sampler()
'''


def _install(site: Path, name: str, source: str, group: str, entry: str) -> None:
    pkg = site / f"fsbench_{name}"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(source)
    info = site / f"fsbench_{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fsbench-{name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry} = fsbench_{name}:PLUGIN\n")


def _validate(site: Path, scenario: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}
    return subprocess.run([sys.executable, "-m", "fsbench", "validate", str(scenario)], env=env,
                          capture_output=True, text=True, timeout=120)


def _scenario(tmp_path: Path, tool: str = "dd") -> Path:
    return write_scenario(tmp_path, f"""\
        name: contract
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t}}}}
        workloads:
          w: {{tool: {tool}, options: {{bs: 1M, count: 4}}}}
        """)


def test_a_tool_with_a_misspelt_hook_is_refused_by_name(tmp_path):
    site = tmp_path / "site"
    misspelt = DD.replace("    def version_argv(", "    def layout_byte(self, options, job_file_text, jobs, "
                                                    "job_file=None):\n        return 4.0\n\n    def version_argv(")
    _install(site, "dd", misspelt, "fsbench.tools", "dd")
    proc = _validate(site, _scenario(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert WHERE in proc.stderr and "it has 'layout_byte', which is no hook: did you mean 'layout_bytes'?" \
        in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_tool_whose_parse_file_takes_other_parameters_is_refused_by_name(tmp_path):
    site = tmp_path / "site"
    wrong = DD.replace("    def parse_file(self, path):\n        for line in Path(path)",
                       "    def parse_file(self):\n        path = 'stderr'\n        for line in Path(path)")
    assert wrong != DD
    _install(site, "dd", wrong, "fsbench.tools", "dd")
    proc = _validate(site, _scenario(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert WHERE in proc.stderr and "parse_file() does not take what parse_file(self, path: 'Path') is given: " \
        "it has no parameter 'path'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_collector_with_a_misspelt_hook_is_refused_by_name(tmp_path):
    site = tmp_path / "site"
    _install(site, "sampler", COLLECTOR, "fsbench.collectors", "sampler")
    scenario = write_scenario(tmp_path, f"""\
        name: contract
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t}}}}
        collectors:
          vm: {{kind: sampler}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = _validate(site, scenario)
    assert proc.returncode == 2, proc.stderr
    assert "the collector kind plug-in 'sampler' (entry point sampler = fsbench_sampler:PLUGIN in " \
           "fsbench.collectors) does not keep to its contract: it has 'tails_s', which is no hook: did you mean " \
           "'tail_s'?" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
