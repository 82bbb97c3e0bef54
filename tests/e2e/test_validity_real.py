"""Issue 21 for real: s3fs on fsbench's own S3 server (fsbench-s3, its counters), real fio. A read the
client serves from its cache is flagged, a read from the store records the backend's bytes within 10 % of
fio's and no flag; a write timed before s3fs uploaded it (at close) is flagged, one whose timing includes
the upload (end_fsync) is not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli, write_scenario

#: how close the backend's bytes of a read from the store are to fio's (s3fs reads what fio asks for)
MARGIN = 0.10
SIZE = 16 * 1024 * 1024


def _scenario(tmp_path: Path) -> Path:
    return write_scenario(tmp_path, f"""
        name: validity-real
        hosts: {{local: {{transport: local}}}}
        monitor: {{enabled: false}}
        services:
          s3: {{kind: s3, hosts: [local], s3: {{server: fsbench-s3, buckets: [fsbench]}}}}
        targets:
          s3fs:
            kind: s3fs
            path: {tmp_path / "mnt"}
            services: [s3]
            s3fs:
              endpoint: ${{services.s3.endpoint}}
              bucket: ${{services.s3.bucket}}
              region: ${{services.s3.region}}
              access_key: ${{services.s3.access_key}}
              secret_key: ${{services.s3.secret_key}}
        workloads:
          write: {{tool: fio, options: {{rw: write, bs: 1m, size: 16m, direct: 1}}, dataset: a}}
          write-fsync: {{tool: fio, options: {{rw: write, bs: 1m, size: 16m, direct: 1, end_fsync: 1}}, dataset: b}}
          read-store: {{tool: fio, options: {{rw: read, bs: 1m, size: 16m, direct: 1}}, dataset: a}}
          read-cached:
            tool: fio
            options: {{rw: read, bs: 1m, size: 16m, direct: 1, time_based: 1, runtime: 2}}
            dataset: a
        """)


def test_cached_reads_and_writes_timed_before_the_upload_are_flagged_on_s3fs(tmp_path):
    for tool in ("fio", "s3fs", "fsbench-s3", "curl", "fusermount3"):
        require(tool)
    proc = run_cli("run", str(_scenario(tmp_path)), "-o", str(tmp_path / "runs"), "--progress", "plain",
                   timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio = results[(results.tool == "fio") & (results.metric == "io_bytes")].set_index("workload")
    backend = results[(results.tool == "backend") & (results.window == "tool") & (results.metric == "io_bytes")]

    def served(workload: str, op: str) -> float:
        return float(backend[(backend.workload == workload) & (backend.operation == op)].value.sum())

    # a read from the store: the backend's bytes within MARGIN of fio's, no flag
    assert fio.loc["read-store", "validity"] == "ok", fio.loc["read-store", "validity_detail"]
    assert abs(served("read-store", "read") - fio.loc["read-store", "value"]) <= MARGIN * fio.loc["read-store", "value"]
    assert "backend served 100 % of the 16 MiB fio read" in fio.loc["read-store", "validity_detail"]
    # the same file re-read for 2 s: the client's copy, flagged with what the backend served
    assert fio.loc["read-cached", "value"] > 4 * SIZE
    assert fio.loc["read-cached", "validity"] == "flagged"
    assert fio.loc["read-cached", "validity_detail"].startswith("read served from cache: backend served")
    assert served("read-cached", "read") < 0.5 * fio.loc["read-cached", "value"]
    # s3fs uploads at close, after fio's timing: flagged with the durable bandwidth beside fio's
    assert served("write", "write") >= SIZE  # the store did get the file, within the tool's run
    assert fio.loc["write", "validity"] == "flagged", fio.loc["write", "validity_detail"]
    assert "write not durable in the timed window" in fio.loc["write", "validity_detail"]
    assert "durable bandwidth at most" in fio.loc["write", "validity_detail"]
    # end_fsync: fio's timing includes the upload, so its figure holds
    assert fio.loc["write-fsync", "validity"] == "ok", fio.loc["write-fsync", "validity_detail"]
    durable = results[(results.tool == "backend") & (results.window == "durable") & (results.workload == "write")]
    assert len(durable) == 1 and durable.unit.iloc[0] == "s" and durable.value.iloc[0] > 0
    # the snapshots are kept as raw evidence
    assert (run / "raw" / "s3fs__write__r1" / "local" / "backend-s3.start.json").exists()

    html = (run / "report.html").read_text()
    assert 'id="validity"' in html and "4\n    measurements checked, 2 flagged" in html
    assert 'class="flag"' in html and "read served from cache: backend served" in html
    left = subprocess.run(["findmnt", "-rn", str(tmp_path / "mnt")], capture_output=True, text=True).stdout
    assert left == ""
