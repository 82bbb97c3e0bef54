"""Fixtures of the end-to-end tests: a real sshd on 127.0.0.2-5 (tests/sshlab.py)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import require
from tests.sshlab import sshlab


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


#: modules that must not run at the same time as each other under pytest-xdist (tox runs the suite on
#: several workers): none today; a module is otherwise one group, so its module-scoped servers start once
SHARED_GROUPS: dict[str, str] = {}


def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e is end-to-end: `pytest -m "not e2e"` (tox -e fast) leaves them all out.
    Each module is one xdist group (`--dist loadgroup`): its tests run on one worker, in order, sharing the
    servers its module fixtures start; modules run beside each other on the other workers."""
    here = Path(__file__).parent
    for item in items:
        path = Path(str(item.fspath))
        if here in path.parents:
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.xdist_group(SHARED_GROUPS.get(path.stem, path.stem)))
