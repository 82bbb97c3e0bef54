"""Issue 21 with real clients: a client's own cache emptied before a read that measures the store (a real
rclone mount with its full VFS cache, on fsbench's own S3 server and its counters), and the page cache
check where no backend counts (a real local folder, real fio, a real drop of the page cache)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli, write_scenario

#: how close the backend's bytes of a read from the store are to fio's
MARGIN = 0.10
MIB = 1024 * 1024


def _run(tmp_path: Path, text: str) -> tuple[Path, pd.DataFrame]:
    proc = run_cli("run", str(write_scenario(tmp_path, text)), "-o", str(tmp_path / "runs"), "--progress", "plain",
                   timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all(), cases[["case_id", "status", "reason"]].to_string()
    return run, pd.read_csv(run / "results.csv", keep_default_na=False)


def test_rclone_read_after_its_cache_is_emptied_measures_the_store_and_a_re_read_from_it_is_flagged(tmp_path):
    for tool in ("fio", "rclone", "fsbench-s3", "curl", "fusermount3"):
        require(tool)
    mnt = tmp_path / "mnt"
    run, results = _run(tmp_path, f"""
        name: client-cache-real
        hosts: {{local: {{transport: local}}}}
        monitor: {{enabled: false}}
        settings: {{scratch: {tmp_path / "scratch"}}}
        services:
          s3: {{kind: s3, hosts: [local], s3: {{server: fsbench-s3, buckets: [fsbench]}}}}
        targets:
          rclone:
            kind: rclone
            path: {mnt}
            services: [s3]
            rclone:
              endpoint: ${{services.s3.endpoint}}
              bucket: ${{services.s3.bucket}}
              region: ${{services.s3.region}}
              access_key: ${{services.s3.access_key}}
              secret_key: ${{services.s3.secret_key}}
              options: [--vfs-cache-mode, full, --vfs-write-back, 0s]
        workloads:
          read-store: {{tool: fio, options: {{rw: read, bs: 1m, size: 8m}}, dataset: a}}
          re-read: {{tool: fio, options: {{rw: read, bs: 1m, size: 8m}}, dataset: a, drop_caches: false}}
        """)
    fio = results[(results.tool == "fio") & (results.metric == "io_bytes")].set_index("workload")
    backend = results[(results.tool == "backend") & (results.window == "tool") & (results.metric == "io_bytes")
                      & (results.operation == "read")].set_index("workload")
    # emptied first, with the proof: the laid-out file was in rclone's cache, and then it was not
    proof = json.loads((run / "raw" / "rclone__read-store__r1" / "local" / "drop_client_cache.json").read_text())
    assert proof["ok"] and proof["error"] == "", proof
    (folder,) = proof["folders"]
    assert folder["folder"].startswith(str(tmp_path / "scratch")) and folder["bytes_before"] >= 8 * MIB
    assert folder["bytes_after"] < MIB, proof
    # so the read came from S3: the backend's bytes within MARGIN of fio's, and no flag
    assert fio.loc["read-store", "validity"] == "ok", fio.loc["read-store", "validity_detail"]
    # (at least fio's bytes: on a loaded machine rclone's downloader may fetch a chunk twice, which is
    # read amplification, not a cache)
    assert (1 - MARGIN) * 8 * MIB <= backend.loc["read-store", "value"] <= 2.5 * 8 * MIB
    # the same file again, without the drop: rclone's full cache served it, and the row says so
    assert not (run / "raw" / "rclone__re-read__r1" / "local" / "drop_client_cache.json").exists()
    assert fio.loc["re-read", "validity"] == "flagged"
    assert fio.loc["re-read", "validity_detail"].startswith("read served from cache: backend served 0 %")
    assert backend.loc["re-read", "value"] < 0.5 * fio.loc["re-read", "value"]
    mounts = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout.split()
    assert str(mnt) not in mounts
    assert not (tmp_path / "scratch").exists() or not any((tmp_path / "scratch").iterdir())


def test_a_local_read_without_a_page_cache_drop_is_flagged_and_one_after_a_drop_is_not(tmp_path):
    require("fio")
    (tmp_path / "data").mkdir()
    _, results = _run(tmp_path, f"""
        name: page-cache-real
        hosts: {{local: {{transport: local}}}}
        monitor: {{enabled: false}}
        targets:
          local: {{path: {tmp_path / "data"}}}
        workloads:
          cached: {{tool: fio, options: {{rw: read, bs: 1m, size: 8m}}, dataset: a, drop_caches: false}}
          dropped: {{tool: fio, options: {{rw: read, bs: 1m, size: 8m}}, dataset: a, drop_caches: true}}
          direct: {{tool: fio, options: {{rw: read, bs: 1m, size: 8m, direct: 1}}, dataset: a, drop_caches: false}}
        """)
    fio = results[(results.tool == "fio") & (results.metric == "bandwidth")].set_index("workload")
    assert fio.loc["cached", "validity"] == "flagged", fio.loc["cached", "validity_detail"]
    assert fio.loc["cached", "validity_detail"].startswith(
        "working set fits in the page cache: fio read 8 MiB of a 8 MiB working set")
    assert "it was not dropped before the read" in fio.loc["cached", "validity_detail"]
    assert fio.loc["dropped", "validity"] == "ok", fio.loc["dropped", "validity_detail"]
    assert "dropped before the read, read once" in fio.loc["dropped", "validity_detail"]
    assert fio.loc["direct", "validity"] == "ok", fio.loc["direct", "validity_detail"]
    assert "O_DIRECT" in fio.loc["direct", "validity_detail"]
