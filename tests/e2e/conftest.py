"""Fixtures of the end-to-end tests: a real sshd on 127.0.0.2-5 (tests/sshlab.py), and the heavy labs the
modules share (tests/e2e/labs.py: one Ceph lab, one HDFS with an S3 server)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import require
from tests.e2e.labs import HadoopLab, SharedLabs
from tests.sshlab import sshlab

SHARED_LABS = SharedLabs()


def pytest_configure(config):
    """The shared labs' hooks: their modules run together, and each lab stops after its last user."""
    config.pluginmanager.register(SHARED_LABS, "fsbench-shared-labs")


@pytest.fixture
def ceph_lab() -> str:
    """The session's Ceph lab (seed 004's smoke cluster), started on first use: its conf path."""
    return SHARED_LABS.get("ceph_lab")


@pytest.fixture
def hadoop_lab() -> HadoopLab:
    """The session's single-node HDFS and S3 server, started on first use."""
    return SHARED_LABS.get("hadoop_lab")


@pytest.fixture
def lab(tmp_path):
    """A running sshd; afterwards nothing started over ssh may remain, and sshd itself is gone."""
    require("/usr/sbin/sshd")
    with sshlab(tmp_path / "lab") as running:
        yield running
        # fsbench itself, not the lab's clean-up, must have ended whatever the test's commands started
        deadline = time.monotonic() + 15
        while running.session_pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120]
                for pid in running.session_pids()}
        assert not left, f"processes started over ssh outlived the test: {left}"
    assert not running.running() and not running.sshd_pids(), "sshd still running"


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs for the run directory."""
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "fsbench-small", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e is end-to-end: `pytest -m "not e2e"` (tox -e fast) leaves them all out.
    (How they spread over xdist workers: tests/xdist_groups.py.)"""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
