"""Real juicefs objbench on `storage: file`: the bucket is made in the case folder and nothing lands outside."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import require, run_cli, write_scenario

pytestmark = pytest.mark.e2e


def test_a_file_bucket_lives_in_the_case_folder(tmp_path):
    require("juicefs")
    scenario = write_scenario(tmp_path, f"""\
        name: objbench-bucket
        targets:
          t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          ob:
            tool: juicefs-objbench
            options: {{storage: file, bucket: objects/, threads: 1, big_object_size: 1m, block_size: 1m,
                       small_objects: 2, small_object_size: 4k, skip_functional_tests: true}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    assert pd.read_csv(run / "cases.csv", keep_default_na=False).status.iloc[0] == "ok"
    command = (run / "raw" / "t__ob__r1" / "local" / "command").read_text()
    assert re.search(rf" {re.escape(str(tmp_path))}/t/fsbench-{run.name}-[0-9a-f]{{12}}/t__ob__r1/objects/\n", command)
    # the case folder (bucket included) is gone; nothing was written beside the target
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "scenario.yaml", "t"]
    assert list((tmp_path / "t").iterdir()) == []
    bad = run_cli("validate", str(write_scenario(tmp_path, scenario.read_text().replace("objects/", "/etc/"),
                                                 name="etc.yaml")))
    assert bad.returncode == 3 and "bucket=/etc/ is a folder outside the case folder" in bad.stderr
