"""fsbench touches only what it made: a mount the user made (a real tmpfs with a file in it), a JuiceFS
volume that exists (real Redis, real juicefs), a link planted where its scratch folder would go.

Needs root (tmpfs and FUSE mounts), as the other real-mount tests do."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO


def mounted(path: Path) -> str:
    """findmnt's line for the mount at path, "" when none."""
    r = subprocess.run(["findmnt", "-n", "-r", "-o", "ID,FSTYPE,SOURCE", "--mountpoint", str(path)],
                       capture_output=True, text=True)
    return r.stdout.strip()


@contextmanager
def tmpfs(path: Path, source: str) -> Iterator[Path]:
    """A real tmpfs mounted at path with a file in it; unmounted afterwards (whatever fsbench did)."""
    assert os.geteuid() == 0, "mounting a tmpfs needs root"
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", source, str(path)], check=True)
    (path / "keep.txt").write_text("the user's data\n")
    try:
        yield path
    finally:
        while mounted(path):
            subprocess.run(["umount", "-l", str(path)], check=False)


def cases(proc: subprocess.CompletedProcess) -> pd.DataFrame:
    assert proc.stdout.strip(), proc.stderr[-3000:]
    return pd.read_csv(Path(proc.stdout.splitlines()[0]) / "cases.csv", keep_default_na=False)


def fuse_scenario(folder: Path, path: Path, section: str, name: str) -> Path:
    return write_scenario(folder, f"""\
        name: {name}
        monitor: {{enabled: false}}
        targets:
          t:
            kind: fuse
            path: {path}
            client_process: sleep
            ready_timeout: 2s
            {section}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """, f"{name}.yaml")


@pytest.mark.parametrize("mount", ["false", "true"], ids=["mount-fails", "mount-exits-0-without-mounting"])
def test_a_fuse_target_on_a_users_mount_is_refused_and_the_mount_and_its_file_survive(tmp_path, fio, mount):
    require("findmnt")
    with tmpfs(tmp_path / "mnt", "users-tmpfs") as mnt:
        before = mounted(mnt)
        scenario = fuse_scenario(tmp_path, mnt, f'fuse: {{mount: "{mount}"}}', "users-mount")
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
        assert proc.returncode == 1, proc.stderr[-3000:]
        assert mounted(mnt) == before  # the very same mount, still there
        assert (mnt / "keep.txt").read_text() == "the user's data\n"
        assert sorted(p.name for p in mnt.iterdir()) == ["keep.txt"]
        row = cases(proc).iloc[0]
        assert row.status == "failed"
        assert f"{mnt} on local is already a mount point" in row.reason and "existing_mount: true" in row.reason


def test_existing_mount_true_benchmarks_the_users_mount_and_leaves_it_mounted(tmp_path, fio):
    require("findmnt")
    with tmpfs(tmp_path / "mnt", "users-tmpfs") as mnt:
        before = mounted(mnt)
        scenario = fuse_scenario(tmp_path, mnt, "existing_mount: true", "existing-mount")
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert list(cases(proc).status) == ["ok"]
        assert mounted(mnt) == before and (mnt / "keep.txt").read_text() == "the user's data\n"
        assert sorted(p.name for p in mnt.iterdir()) == ["keep.txt"]  # fsbench's folder removed, nothing else
    # on a folder that is no mount point, existing_mount refuses rather than write beside the mount
    (tmp_path / "plain").mkdir()
    scenario = fuse_scenario(tmp_path, tmp_path / "plain", "existing_mount: true", "not-mounted")
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 1
    assert "`existing_mount: true` but" in cases(proc).reason[0] and "is not a mount point" in cases(proc).reason[0]


def test_after_a_crash_the_leftovers_never_unmount_a_mount_fsbench_did_not_make(tmp_path, fio):
    """fsbench mounts a tmpfs of its own and is killed; the user then mounts theirs at that path: the next
    run's clean-up of the dead run finds another mount there and leaves it."""
    require("findmnt")
    path = tmp_path / "fmnt"
    scenario = fuse_scenario(tmp_path, path, 'fuse: {mount: "mount -t tmpfs -o size=64m fsbench-own ${target.path}"}',
                             "killed")
    scenario.write_text(scenario.read_text().replace("size: 1m}", "size: 1m, time_based: true, runtime: 60}"))
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--no-report"], env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "out").glob("*/raw/t__w__r1/local/command")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.05)
    assert "fsbench-own" in mounted(path)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    run = next((tmp_path / "out").iterdir()).name
    subprocess.run(["umount", "-l", str(path)], check=True)  # the user unmounts it, and mounts their own
    with tmpfs(path, "users-tmpfs") as mnt:
        before = mounted(mnt)
        (tmp_path / "plain").mkdir()
        plain = write_scenario(tmp_path, f"""\
            name: next
            monitor: {{enabled: false}}
            targets: {{t: {{path: {tmp_path}/plain}}}}
            workloads:
              w: {{tool: fio, options: {{rw: write, size: 1m}}}}
            """, "next.yaml")
        again = run_cli("run", str(plain), "-o", str(tmp_path / "out2"), "--no-report")
        assert again.returncode == 0, again.stderr[-3000:]
        assert f"cleaned up after the dead run {run}: target t on local" in again.stderr, again.stderr[-3000:]
        assert mounted(mnt) == before and (mnt / "keep.txt").read_text() == "the user's data\n"
    path.rmdir()


# -- JuiceFS: a volume that exists -------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def redis(folder: Path) -> Iterator[int]:
    """A real redis-server on a free port, stopped afterwards."""
    port = free_port()
    folder.mkdir()
    server = subprocess.Popen([require("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", str(folder)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True).stdout.strip() \
                != "PONG":
            assert time.monotonic() < deadline and server.poll() is None, "redis-server did not start"
            time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def settings(meta: str) -> dict:
    out = subprocess.run(["juicefs", "status", meta], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["Setting"]


def read_back(meta: str, mnt: Path) -> str:
    """The user's file, read through a mount of the volume made by the test."""
    subprocess.run(["juicefs", "mount", "-d", "--no-usage-report", meta, str(mnt)], check=True, capture_output=True)
    try:
        return (mnt / "keep.txt").read_text()
    finally:
        subprocess.run(["juicefs", "umount", str(mnt)], check=True, capture_output=True)


def test_a_juicefs_meta_url_holding_a_volume_is_never_formatted_again(tmp_path, fio):
    for tool in ("redis-server", "redis-cli", "juicefs", "findmnt"):
        require(tool)
    with redis(tmp_path / "redis") as port:
        meta = f"redis://127.0.0.1:{port}/1"
        bucket = f"{tmp_path}/userbucket/"
        # named as fsbench would name the target's volume: juicefs itself then accepts a second format
        subprocess.run(["juicefs", "format", "--storage", "file", "--bucket", bucket, "--trash-days", "3", meta,
                        "jfs"], check=True, capture_output=True)
        mnt = tmp_path / "usermnt"
        subprocess.run(["juicefs", "mount", "-d", "--no-usage-report", meta, str(mnt)], check=True,
                       capture_output=True)
        (mnt / "keep.txt").write_text("the user's data\n")
        subprocess.run(["juicefs", "umount", str(mnt)], check=True, capture_output=True)
        original = settings(meta)
        target = f"""\
            name: NAME
            monitor: {{enabled: false}}
            targets:
              jfs:
                kind: juicefs
                path: {tmp_path}/jmnt
                juicefs: {{meta: "{meta}"EXTRA}}
            workloads:
              w: {{tool: fio, options: {{rw: write, size: 1m}}}}
            """
        refused = write_scenario(tmp_path, target.replace("NAME", "formatted").replace("EXTRA", ""), "a.yaml")
        proc = run_cli("run", str(refused), "-o", str(tmp_path / "out"), "--no-report")
        now = settings(meta)
        assert (now["Bucket"], now["TrashDays"], now["UUID"]) == (bucket, 3, original["UUID"])
        assert read_back(meta, mnt) == "the user's data\n"
        assert proc.returncode == 1, proc.stderr[-3000:]
        reason = cases(proc).reason[0]
        assert f"{meta} holds a JuiceFS volume already" in reason and "existing: true" in reason, reason
        # `existing: true`: the volume is mounted as it is, benchmarked, unmounted; its settings unchanged
        used = write_scenario(tmp_path, target.replace("NAME", "used").replace("EXTRA", ", existing: true"), "b.yaml")
        proc = run_cli("run", str(used), "-o", str(tmp_path / "out"), "--no-report")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert list(cases(proc).status) == ["ok"]
        assert settings(meta) == original
        assert not mounted(tmp_path / "jmnt") and not (tmp_path / "jmnt").exists()
        assert read_back(meta, mnt) == "the user's data\n"


# -- a link planted where fsbench's scratch folder would go ---------------------------------------------------

def test_a_link_planted_at_the_scratch_folders_name_is_never_followed(tmp_path, fio):
    """Run ids are the scenario's name plus the start second: links planted for the next seconds' ids."""
    import datetime as dt

    target, victim = tmp_path / "t", tmp_path / "victim"
    target.mkdir()
    (victim / "t__w__r1").mkdir(parents=True)
    (victim / "t__w__r1" / "precious.txt").write_text("not fsbench's\n")
    now = dt.datetime.now(dt.UTC)
    for second in range(-2, 60):
        stamp = (now + dt.timedelta(seconds=second)).strftime("%Y%m%dT%H%M%S")
        (target / f"fsbench-planted-{stamp}").symlink_to(victim)
    scenario = write_scenario(tmp_path, f"""\
        name: planted
        monitor: {{enabled: false}}
        targets: {{t: {{path: {target}}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in victim.rglob("*")) == ["precious.txt", "t__w__r1"]  # nothing written, nothing gone
    assert (victim / "t__w__r1" / "precious.txt").read_text() == "not fsbench's\n"
    assert all(p.is_symlink() for p in target.iterdir())  # fsbench's own folder removed, the links left
