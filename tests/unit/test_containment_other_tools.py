"""mdtest and vdbench stay inside the case folder too: -d, anchors, luns, commands, output files."""

from __future__ import annotations

import pytest

from fsbench.core.errors import ScenarioError
from fsbench.scenario.load import load_scenario_text

HEAD = "name: s\ntargets:\n  t: {path: /srv/bench/t}\n  dev: {path: /dev/loop7, destructive: true}\nworkloads:\n"


def _issues(workload: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(HEAD + workload, "s.yaml")
    return str(err.value)


def test_mdtest_directory_commands_and_output_files():
    text = _issues("  m:\n    tool: mdtest\n    targets: [t]\n    options:\n      d: /tmp/x\n"
                   "      run-cmd-before-phase: rm -rf /\n      saveRankPerformanceDetails: /etc/x.csv\n")
    assert "fsbench sets -d to the case's own test directory" in text
    assert "--run-cmd-before-phase runs a command on every host" in text and "allow_commands: true" in text
    assert "--saveRankPerformanceDetails=/etc/x.csv names a file outside the case's raw folder" in text
    ok = "  m:\n    tool: mdtest\n    targets: [t]\n    allow_commands: true\n    options:\n" \
         "      run-cmd-before-phase: sync\n      saveRankPerformanceDetails: ranks.csv\n"
    load_scenario_text(HEAD + ok, "s.yaml")


def test_vdbench_anchor_and_lun_only_as_a_destructive_target_s_own_path():
    text = _issues("  v:\n    tool: vdbench\n    targets: [t]\n    jobs:\n      sd1: {lun: /dev/sda}\n"
                   "      fsd1: {anchor: /data}\n      rd1: {sd: sd1, elapsed: 1}\n")
    assert "an sd lun (a raw device or file) at /dev/sda is outside the case folder" in text
    assert "an fsd anchor at /data is outside the case folder" in text
    raw = "  v:\n    tool: vdbench\n    targets: [dev]\n    jobs:\n      sd1: {lun: /dev/loop7}\n" \
          "      wd1: {sd: sd1}\n      rd1: {wd: wd1, elapsed: 1}\n"
    load_scenario_text(HEAD + raw, "s.yaml")
    other = raw.replace("lun: /dev/loop7", "lun: /dev/sdb")
    assert "/dev/sdb is outside the case folder" in _issues(other)
