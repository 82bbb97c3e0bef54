"""Damaged run directories, read by the real `fsbench report` and `fsbench compare`; an interrupted run's
resume hint and its comparison (docs/safety.md, What fsbench reads).

One real run is made once and copied for each damage: a 400k-deep manifest.json once gave a RecursionError
traceback, a link to /dev/zero a MemoryError, and a named pipe blocked both commands for ever.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from fsbench.compare import compare, load_run
from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO

pytestmark = pytest.mark.e2e

#: a command that takes longer has hung: the test fails instead of blocking the suite
HANG_S = 30

SCENARIO = """\
name: damage
monitor: {{enabled: false}}
targets:
  t: {{path: "{root}"}}
workloads:
  a: {{tool: fio, options: {{rw: write, bs: 64k, size: 1m}}}}
  b: {{tool: fio, options: {{rw: read, bs: 64k, size: 1m}}}}
  c: {{tool: fio, options: {{rw: randread, bs: 64k, size: 1m}}}}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> dict[str, Path]:
    """The scenario (in a folder whose name has a space and a quote) and one complete real run of it."""
    require("fio")
    tmp = tmp_path_factory.mktemp("damaged")
    (tmp / "target").mkdir()
    (tmp / "my scenarios").mkdir()
    scenario = write_scenario(tmp / "my scenarios", SCENARIO.format(root=tmp / "target"), "it's.yaml")
    proc = run_cli("run", str(scenario), "-o", str(tmp / "out"), "--no-report", "--progress", "none", check=True)
    return {"tmp": tmp, "scenario": scenario, "run": Path(proc.stdout.splitlines()[0])}


def _deep_manifest(run: Path) -> Path:
    (run / "manifest.json").write_text("[" * 400_000 + "]" * 400_000)
    return run / "manifest.json"


def _link_to_zero(name: str) -> Callable[[Path], Path]:
    def damage(run: Path) -> Path:
        (run / "results.parquet").unlink()  # so that results.csv is the table read
        (run / name).unlink()
        (run / name).symlink_to("/dev/zero")
        return run / name
    return damage


def _fifo(name: str) -> Callable[[Path], Path]:
    def damage(run: Path) -> Path:
        (run / "results.parquet").unlink()
        (run / name).unlink()
        os.mkfifo(run / name)
        return run / name
    return damage


DAMAGES = {
    "deep-manifest": (_deep_manifest, "nested"),
    "cases-dev-zero": (_link_to_zero("cases.csv"), "a link to /dev/zero, a character device, not a plain file"),
    "results-dev-zero": (_link_to_zero("results.csv"), "a link to /dev/zero, a character device, not a plain file"),
    "results-fifo": (_fifo("results.csv"), "a named pipe (FIFO), not a plain file"),
    "placement-fifo": (_fifo("placement.csv"), "a named pipe (FIFO), not a plain file"),
}


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fsbench", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_file_ends_report_and_compare_with_its_name_never_a_traceback_or_a_hang(lab, damage, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(lab["run"], run, symlinks=True)
    make, words = DAMAGES[damage]
    damaged = make(run)
    # both at once: two of the machine's cores, and a hang costs HANG_S once
    procs = {"report": _cli("report", str(run), "-o", str(tmp_path / "report.html")),
             "compare": _cli("compare", str(lab["run"]), str(run))}
    deadline = time.monotonic() + HANG_S
    for name, proc in procs.items():
        try:
            _, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for p in procs.values():
                p.kill()
                p.communicate()
            pytest.fail(f"fsbench {name} still reading {damaged.name} after {HANG_S}s: it hangs")
        assert proc.returncode == 2 and "Traceback" not in err, f"{name}: exit {proc.returncode}\n{err[-3000:]}"
        assert f"error: {damaged}: " in err and words in err, f"{name}: {err}"


# -- an interrupted run ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def interrupted(lab) -> dict[str, object]:
    """A real run stopped by Ctrl-C during case b (a fio that waits there): a ok, b interrupted, c pending.

    Its output folder has a space and a quote in its name; returns the run, the CLI's stderr and a copy of
    the run as it was (the resume test completes the original).
    """
    tmp: Path = lab["tmp"]  # type: ignore[assignment]
    bindir = tmp / "bin"
    bindir.mkdir()
    started = tmp / "b-started"
    (bindir / "fio").write_text(  # case b's fio signals that it started, then waits to be stopped
        f'#!/bin/sh\ncase "$PWD" in */t__b__r1/*) touch {shlex.quote(str(started))}; exec sleep 60;; esac\n'
        f'exec {shlex.quote(require("fio"))} "$@"\n')
    (bindir / "fio").chmod(0o755)
    out = tmp / "out dir" / "it's"
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(lab["scenario"]), "-o", str(out),
                             "--no-report", "--progress", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO),
                                            "PATH": f"{bindir}:{os.environ['PATH']}"})
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert started.exists() and proc.returncode == 130, stderr
    run = Path(stdout.splitlines()[0])
    copy = tmp / "interrupted-copy"
    shutil.copytree(run, copy, symlinks=True)
    return {"run": run, "stderr": stderr, "copy": copy}


def test_the_resume_hint_pastes_into_a_shell_as_it_is(lab, interrupted):
    run, stderr = interrupted["run"], str(interrupted["stderr"])
    hint = next(line for line in stderr.splitlines() if "resume with" in line).split("resume with", 1)[1]
    assert shlex.split(hint) == ["fsbench", "run", str(lab["scenario"]), "--resume", str(run)], stderr
    # pasted into a shell as printed (`fsbench` being this checkout; no report, to be quick): the run completes
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(["sh", "-c", f'fsbench() {{ "$0" -m fsbench "$@"; }}\n{hint} --no-report', sys.executable],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.splitlines()[0]) == run


def test_compare_counts_cases_a_run_never_ran_as_not_run_never_as_failed(lab, interrupted):
    reference, stopped = lab["run"], interrupted["copy"]
    proc = run_cli("compare", str(reference), str(stopped), "--fail-on", "failed", "-o", str(stopped / "c.md"),
                   timeout=HANG_S * 2)
    assert proc.returncode == 0 and "failed" not in proc.stderr, proc.stderr
    for ref, other, side in ((reference, stopped, "this run"), (stopped, reference, "the reference")):
        frame = compare(load_run(ref), [load_run(other)]).frame  # the verdicts alone, without the conclusions
        verdicts = frame.groupby("workload")["verdict"].agg(set).to_dict()
        assert verdicts["a"] <= {"same", "better", "worse"}, verdicts  # ran in both: judged by its numbers
        for workload, status in (("b", "interrupted"), ("c", "pending")):
            assert verdicts[workload] == {"not comparable"}, verdicts
            details = set(frame.loc[frame["workload"] == workload, "detail"])
            assert all(f"not run in {side}" in d and status in d for d in details), details
