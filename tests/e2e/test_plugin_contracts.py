"""Target kinds and transports from other packages, found through their entry points, held to their contracts.

Each plug-in is a package installed (as a .dist-info on the path) beside fsbench, and fsbench runs as a
user runs it: a kind whose settings are one typed declaration runs a real fio case; a kind with a
misspelt hook is refused by name; a transport plug-in gets the run's marker, the output cap and each
case's work folder by name from the runner, and its work folders are removed with the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tests.conftest import write_scenario
from tests.paths import REPO

KIND = '''\
"""A folder fsbench makes with the mode its settings say, and removes afterwards."""

import posixpath
from dataclasses import dataclass

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option


@dataclass(frozen=True)
class ModeDir:
    mode: str = option(s.matches(r"^0[0-7]{3}$", "an octal mode such as 0700"), "0755", required=True)
    note: str = option(s.line_text, "", doc="a text with placeholders")


SECTION = Section(ModeDir, "modedir settings")


class ModeDirKind:
    name = "modedir"
    address = "directory"
    section = SECTION
    client_process = ""

    def settings(self, checked: dict | None) -> ModeDir | None:
        return SECTION.build(checked)

    def texts(self, settings: ModeDir | None) -> list[tuple[str, str]]:
        return [("note", settings.note)] if settings else []

    def check(self, target: KindTarget[ModeDir]) -> list[KindIssue]:
        return [] if target.settings else [(("kind",), "a modedir target needs a `modedir:` section", "")]

    def plan(self, target: KindTarget[ModeDir], values: dict[str, str], scratch: str) -> KindPlan:
        spec = settings_of(target, self.name)
        state = posixpath.join(scratch, "modedir", target.name)
        seen = posixpath.join(state, "mode")
        return KindPlan(prepare=[["mkdir", "-p", target.path, state], ["chmod", spec.mode, target.path],
                                 ["sh", "-c", 'stat -c %a "$0" > "$1"', target.path, seen]],
                        after=[["rmdir", target.path]], logs={seen: "mode-{host}.txt"})


PLUGIN: TargetKind[ModeDir] = ModeDirKind()
'''

MISSPELT = '''\
from fsbench.api.kinds import KindPlan


class Misspelt:
    name = "misspelt"
    address = "directory"
    section = None
    client_process = ""

    def settings(self, checked):
        return None

    def texts(self, settings):
        return []

    def check(self, target):
        return []

    def plan(self, target, values, scratch):
        return KindPlan()

    def one_hots(self, target):  # meant to be the OneHost hook: it would never be asked
        return "one host only"


PLUGIN = Misspelt()
'''

TRANSPORT = '''\
"""Hosts reached through this machine, each with its work folders under RELAY_BASE (as SSH hosts have theirs
under remote_base); every call the runner makes of the contract is written to RELAY_LOG."""

import os
import shutil

from fsbench.transport.local import LocalTransport


class RelayTransport(LocalTransport):
    def __init__(self, host, base, log):
        super().__init__(host)
        self._base, self._log = base, log

    def _note(self, *words):
        with open(self._log, "a") as fh:
            fh.write(" ".join(str(w) for w in words) + "\\n")

    @property
    def remote_base(self):
        return self._base

    def mark(self, marker):
        super().mark(marker)
        self._note("mark", self.host, *sorted(f"{k}={v}" for k, v in marker.items()))

    def cap_output(self, cap):
        super().cap_output(cap)
        self._note("cap", self.host, cap)

    def workdir(self, raw_dir, name):
        raw_dir.mkdir(parents=True, exist_ok=True)
        path = os.path.join(self._base, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        self._note("workdir", self.host, name)
        return path


class Relay:
    name = "relay"

    def make_all(self, hosts, inventory):
        return {h.name: RelayTransport(h.name, os.environ["RELAY_BASE"], os.environ["RELAY_LOG"]) for h in hosts}


PLUGIN = Relay()
'''


def _install(site: Path, package: str, group: str, name: str, source: str) -> None:
    """A package with one plug-in, installed as a .dist-info on the path."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(source)
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {package}:PLUGIN\n")


def _fsbench(site: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}", **(env or {})}
    return subprocess.run([sys.executable, "-m", "fsbench", *args], env=full, capture_output=True, text=True,
                          timeout=300)


def test_a_kind_whose_settings_are_one_declaration_is_checked_and_runs(tmp_path, fio):
    site = tmp_path / "site"
    _install(site, "fsbench_modedir", "fsbench.target_kinds", "modedir", KIND)
    path = tmp_path / "modedir-t"
    scenario = write_scenario(tmp_path, f"""\
        name: modedir
        monitor: {{enabled: false}}
        targets:
          t:
            path: {path}
            kind: modedir
            modedir: {{mode: "0700", note: "run ${{run.id}}"}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m, bs: 64k}}}}
        """)
    bad = write_scenario(tmp_path, scenario.read_text().replace('{mode: "0700", note: "run ${run.id}"}',
                                                                '{mode: "777", noet: x}'), "bad.yaml")
    checked = _fsbench(site, "validate", str(bad))
    assert checked.returncode == 3, checked.stderr
    assert "bad.yaml:7: targets.t.modedir.mode: '777' is not an octal mode such as 0700" in checked.stderr
    assert "targets.t.modedir.noet: unknown key 'noet'" in checked.stderr
    assert "did you mean 'note'? allowed here: mode, note" in checked.stderr
    proc = _fsbench(site, "run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    assert (run / "targets" / "t" / "mode-local.txt").read_text().strip() == "700"  # the typed setting, applied
    assert set(pd.read_csv(run / "results.csv").tool) == {"fio"} and not path.exists()  # rmdir'd at teardown


def test_a_kind_with_a_misspelt_hook_is_refused_by_name(tmp_path):
    site = tmp_path / "site"
    _install(site, "fsbench_misspelt", "fsbench.target_kinds", "misspelt", MISSPELT)
    scenario = write_scenario(tmp_path, f"""\
        name: misspelt
        targets: {{t: {{path: {tmp_path}/t, kind: misspelt}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = _fsbench(site, "validate", str(scenario))
    assert proc.returncode == 2, proc.stderr
    assert ("the target kind plug-in 'misspelt' (entry point misspelt = fsbench_misspelt:PLUGIN in "
            "fsbench.target_kinds) does not keep to its contract: it has 'one_hots', which is no hook: did you mean "
            "'one_host'?") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_transport_plug_in_gets_marker_cap_and_named_work_folders(tmp_path, fio):
    site = tmp_path / "site"
    _install(site, "fsbench_relay", "fsbench.transports", "relay", TRANSPORT)
    base, log = tmp_path / "relay-base", tmp_path / "relay.log"
    scenario = write_scenario(tmp_path, f"""\
        name: relay
        monitor: {{enabled: false}}
        hosts: {{relay1: {{transport: relay}}}}
        settings: {{output_cap: 2MiB}}
        targets: {{t: {{path: {tmp_path}/relay-t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m, bs: 64k}}}}
        """)
    proc = _fsbench(site, "run", str(scenario), "-o", str(tmp_path / "out"),
                    env={"RELAY_BASE": str(base), "RELAY_LOG": str(log)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    run_id = run.name
    calls = log.read_text().splitlines()
    assert f"mark relay1 FSBENCH_RUN={run_id}" in calls and f"cap relay1 {2 * 2**20}" in calls
    assert f"workdir relay1 {run_id}/t__w__r1/relay1" in calls  # the runner names it; no raw path is parsed
    assert set(pd.read_csv(run / "results.csv").tool) == {"fio"}  # fio's outputs came back from the work folder
    assert base.is_dir() and not (base / run_id).exists()  # the run removed its work folders there
