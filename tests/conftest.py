"""Shared fixtures: real tools are required, never skipped (CI counts a skip as a failure)."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tests.paths import REPO

# runs started by the tests index themselves (for recovery after a kill) apart from the machine's own, and
# apart from each other's: every test gets its own index under this process's folder (an xdist worker is a
# process of its own), so a run that a test kills is recovered by that test's next run, never by a test beside
# it on another worker, and a dead run one test leaves is no warning in another's output
_STATE_ROOT = Path(tempfile.mkdtemp(prefix="fsbench-test-state-"))
atexit.register(shutil.rmtree, _STATE_ROOT, ignore_errors=True)  # one per process, not kept
_STATE_TESTS = itertools.count()
# what runs outside a test's own (module and session fixtures, set up before it) use: this process's, never
# the machine's /var/tmp/fsbench-runs-<uid> nor another worker's (a worker inherits the controller's environment)
os.environ["FSBENCH_STATE_DIR"] = str(_STATE_ROOT / "fixtures")


@pytest.fixture(autouse=True)
def _own_state_dir(monkeypatch):
    """This test's own index of running runs (FSBENCH_STATE_DIR), made by fsbench on first use."""
    monkeypatch.setenv("FSBENCH_STATE_DIR", str(_STATE_ROOT / f"t{next(_STATE_TESTS)}"))


def require(binary: str) -> str:
    """The path of a real tool the test needs; fails (not skips) when it is missing."""
    path = shutil.which(binary)
    assert path, f"{binary} is not installed: run ./install.sh (the README's first command) first"
    return path


def require_s3_server() -> str:
    """The S3 server the `s3` service kind will start: fsbench-s3 (install.sh builds it where Go >= 1.24 is
    there), else moto_server (installed with fsbench); fails (not skips) when neither is installed."""
    path = shutil.which("fsbench-s3") or shutil.which("moto_server")
    assert path, "neither fsbench-s3 nor moto_server is installed: run the README's install command first"
    return path


@pytest.fixture
def fio() -> str:
    return require("fio")


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300,
            check: bool = False) -> subprocess.CompletedProcess:
    """Run `fsbench ARGS` in a subprocess, as a user would."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "fsbench", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def run_quietly(tmp: Path, scenario: Path, env: dict | None = None) -> Path:
    """`fsbench run` into tmp/out without a report or progress, which must succeed; its run directory."""
    proc = run_cli("run", str(scenario), "-o", str(tmp / "out"), "--no-report", "--progress", "none", env=env,
                   check=True)
    return Path(proc.stdout.splitlines()[0])


def assert_drop_proof(proof: dict) -> None:
    """A case's drop_caches.json: the drop ran and succeeded, with the host's page-cache and dentry figures
    read in the same shell before and after it.

    Not `after < before`: the figures are the whole machine's, and beside this test two other workers write,
    read and map files (a JVM's jars, a Ceph OSD's tmpfs) between the two readings, so the machine's cache can
    grow across a drop that worked (seen once: 454 MB before, 462 MB after). That the drop empties the page
    cache is shown on a file of the test's own: tests/e2e/test_deploy_and_caches.py's
    test_drop_caches_empties_the_page_cache (fincore)."""
    assert proof["ok"] and not proof["error"], proof
    assert proof["command"].startswith("sync && echo ") and proof["command"].endswith(" > /proc/sys/vm/drop_caches")
    for figure in ("cached_before_bytes", "cached_after_bytes", "dentries_before", "dentries_after"):
        assert isinstance(proof[figure], int) and proof[figure] > 0, (figure, proof)


def write_scenario(folder: Path, text: str, name: str = "scenario.yaml") -> Path:
    """Write a dedented scenario file."""
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def pytest_xdist_make_scheduler(config, log):
    """On xdist workers (tox: `-n 3`), tests go out in the units and order of tests/xdist_groups.py."""
    from tests.xdist_groups import UnitScheduling

    return UnitScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """On an xdist worker, the heaviest units first (every worker orders alike: xdist checks it)."""
    if hasattr(config, "workerinput"):
        from tests.xdist_groups import heaviest_first

        order = {nodeid: i for i, nodeid in enumerate(heaviest_first([item.nodeid for item in items]))}
        items.sort(key=lambda item: order[item.nodeid])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With FSBENCH_TEST_TIMELINE=FILE, each test's worker, unit, start and end (setup to teardown) are appended to
    FILE, for `python bench/suite_timeline.py FILE`: how the units packed onto the workers."""
    timeline = os.environ.get("FSBENCH_TEST_TIMELINE")
    start = time.time()
    yield
    if timeline:
        from tests.xdist_groups import unit_of

        with open(timeline, "a") as fh:
            fh.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}\t{unit_of(item.nodeid)}\t{item.nodeid}\t"
                     f"{start:.3f}\t{time.time():.3f}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A skipped test is a failure, in CI and here alike: a test that needs a tool must find it installed."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped, which counts as a failure: {report.longrepr}"
