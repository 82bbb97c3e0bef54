"""The `fsbench` program's exit (fsbench.__main__.run): its status, its output and what an exit must still do,
without the interpreter's teardown; and the report templates compiled once per user."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from fsbench.report.template_env import bytecode_cache, environment

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_an_error_keeps_its_exit_status_and_its_message(tmp_path):
    r = subprocess.run([sys.executable, "-m", "fsbench", "validate", str(tmp_path / "none.yaml")], capture_output=True,
                       text=True, cwd=REPO, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 3
    assert "cannot read the scenario" in r.stderr and str(tmp_path / "none.yaml") in r.stderr


def test_atexit_handlers_run_threads_are_joined_and_output_is_flushed(tmp_path):
    done = tmp_path / "thread-done"
    code = f"""
import atexit, sys, threading, time
from pathlib import Path
atexit.register(lambda: print("atexit ran", flush=False))
def late():
    time.sleep(0.3)
    Path({str(done)!r}).write_text("yes")
threading.Thread(target=late).start()
sys.stdout.write("unflushed text ")
sys.argv = ["fsbench", "--version"]
from fsbench.__main__ import run
run()
"""
    r = _python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("unflushed text fsbench, version ")
    assert r.stdout.rstrip().endswith("atexit ran")
    assert done.read_text() == "yes"


def test_a_usage_error_exits_2():
    r = _python("import sys; sys.argv = ['fsbench', 'no-such-command']\nfrom fsbench.__main__ import run\nrun()")
    assert r.returncode == 2
    assert "No such command" in r.stderr


def test_a_closed_pipe_ends_quietly():
    p = subprocess.Popen([sys.executable, "-m", "fsbench", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # as `fsbench --help | head -0` does
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert "Traceback" not in err


def test_templates_are_compiled_once_per_user(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    env = environment()
    env.get_template("report.html.j2")
    cached = list((tmp_path / "fsbench" / "templates").iterdir())
    assert cached and all(p.name.endswith(".cache") for p in cached)
    assert stat.S_IMODE((tmp_path / "fsbench" / "templates").stat().st_mode) == 0o700
    mtimes = {p: p.stat().st_mtime_ns for p in cached}
    environment().get_template("report.html.j2")  # a new process's environment: loads it, compiles nothing
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "fsbench" / "templates").iterdir()} == mtimes


def test_no_cache_in_a_folder_others_may_write(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "fsbench" / "templates"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    assert bytecode_cache() is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")  # nor where the folder cannot be made
    assert bytecode_cache() is None
