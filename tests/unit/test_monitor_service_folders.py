"""The monitor knows a service's processes by the service's folder, as fsbench.services.processes does: a
process whose title overwrote the run's marker (redis-server, postgres) is the run's when it works in the
folder of a service fsbench started on the host and started after that start; the real sampler says which
watched pids work there."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fsbench.monitor.parse import analyse
from fsbench.monitor.processes import owners
from fsbench.monitor.samples import read_raw
from fsbench.monitor.script import sampler_argv
from tests.unit.test_monitor_parse import P, Snap, raw
from tests.unit.test_monitor_samples_speedup import read_raw_as_before  # noqa: F401 (a fixture)

# every input these tests give read_raw is also read by the reader it replaced, and must read the same
pytestmark = pytest.mark.usefixtures("read_raw_as_before")

MiB = 1024 * 1024
FOLDER = "/var/tmp/fsbench/r1/services/redis"


def _with_folder(text: str, working: dict[int, int], since: int = 5) -> str:
    """text as the sampler prints it with one service folder (started at tick `since`): `w PID K` lines."""
    head, _, rest = text.partition("\n")
    lines = "".join(f"w {pid} {k}\n" for pid, k in working.items())
    return f"{head}\n#folder {since} {FOLDER}\n" + rest.replace("MemTotal:", lines + "MemTotal:")


def _redis(own_start: int = 7, since: int = 5, k: int = 1) -> dict:
    """The run's redis-server (its marker gone: `n`; 100 ticks a second, 10 MiB) in the service's folder, beside a
    stranger of the same name elsewhere (50 ticks, 500 MiB)."""
    def snap(t: float, n: int) -> Snap:
        return Snap(t, procs=[P(10, "redis-server", own_start, 100 * n, rss_kb=10 * 1024, own=False),
                              P(20, "redis-server", 6, 50 * n, rss_kb=500 * 1024, own=False)])
    text = _with_folder(raw(snap(100.0, 0), snap(101.0, 1), watch=("redis-server",), marker=True), {10: k}, since)
    m = analyse(text, "h1")
    return {"text": text, "rows": {(r["job"], r["metric"], r["stat"]): r for r in m.summary}}


def test_a_server_in_its_services_folder_is_the_runs_though_its_title_hid_the_marker():
    got = _redis()
    assert got["rows"]["redis-server", "cpu_usage", "mean"]["value"] == 100.0  # not 150: the stranger is left out
    assert got["rows"]["redis-server", "memory_peak", "max"]["value"] == 10 * MiB
    assert not any("none started" in r.get("warnings", "") for r in got["rows"].values())
    parsed = read_raw(got["text"])
    assert parsed.folders == [(5, FOLDER)]
    assert owners(parsed, "h1").mine == {(10, 7)}


@pytest.mark.parametrize("own_start, k", [(4, 1), (7, 2)])
def test_a_process_older_than_the_services_start_or_of_no_known_folder_is_not(own_start, k):
    # started before the service's start began (its folder taken over later), or a folder number not listed
    got = _redis(own_start=own_start, k=k)["rows"]
    assert got["redis-server", "memory_peak", "max"]["value"] == 510 * MiB
    assert "none started by this run" in got["redis-server", "memory_peak", "max"]["warnings"]


def test_folders_are_absolute_paths_without_a_line_break():
    assert sampler_argv(1, ["x"], folders=[(5, "/a/b/")])[12] == "5 /a/b\x1f"
    for bad in [(5, "a/b"), (5, "/a\nb"), (5, "/a\x1fb"), (-1, "/a")]:
        with pytest.raises(ValueError):
            sampler_argv(1, ["x"], folders=[bad])


def test_the_sampler_says_which_watched_pids_work_in_a_services_folder(tmp_path: Path):
    """The real sampler: a process working in (a folder under) the service's folder, reached through a link
    too, gets a `w` line; one of the same name elsewhere does not; the parser counts only the first."""
    name = f"fsbm-srv{os.getpid() % 100000}"
    exe = tmp_path / name
    exe.symlink_to(os.path.realpath(sys.executable))
    service = tmp_path / "services" / "redis"
    (service / "data").mkdir(parents=True)
    (tmp_path / "link").symlink_to(service)
    (tmp_path / "elsewhere").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FSBENCH_")}
    procs = [subprocess.Popen([str(exe), "-c", "import time; time.sleep(30)"], cwd=cwd, env=env)
             for cwd in (service / "data", tmp_path / "elsewhere")]
    try:
        time.sleep(0.2)
        argv = sampler_argv(0.1, [name], max_s=0.5, folders=[(0, str(tmp_path / "link"))])
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                             env={**os.environ, "FSBENCH_RUN": "r-unit"}).stdout
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert f"#folder 0 {tmp_path}/link\n" in out
    assert f"\nw {procs[0].pid} 1\n" in out and f"\nw {procs[1].pid} " not in out
    assert f"\nn {procs[0].pid}\n" in out  # no marker in its environment: the folder alone tells
    counted = owners(read_raw(out), "h1")
    assert {pid for pid, _ in counted.mine} == {procs[0].pid} and counted.own_only == {name}
