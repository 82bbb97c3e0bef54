"""The cache drop at the level the scenario asks for (seed 001's `echo 1 > /proc/sys/vm/drop_caches`), on this
machine as root, with real fio: planned, shown, run and recorded."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import assert_drop_proof, run_cli, write_scenario


def _scenario(tmp_path: Path, level: str) -> Path:
    return write_scenario(tmp_path, f"""\
        name: droplevel
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"], teardown: ["rm -rf ${{target.path}}"]}}}}
        workloads:
          seq-read: {{tool: fio, options: {{rw: read, bs: 1m, size: 16m, ioengine: psync}}, drop_caches: true{level}}}
        """)


def test_drop_caches_level_1_drops_the_page_cache_only_as_seed_001_wrote_it(tmp_path, fio):
    # three repetitions: the dentry count is the machine's, and another test's level-3 drop on another worker
    # may land between one case's two readings (it did, once, in a full run); not between all three
    scenario = _scenario(tmp_path, ", drop_caches_level: 1, repetitions: 3")
    shown = run_cli("plan", str(scenario), "--show", check=True).stdout
    assert "-- drop the page cache on every involved host (sync; echo 1 > /proc/sys/vm/drop_caches)" in shown
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    proofs = [json.loads((run / "raw" / f"t__seq-read__r{i}" / "local" / "drop_caches.json").read_text())
              for i in (1, 2, 3)]
    for proof in proofs:
        assert proof["command"] == "sync && echo 1 > /proc/sys/vm/drop_caches" and proof["level"] == 1, proof
        assert_drop_proof(proof)
    # level 1 leaves the dentry cache alone (level 3 frees every unused dentry, most of them)
    assert any(p["dentries_after"] > p["dentries_before"] // 2 for p in proofs), proofs
    assert "drop_caches_level: 1" in (run / "scenario.yaml").read_text()  # the setting, kept with the run
    assert not (tmp_path / "t").exists()


def test_the_default_level_is_unchanged_and_a_level_that_drops_no_page_cache_is_refused(tmp_path):
    shown = run_cli("plan", str(_scenario(tmp_path, "")), "--show", check=True).stdout
    assert "-- drop the page cache on every involved host, dentries and inodes too " \
           "(sync; echo 3 > /proc/sys/vm/drop_caches)" in shown
    bad = run_cli("plan", str(_scenario(tmp_path, ", drop_caches_level: 2")))
    assert bad.returncode != 0 and "drop_caches_level" in bad.stderr and "expected 1" in bad.stderr, bad.stderr
