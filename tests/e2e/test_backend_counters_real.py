"""Issue 21 for JuiceFS and Ceph, for real: the target kind's own backend counters beside fio's bytes.

JuiceFS: a real mount on a real Redis with file storage; fsbench reads the mount's `.stats` before and
after fio. A write with end_fsync shows backend PUT bytes close to fio's and no flag; the same small file
re-read for 2 s comes from JuiceFS's caches and is flagged 'read served from cache'. `juicefs stats` beside a
512 MiB write gives a mean over fio's run, not over the idle seconds around it.

Ceph: the session's lab cluster (tests/e2e/labs.py), joined by its conf as a user's own cluster would
be; fsbench reads the OSDs' perf counters before and after fio. ext4 on RBD: a write with end_fsync
reached the pool and passes, one without stayed in the page cache (the file is gone before it was
written back) and is flagged, and so is mdtest, whose file creations never reached the pool while it ran
(its ops/s are the client's memory); CephFS through ceph-fuse: a re-read of a small file comes from the
client's cache and is flagged.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from tests.conftest import require, run_cli, write_scenario
from tests.e2e.test_ceph import _images, _nothing_left

SIZE = 16 * 2**20
#: JuiceFS writes each 4 MiB block once; a little more for its own chunk bookkeeping at most
MARGIN = 0.10


def _jfs_scenario(tmp_path: Path) -> Path:
    return write_scenario(tmp_path, f"""\
        name: jfs-backend
        monitor: {{enabled: false}}
        services:
          redis: {{kind: redis, redis: {{appendonly: false}}}}
        targets:
          jfs:
            kind: juicefs
            path: {tmp_path / "jfs"}
            services: [redis]
            juicefs: {{meta: "${{services.redis.url}}/1", storage: file}}
        collectors:
          stats: {{kind: juicefs-stats, targets: [jfs], workloads: [big-write], interval: 1s}}
        workloads:
          big-write:
            tool: fio
            options: {{rw: write, bs: 1m, size: 512m, end_fsync: 1}}
          write-fsync:
            tool: fio
            options: {{rw: write, bs: 1m, size: 16m, end_fsync: 1}}
            dataset: a
          read-cached:
            tool: fio
            options: {{rw: read, bs: 1m, size: 16m, direct: 1, time_based: 1, runtime: 2}}
            dataset: a
        """)


def test_juicefs_backend_bytes_match_a_durable_write_and_flag_a_cached_read(tmp_path):
    for tool in ("fio", "juicefs", "redis-server", "redis-cli", "fusermount3"):
        require(tool)
    proc = run_cli("run", str(_jfs_scenario(tmp_path)), "-o", str(tmp_path / "runs"), "--no-report", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio = results[(results.tool == "fio") & (results.metric == "io_bytes")].set_index("workload")
    backend = results[(results.tool == "backend") & (results.metric == "io_bytes")]

    def served(workload: str, op: str, window: str = "tool") -> float:
        return float(backend[(backend.workload == workload) & (backend.operation == op)
                             & (backend.window == window)].value.sum())

    # the write with end_fsync: JuiceFS had uploaded what fio wrote when fio ended; no flag
    assert fio.loc["write-fsync", "value"] == SIZE
    assert abs(served("write-fsync", "write") - SIZE) <= MARGIN * SIZE, served("write-fsync", "write")
    assert served("write-fsync", "put_object") == served("write-fsync", "write")  # JuiceFS's PUT, by its S3 name
    assert fio.loc["write-fsync", "validity"] == "ok", fio.loc["write-fsync", "validity_detail"]
    assert "the backend had 100 % of the 16 MiB fio wrote" in fio.loc["write-fsync", "validity_detail"]
    # the same 16 MiB re-read for 2 s: JuiceFS's cache, not the store, served it, and fsbench says so
    assert fio.loc["read-cached", "value"] > 4 * SIZE
    assert served("read-cached", "read") < 0.5 * fio.loc["read-cached", "value"]
    assert fio.loc["read-cached", "validity"] == "flagged"
    assert fio.loc["read-cached", "validity_detail"].startswith("read served from cache: backend served")
    rows = backend[backend.workload == "read-cached"]
    assert set(rows.job) == {"jfs"} and set(rows.unit) == {"B"} and set(rows.window) == {"tool", "after"}
    # juicefs stats' mean covers fio's run: its lines are timed as they arrive (they all showed at the end
    # before, so no sample fell in the run and the mean averaged the idle seconds around it)
    stats = results[(results.tool == "juicefs-stats") & (results.workload == "big-write")
                    & (results.operation == "fuse_write") & (results.stat == "mean")]
    said = str(stats["warnings"].iloc[0]) if "warnings" in stats else ""  # the column exists once a row warns
    assert len(stats) == 1 and "idle ones included" not in said, said
    fio_bw = results[(results.tool == "fio") & (results.workload == "big-write") & (results.metric == "bandwidth")]
    assert stats.value.iloc[0] >= 0.6 * fio_bw.value.iloc[0], (stats.value.iloc[0], fio_bw.value.iloc[0])
    # the snapshots of the mount's metrics are kept as evidence, and the mount is gone
    end = run / "raw" / "jfs__write-fsync__r1" / "local" / "backend-jfs.end.txt"
    assert "juicefs_object_request_data_bytes_PUT " in end.read_text()
    left = subprocess.run(["findmnt", "-rn", str(tmp_path / "jfs")], capture_output=True, text=True).stdout
    assert left == ""


def _ceph_scenario(tmp_path: Path, scratch: Path, conf: str) -> Path:
    return write_scenario(tmp_path, f"""\
        name: cb
        settings: {{scratch: {scratch}}}
        monitor: {{enabled: false}}
        targets:
          rbd:
            kind: rbd
            path: {tmp_path / "rbd"}
            rbd: {{pool: rbd-ssd, size: 256m, conf: {conf}}}
          cephfs:
            kind: cephfs
            path: {tmp_path / "cephfs"}
            cephfs: {{fs: cephfs-hdd, conf: {conf}}}
        workloads:
          md: {{tool: mdtest, targets: [rbd], options: {{n: 50, u: true, z: 1, i: 1, tasks: 1}}}}
          write-fsync: {{tool: fio, targets: [rbd], options: {{rw: write, bs: 1m, size: 16m, end_fsync: 1}}}}
          write-cached: {{tool: fio, targets: [rbd], options: {{rw: write, bs: 1m, size: 16m}}}}
          write: {{tool: fio, targets: [cephfs], options: {{rw: write, bs: 1m, size: 16m, end_fsync: 1}}, dataset: a}}
          read-cached:
            tool: fio
            targets: [cephfs]
            options: {{rw: read, bs: 1m, size: 16m, time_based: 1, runtime: 2}}
            dataset: a
        """)


def test_ceph_osd_counters_pass_a_durable_write_and_flag_page_cache_writes_and_client_cache_reads(ceph_lab, tmp_path):
    conf, scratch = ceph_lab, tmp_path / "scratch"
    proc = run_cli("run", str(_ceph_scenario(tmp_path, scratch, conf)), "-o", str(tmp_path / "runs"), "--no-report",
                   timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    results = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio = results[(results.tool == "fio") & (results.metric == "io_bytes")].set_index("workload")
    backend = results[(results.tool == "backend") & (results.metric == "io_bytes") & (results.window == "tool")]

    def served(workload: str, op: str) -> float:
        return float(backend[(backend.workload == workload) & (backend.operation == op)].value.sum())

    # ext4 on RBD with end_fsync: the pool's OSD took fio's 16 MiB (and some of ext4's own) while fio ran
    assert SIZE <= served("write-fsync", "write") <= (1 + MARGIN) * SIZE, served("write-fsync", "write")
    assert served("write-fsync", "rados_write") == served("write-fsync", "write")
    assert fio.loc["write-fsync", "validity"] == "ok", fio.loc["write-fsync", "validity_detail"]
    # without it, the 16 MiB stayed in the client's page cache: the store had none of it when fio ended
    assert served("write-cached", "write") < 0.5 * SIZE
    assert fio.loc["write-cached", "validity"] == "flagged"
    assert "write not durable in the timed window: the backend had" in fio.loc["write-cached", "validity_detail"]
    # mdtest on ext4 on RBD: creations and removals that never reached the pool while it ran, flagged
    md = results[(results.tool == "mdtest") & (results.operation == "file_creation") & (results.stat == "mean")]
    assert len(md) == 1 and md.validity.iloc[0] == "flagged", md.validity_detail.iloc[0]
    assert md.validity_detail.iloc[0].startswith("metadata changes not in the store: the image's pool took 0 B")
    assert served("md", "write") == 0
    stat = results[(results.tool == "mdtest") & (results.operation == "file_stat")]
    assert set(stat.validity) == {""}  # a stat changes nothing: not judged
    # ceph-fuse re-reading its 16 MiB for 2 s: its own cache, not the OSDs
    assert fio.loc["read-cached", "value"] > 4 * SIZE
    assert served("read-cached", "read") < 0.5 * fio.loc["read-cached", "value"]
    assert fio.loc["read-cached", "validity"] == "flagged"
    assert fio.loc["read-cached", "validity_detail"].startswith("read served from cache: backend served")
    # the OSDs each target's pools live on (rbd-ssd: the ssd OSD; cephfs-hdd: the hdd one), as evidence
    scope = (run / "raw" / "cephfs__read-cached__r1" / "local" / "backend-cephfs.scope.txt").read_text()
    assert '"data_pools":["cephfs-hdd-data"]' in scope
    perf = (run / "raw" / "rbd__write-fsync__r1" / "local" / "backend-rbd.end.txt").read_text()
    assert "osd.0:" in perf and "op_w_in_bytes" in perf
    _nothing_left(str(scratch), (str(tmp_path / "rbd"), str(tmp_path / "cephfs")), run.name)
    assert _images(conf, "rbd-ssd") == []  # the run's image removed from the shared cluster
