"""Faults at run time: planted recovery files, crashing plug-ins, disks that fill or break outside a case,
a second Ctrl-C anywhere, a SIGKILL over SSH. Each one ends as data (a failed case, a marked manifest, an
exit code), never as a traceback with the manifest left at `running`.

Faults that no real tool can be made to raise on cue are injected into a real `fsbench run` in a
subprocess: a few lines of Python patch one library function, then call the command line as usual.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_cli, write_scenario
from tests.paths import REPO

STRANGER = 65534  # nobody


def fsbench(*args: str, patch: str = "", env: dict | None = None, timeout: float = 300,
            popen: bool = False) -> subprocess.CompletedProcess | subprocess.Popen:
    """`fsbench ARGS` in a subprocess, after running `patch` (Python) in it."""
    code = textwrap.dedent(patch) + "\nfrom fsbench.cli import main\nmain()\n"
    argv = [sys.executable, "-c", code, *args]
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    if popen:
        return subprocess.Popen(argv, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(argv, env=full_env, capture_output=True, text=True, timeout=timeout)


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def wait_for(proc: subprocess.Popen, path_glob: tuple[Path, str] | Path, limit_s: float = 60) -> None:
    """Until a file appears (a glob: (folder, pattern)); fails with fsbench's output if it ended first."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if isinstance(path_glob, Path) and path_glob.exists():
            return
        if isinstance(path_glob, tuple) and list(path_glob[0].glob(path_glob[1])):
            return
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
    out, err = proc.communicate(timeout=30)
    raise AssertionError(f"{path_glob} never appeared; fsbench exit {proc.returncode}:\n{out}\n{err[-3000:]}")


def quick(tmp_path: Path, name: str, extra: str = "") -> Path:
    return write_scenario(tmp_path, f"""\
        name: {name}
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        {extra}""", f"{name}.yaml")


# -- recovery reads only this user's own files (D0) --------------------------------------------------------

def test_a_planted_run_index_entry_never_runs_its_commands(tmp_path, fio):
    state, fake = tmp_path / "state", tmp_path / "fake-run"
    state.mkdir(mode=0o700)
    fake.mkdir()
    pwned = tmp_path / "PWNED_BY_RECOVER"
    (fake / "leftovers.json").write_text(json.dumps([{"id": "abc", "host": "local", "what": "scratch folders",
                                                      "commands": [["touch", str(pwned)]]}]))
    entry = state / "planted.json"
    entry.write_text(json.dumps({"run_dir": str(fake)}))
    os.chown(entry, STRANGER, STRANGER)  # written by another user into a folder they could write to
    proc = run_cli("run", str(quick(tmp_path, "planted")), "-o", str(tmp_path / "out"), "--no-report",
                   "--progress", "plain", env={"FSBENCH_STATE_DIR": str(state)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"ignoring the run index entry {entry}" in proc.stderr and "uid 65534" in proc.stderr
    assert not pwned.exists() and "cleaned up after the dead run" not in proc.stderr

    state.chmod(0o777)  # now anyone could plant one: the folder itself is refused, before anything runs
    refused = run_cli("run", str(quick(tmp_path, "planted")), "-o", str(tmp_path / "out2"),
                      env={"FSBENCH_STATE_DIR": str(state)})
    assert refused.returncode == 4 and str(state) in refused.stderr, refused.stderr[-2000:]
    assert "writable by its group or by others" in refused.stderr and "FSBENCH_STATE_DIR" in refused.stderr
    assert not pwned.exists() and not (tmp_path / "out2").exists()


# -- an unexpected error fails its case only (D8) ------------------------------------------------------------

CRASHY = '''\
"""A third-party tool whose build breaks on one option, as a plug-in's bug would."""

import re
from pathlib import Path

from fsbench.core.tidy import ParseResult, measurement
from fsbench.api.tools import Invocation


class CrashyTool:
    name = "crashy"
    bring_your_own = False
    accepts = ("directory",)
    metrics = {}
    operations = ("write",)
    primary_metrics = ("io_bytes",)
    packages = {}

    def check_options(self, options, job_file_text, jobs, ctx):
        return []

    def estimate_seconds(self, options, job_file_text, jobs, job_file=None):
        return 1.0

    def build(self, case, test_dir, ctx=None):
        if case.options.get("explode"):
            raise RuntimeError("frobnicator exploded\\nsecond line of the message")
        return Invocation(argv=["dd", "if=/dev/zero", f"of={test_dir}/out", "bs=64k", "count=4"])

    def parse_outputs(self, raw_dir):
        return self.parse_file(raw_dir / "stderr")

    def parse_file(self, path):
        size = int(re.search(r"^(\\d+) bytes", Path(path).read_text(), re.M).group(1))
        return ParseResult([measurement("crashy", "write", "io_bytes", size)])

    def version_argv(self, options=None):
        return ["dd", "--version"]


PLUGIN = CrashyTool()
'''


def test_a_plugin_that_crashes_fails_its_case_and_the_run_goes_on(tmp_path):
    site = tmp_path / "site"
    (site / "fsbench_crashy").mkdir(parents=True)
    (site / "fsbench_crashy" / "__init__.py").write_text(CRASHY)
    info = site / "fsbench_crashy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fsbench-crashy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fsbench.tools]\ncrashy = fsbench_crashy:PLUGIN\n")
    scenario = write_scenario(tmp_path, f"""\
        name: crashy
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          boom: {{tool: crashy, options: {{explode: true}}}}
          fine: {{tool: crashy}}
        """)
    proc = subprocess.run([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out")],
                          env={**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
    reason = cases.loc["boom", "reason"]
    assert cases.loc["boom", "status"] == "failed"
    assert reason == ("unexpected error: RuntimeError: frobnicator exploded "
                      "(the traceback is in raw/t__boom__r1/fsbench-error.txt)")
    kept = (run / "raw" / "t__boom__r1" / "fsbench-error.txt").read_text()
    assert kept.startswith("Traceback") and "in build" in kept and "second line of the message" in kept
    assert cases.loc["fine", "status"] == "ok"  # the case after it ran
    assert manifest(run)["status"] == "failed" and (run / "report.html").exists()
    assert pd.read_csv(run / "results.csv").value.tolist() == [4 * 65536]


def test_an_os_error_on_a_target_fails_its_case_only(tmp_path, fio):
    patch = """\
        import errno
        from fsbench.transport.local import LocalTransport

        real = LocalTransport.makedirs

        def makedirs(self, path):
            if "/broken/" in str(path) and str(path).endswith("__w__r1"):  # the case's folder only
                raise OSError(errno.EIO, "Input/output error", str(path))
            return real(self, path)

        LocalTransport.makedirs = makedirs
        """
    scenario = write_scenario(tmp_path, f"""\
        name: eio
        monitor: {{enabled: false}}
        targets:
          broken: {{path: {tmp_path}/broken, setup: ["mkdir -p ${{target.path}}"]}}
          good: {{path: {tmp_path}/good, setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = fsbench("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", patch=patch)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("target")
    assert cases.loc["broken", "status"] == "failed"
    assert cases.loc["broken", "reason"].startswith("unexpected error: OSError: [Errno 5] Input/output error: ")
    assert (run / "raw" / "broken__w__r1" / "fsbench-error.txt").exists()
    assert cases.loc["good", "status"] == "ok" and manifest(run)["status"] == "failed"


# -- a full or broken run directory outside a case (D13) ------------------------------------------------------

ENOSPC_WHEN = {
    # a case whose target could not be set up is recorded outside the case body
    "failed setup": """\
        import errno
        from fsbench.run.store import RunDir

        real = RunDir.write_cases

        def write_cases(self, records):
            if any(r["status"] == "failed" for r in records):
                raise OSError(errno.ENOSPC, "No space left on device", str(self.path / "cases.csv.tmp"))
            return real(self, records)

        RunDir.write_cases = write_cases
        """,
    "hosts.csv": """\
        import errno
        from fsbench.run.store import RunDir

        def write_hosts(self, hosts):
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path / "hosts.csv"))

        RunDir.write_hosts = write_hosts
        """,
    "service log": """\
        import errno
        from fsbench.run.targets.services import ServiceSession

        def start(self, cancel=None):
            raise OSError(errno.ENOSPC, "No space left on device", str(self.log_dir / "start-0.out"))

        ServiceSession.start = start
        """,
    # the target's teardown cannot write its logs: the unmount is left to the next run's recovery
    "target log": """\
        import errno
        from fsbench.run.targets.lifecycle import TargetSession

        def teardown(self):
            raise OSError(errno.ENOSPC, "No space left on device", str(self.log_dir / "client.log"))

        TargetSession.teardown = teardown
        """,
    "run index": """\
        import errno
        import fsbench.campaign

        def register_run(run_dir, run_id):
            raise OSError(errno.ENOSPC, "No space left on device", "/var/tmp/fsbench-runs-0/x.json")

        fsbench.campaign.register_run = register_run
        """,
}


@pytest.mark.parametrize("where", list(ENOSPC_WHEN))
def test_a_full_disk_outside_a_case_stops_the_run_resumably(tmp_path, fio, where):
    flag = tmp_path / "flag"
    scenario = write_scenario(tmp_path, f"""\
        name: full-outside
        monitor: {{enabled: false}}
        services:
          svc: {{start: ["true"], ready: "true", stop: ["true"]}}
        targets:
          t:
            path: {tmp_path}/t
            services: [svc]
            setup: ["test -e {flag}", "mkdir -p ${{target.path}}"]
            teardown: ["rmdir ${{target.path}}"]
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    if where != "failed setup":
        flag.touch()
    proc = fsbench("run", str(scenario), "-o", str(tmp_path / "out"), patch=ENOSPC_WHEN[where])
    assert proc.returncode == 5, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "--resume" in proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    assert manifest(run)["status"] == "out-of-space"
    flag.touch()
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 0, again.stderr[-3000:]
    assert manifest(run)["status"] == "complete" and manifest(run)["cases"] == {"t__w__r1": "ok"}
    assert not (tmp_path / "t").exists()  # torn down, by the resume or by its recovery of the stopped run
    if where == "target log":
        assert f"cleaned up after the dead run {run.name}: target t on local" in again.stderr


def test_a_run_directory_that_breaks_outside_a_case_is_said_and_resumable(tmp_path, fio):
    patch = """\
        import errno
        from fsbench.run.store import RunDir

        def write_hosts(self, hosts):
            raise OSError(errno.EIO, "Input/output error", str(self.path / "hosts.csv"))

        RunDir.write_hosts = write_hosts
        """
    scenario = quick(tmp_path, "eio-hosts")
    proc = fsbench("run", str(scenario), "-o", str(tmp_path / "out"), patch=patch)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    run = next((tmp_path / "out").iterdir())
    assert f"{run / 'hosts.csv'}: Input/output error: the run stopped" in proc.stderr and "--resume" in proc.stderr
    m = manifest(run)
    assert m["status"] == "failed" and m["error"] == f"{run / 'hosts.csv'}: Input/output error"
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 0 and manifest(run)["status"] == "complete", again.stderr[-3000:]


@pytest.fixture
def read_only(tmp_path):
    """A read-only file system (root can write anywhere else)."""
    mount = tmp_path / "ro"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "fsbench-ro", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("where", ["under a file", "read-only"])
def test_a_bad_output_folder_is_an_error_naming_it(tmp_path, fio, read_only, where):
    root, why = (("/etc/passwd/x", "Not a directory") if where == "under a file"
                 else (str(read_only / "runs"), "Read-only file system"))
    proc = run_cli("run", str(quick(tmp_path, "bad-o")), "-o", root)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert f"error: {root}: cannot create a run directory there" in proc.stderr
    assert why in proc.stderr and "-o" in proc.stderr


# -- a second Ctrl-C anywhere (D14) -----------------------------------------------------------------------------

def test_a_second_ctrl_c_while_writing_the_tables_leaves_the_run_interrupted(tmp_path, fio):
    closing = tmp_path / "closing"
    patch = f"""\
        import pathlib
        import time
        from fsbench.run.store import RunDir

        real = RunDir.write_results

        def write_results(self, rows):
            pathlib.Path({str(closing)!r}).touch()
            time.sleep(20)
            return real(self, rows)

        RunDir.write_results = write_results
        """
    scenario = quick(tmp_path, "closing")
    proc = fsbench("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", patch=patch, popen=True)
    wait_for(proc, closing)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err[-2000:]
    run = next((tmp_path / "out").iterdir())
    assert manifest(run)["status"] == "interrupted" and not (run / "results.csv").exists()
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 0, again.stderr[-2000:]
    assert manifest(run)["status"] == "complete" and (run / "results.csv").exists()


def test_a_second_ctrl_c_while_stopping_a_service_is_cleaned_up_by_the_next_run(tmp_path, fio):
    stopping, stopped = tmp_path / "stopping", tmp_path / "stopped"
    scenario = write_scenario(tmp_path, f"""\
        name: slow-stop
        monitor: {{enabled: false}}
        services:
          slow:
            start: ["true"]
            ready: "true"
            stop: ["touch {stopping}; sleep 3; touch {stopped}"]  # the second Ctrl-C lands within it
        targets:  # u needs the service too: after Ctrl-C during t, the run's own final clean-up stops it
          t: {{path: {tmp_path}/t, services: [slow], setup: ["mkdir -p ${{target.path}}"]}}
          u: {{path: {tmp_path}/u, services: [slow], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          # interrupted 0.5 s in; the resume runs it again for t and u: 2 s each is enough (it was 4 s)
          long: {{tool: fio, options: {{rw: write, size: 1m, time_based: true, runtime: 2}}}}
        """)
    proc = fsbench("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", popen=True)
    wait_for(proc, (tmp_path / "out", "*/raw/t__long__r1/local/command"))
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    wait_for(proc, stopping)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    run = next((tmp_path / "out").iterdir())
    assert manifest(run)["status"] == "interrupted" and not stopped.exists()
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report", "--progress", "plain")
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"cleaned up after the dead run {run.name}: service slow on local" in again.stderr
    assert stopped.exists() and manifest(run)["status"] == "complete"
    assert set(manifest(run)["cases"].values()) == {"ok"}


# -- SIGKILL over SSH ------------------------------------------------------------------------------------------------

def marked(run_id: str) -> list[int]:
    """Processes of this kernel (the lab's hosts share it) whose environment carries the run's marker."""
    needle = f"FSBENCH_RUN={run_id}".encode()
    out = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/environ", "rb") as fh:
                if d.isdigit() and needle in fh.read().split(b"\0"):
                    out.append(int(d))
        except OSError:
            continue
    return out


def test_after_sigkill_over_ssh_the_next_run_cleans_the_remote_host(lab, tmp_path, fio):
    from tests.e2e.test_multihost import inventory

    inventory(lab, tmp_path / "inventory.yaml")
    # the sleeper leaves its session (as a daemon does): only the run's marker finds it afterwards
    scenario = write_scenario(tmp_path, f"""\
        name: ssh-killed
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        services:
          sleeper:
            hosts: [h2]
            start: ["setsid sleep 6317 > /dev/null 2>&1 < /dev/null &"]
            ready: "true"
            stop: ["true"]
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2], services: [sleeper], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          long: {{tool: fio, options: {{rw: write, size: 1m, time_based: true, runtime: 60}}}}
        """)
    proc = fsbench("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", popen=True)
    wait_for(proc, (tmp_path / "out", "*/raw/t__long__r1/h2/command"))
    time.sleep(1.5)
    run = next((tmp_path / "out").iterdir())
    user = lab.user
    work, scratch = Path(f"/tmp/fsbench-{user}/{run.name}"), Path(f"/var/tmp/fsbench/{run.name}")
    assert work.is_dir() and scratch.is_dir() and marked(run.name)  # running, on h2
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert manifest(run)["status"] == "running" and work.is_dir() and scratch.is_dir()
    time.sleep(2)  # fio's session is gone: its dead man's switch ends it; the sleeper stays
    assert marked(run.name)

    follow = write_scenario(tmp_path, f"""\
        name: ssh-next
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        targets:
          t: {{path: {tmp_path}/t, hosts: [h2], setup: ["mkdir -p ${{target.path}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """, "next.yaml")
    nxt = run_cli("run", str(follow), "-o", str(tmp_path / "out2"), "--no-report", "--progress", "plain")
    assert nxt.returncode == 0, nxt.stderr[-3000:]
    assert f"cleaned up after the dead run {run.name}: scratch folders on h2" in nxt.stderr
    assert marked(run.name) == []  # no fio, no sleeper: nothing with the dead run's marker
    assert not work.exists() and not scratch.exists()
    assert manifest(run)["status"] == "interrupted"
    assert not subprocess.run(["pgrep", "-f", "sleep 6317"], capture_output=True).stdout
