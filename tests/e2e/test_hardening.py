"""Fault injection: each attack of the hardening issue is refused or survived, nothing lost, leaked or left.

(Also elsewhere: sshd killed mid-run in test_multihost, a changed host key in test_multihost and
test_ssh_transport, Ctrl-C in test_run_local; Ctrl-C over SSH is below.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import require, run_cli, write_scenario
from tests.paths import REPO

# -- injection ---------------------------------------------------------------------------------------


def test_a_newline_in_a_target_path_cannot_inject_a_fio_option(tmp_path, fio):
    pwned = tmp_path / "pwned"
    scenario = write_scenario(tmp_path, f"""\
        name: inject
        targets:
          t: {{path: "{tmp_path}/t\\nexec_prerun=mkdir -p {pwned}"}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 3 and "targets.t.path" in proc.stderr and "line break" in proc.stderr
    assert not pwned.exists() and not (tmp_path / "out").exists()


def test_a_newline_in_an_option_or_a_set_value_is_refused(tmp_path):
    scenario = write_scenario(tmp_path, f"""\
        name: inject2
        variables: {{bs: 4k}}
        targets: {{t: {{path: {tmp_path}/t}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, bs: "${{bs}}"}}}}
        """)
    proc = run_cli("validate", str(scenario), "--set", 'bs="4k\\nexec_prerun=touch /tmp/x"')  # YAML keeps this \n
    assert proc.returncode == 3 and "workloads.w.options.bs" in proc.stderr and "line break" in proc.stderr


def test_a_colon_in_the_target_path_stays_one_directory(tmp_path, fio):
    folder = tmp_path / "a:b"
    scenario = write_scenario(tmp_path, f"""\
        name: colon
        monitor: {{enabled: false}}
        targets: {{t: {{path: "{folder}", setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report")
    assert proc.returncode == 0, proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    assert "directory=" + str(folder).replace(":", "\\:") in (run / "raw" / "t__w__r1" / "local" / "job.fio").read_text()
    assert not (tmp_path / "a").exists()  # fio did not split the path into "…/a" and "b/…"


def test_commands_in_tool_options_need_an_explicit_opt_in_and_show_in_the_plan(tmp_path, fio):
    marker = tmp_path / "ran"
    text = f"""\
        name: commands
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m, exec_postrun: "touch {marker}"}}}}
        """
    scenario = write_scenario(tmp_path, text)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 3 and "runs a command" in proc.stderr and "allow_commands: true" in proc.stderr
    scenario = write_scenario(tmp_path, text.replace("w: {tool: fio,", "w: {tool: fio, allow_commands: true,"))
    shown = run_cli("plan", str(scenario), "--show", check=True).stdout
    assert f"exec_postrun=touch {marker}" in shown
    run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", check=True)
    assert marker.exists()


def test_a_set_value_in_a_target_command_is_data_not_code(tmp_path, fio):
    marker = tmp_path / "PWNED"
    scenario = write_scenario(tmp_path, f"""\
        name: setinj
        monitor: {{enabled: false}}
        variables: {{sub: data}}
        targets:
          t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}/${{sub}}"]}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    value = f"x; touch {marker} $(id)"
    shown = run_cli("plan", str(scenario), "--show", "--set", f"sub={value}", check=True).stdout
    assert f"   $ mkdir -p {tmp_path}/t/'{value}'" in shown  # the command as it will run, quoted
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", "--set", f"sub={value}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not marker.exists() and (tmp_path / "t" / value).is_dir()


# -- oversized input ------------------------------------------------------------------------------------

def test_a_yaml_alias_bomb_is_refused_in_under_a_second(tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    assert bomb.stat().st_size < 1000
    start = time.monotonic()
    proc = run_cli("validate", str(bomb))
    assert proc.returncode == 3 and "expands to more than" in proc.stderr
    assert time.monotonic() - start < 5  # the CLI's own start-up included; the check itself takes ~0.3 s


def _big_value_bomb(tmp_path: Path) -> Path:
    """1.8 MB: one 1.5 MB value, aliased 100,000 times (under the value count, not under the text size)."""
    path = tmp_path / "bomb6.yaml"
    path.write_text(f"name: x\ndescription: &b \"{'y' * 1_500_000}\"\ntargets:\n  t:\n    path: /srv/bench/t\n"
                    f"    setup: [{', '.join(['*b'] * 100_000)}]\nworkloads: {{w: {{tool: fio}}}}\n")
    return path


def _sweep_bomb(tmp_path: Path) -> Path:
    """652 bytes: 12 fio axes of 10 values, 10^12 cases."""
    axes = "".join(f"        {k}: [1,2,3,4,5,6,7,8,9,10]\n" for k in (
        "iodepth", "numjobs", "nrfiles", "runtime", "ramp_time", "rwmixread", "thinktime", "rate_iops", "offset",
        "iodepth_batch", "iodepth_low", "openfiles"))
    path = tmp_path / "sweepbomb.yaml"
    path.write_text("name: x\ntargets:\n  t1: {path: /srv/bench/t}\nworkloads:\n  w:\n    tool: fio\n"
                    "    options: {rw: randrw, size: 1m}\n    sweep:\n      product:\n" + axes)
    return path


def _many_repetitions(tmp_path: Path) -> Path:
    path = tmp_path / "reps.yaml"
    path.write_text("name: x\nsettings: {repetitions: 100000000}\ntargets: {t1: {path: /srv/bench/t}}\n"
                    "workloads: {w: {tool: fio, options: {rw: write, size: 1m}}}\n")
    return path


@pytest.mark.parametrize("make, sets, message", [
    (_big_value_bomb, [], "the YAML expands to more than 8 MiB of text"),
    (_sweep_bomb, [], "workloads.w.sweep: the sweep makes 1,000,000,000,000 points; at most 10,000"),
    (_many_repetitions, [], "settings.repetitions: must be at most 1,000, got 100,000,000"),
    (_many_repetitions, ["--set", "x=" + "[" * 60_000 + "]" * 60_000], "nested more than 64 levels"),
], ids=["big-value-aliases", "sweep", "repetitions", "deep-set-value"])
def test_oversized_plans_are_refused_in_under_a_second(tmp_path, make, sets, message):
    from fsbench.core.errors import ScenarioError
    from fsbench.scenario.load import load_scenario

    path = make(tmp_path)
    proc = run_cli("plan", str(path), *sets)
    assert proc.returncode == 3 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-1000:]
    start = time.monotonic()
    with pytest.raises(ScenarioError):
        load_scenario(path, sets[1:])
    assert time.monotonic() - start < 1  # the check itself (the CLI adds its start-up)


def test_a_job_file_that_is_a_device_is_refused(tmp_path):
    scenario = write_scenario(tmp_path, """\
        name: jz
        targets: {t1: {path: /srv/bench/t}}
        workloads: {w: {tool: fio, job_file: /dev/zero}}
        """)
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 3 and "cannot read job file /dev/zero: not a regular file" in proc.stderr


@pytest.mark.parametrize("text, message", [
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than"),
    ("name: big\n" + "# padding\n" * 300_000, "may be at most"),
])
def test_deep_or_huge_yaml_is_refused(tmp_path, text, message):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    proc = run_cli("validate", str(path))
    assert proc.returncode == 3 and message in proc.stderr, proc.stderr[-500:]


@pytest.mark.parametrize("name", ["../../escaped", "/abs/name", ".hidden"])
def test_a_scenario_name_cannot_place_the_run_directory(tmp_path, name):
    scenario = write_scenario(tmp_path, f"""\
        name: "{name}"
        targets: {{t: {{path: {tmp_path}/t}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 3 and "bad name" in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "escaped").exists()


# -- parsers --------------------------------------------------------------------------------------------

def test_a_parser_crash_fails_only_its_case(tmp_path, fio):
    """A stand-in fio writes JSON that crashes a naive parser (Infinity, a 5,000-digit number, deep nesting)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    evil = '{"fio version": "fio-3.33", "jobs": [{"jobname": "w", "read": {"bw_bytes": Infinity, "io_bytes": ' \
           + "9" * 5000 + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}}]}"
    (tmp_path / "evil.json").write_text(evil)
    wrapper = bindir / "fio"
    wrapper.write_text(f"#!/bin/sh\nif grep -q 'rw=randwrite' job.fio 2>/dev/null; then\n"
                       f"  cp {tmp_path}/evil.json fio.json; exit 0\nfi\nexec {fio} \"$@\"\n")
    wrapper.chmod(0o755)
    scenario = write_scenario(tmp_path, f"""\
        name: crashy
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          good: {{tool: fio, options: {{rw: write, size: 1m}}}}
          evil: {{tool: fio, options: {{rw: randwrite, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), env={"PATH": f"{bindir}:{os.environ['PATH']}"})
    assert proc.returncode == 1, proc.stderr[-2000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("workload")
    assert cases.loc["good", "status"] == "ok"
    assert cases.loc["evil", "status"] == "failed" and "unusable output" in cases.loc["evil", "reason"]
    assert json.loads((run / "manifest.json").read_text())["status"] == "failed"
    assert (run / "results.csv").exists() and (run / "report.html").exists()
    assert (run / "raw" / "t__evil__r1" / "local" / "fio.json").read_text() == evil  # raw first, kept


# -- secrets --------------------------------------------------------------------------------------------

def _everything_written(run: Path) -> str:
    """Every file of the run directory as text, binary ones (results.parquet) included."""
    return "\n".join(p.read_bytes().decode("utf-8", errors="replace") for p in run.rglob("*") if p.is_file())


def test_secrets_come_from_the_environment_and_are_never_written_or_printed(tmp_path, fio):
    secret = "s3cr3t-Value-42"
    seen = tmp_path / "seen"
    scenario = write_scenario(tmp_path, f"""\
        name: secrets
        secrets:
          token: {{env: FSB_TEST_TOKEN}}
        targets:
          t:
            path: {tmp_path}/t
            setup:
              - mkdir -p ${{target.path}}
              - printf %s ${{secrets.token}} > {seen}
              - echo "my token is ${{secrets.token}}" >&2
              - echo "connecting to mysql://bench:hunter2@db.example:3306/x"
          fails:
            path: {tmp_path}/f
            setup: ["echo token ${{secrets.token}} >&2; exit 3"]
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain",
                   env={"FSB_TEST_TOKEN": secret})
    assert proc.returncode == 1  # the target whose setup fails
    run = Path(proc.stdout.splitlines()[0])
    assert seen.read_text() == secret  # the command got the value ...
    written = _everything_written(run)
    for leak in (secret, "hunter2"):  # ... but no file of the run directory, nor stdout/stderr, has it
        assert leak not in written and leak not in proc.stdout + proc.stderr
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False).set_index("target")
    assert "token ****" in cases.loc["fails", "reason"]
    assert "${secrets.token}" in (run / "scenario.yaml").read_text()
    empty = run_cli("run", str(scenario), "-o", str(tmp_path / "out2"), env={"FSB_TEST_TOKEN": ""})
    assert empty.returncode == 1 and "FSB_TEST_TOKEN" not in empty.stderr  # an empty value is a value: it ran
    unset = {k: v for k, v in os.environ.items() if k != "FSB_TEST_TOKEN"}
    proc = subprocess.run([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out3")],
                          env={**unset, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4 and "environment variable FSB_TEST_TOKEN is not set" in proc.stderr
    assert not (tmp_path / "out3").exists()


def test_secrets_written_in_the_scenario_or_set_reach_no_file_and_no_report(tmp_path, fio):
    """A literal secret_key (and access_key) and a --set password inside a URL: masked in scenario.yaml
    (its variables too), the tables, results.parquet, report.html and report.md."""
    for tool in ("juicefs", "fusermount3"):
        require(tool)
    literal, from_set = "literalSecretKey123", "p@ss@fromSet99"
    scenario = write_scenario(tmp_path, f"""\
        name: literal-secrets
        monitor: {{enabled: false}}
        variables: {{dbpw: changeme}}
        targets:
          jfs:
            kind: juicefs
            path: {tmp_path}/mnt
            description: "its metadata could live in mysql://jfs:${{dbpw}}@(127.0.0.1:3306)/jfs"
            juicefs: {{meta: "sqlite3://{tmp_path}/jfs.db", storage: file, access_key: AKliteral1,
                      secret_key: {literal}}}
        workloads:
          w: {{tool: fio, description: "written with {literal}", options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain",
                   "--set", f"dbpw={from_set}", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "targets.jfs.juicefs.secret_key: a secret is written in the scenario" in proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    run_cli("report", str(run), "--markdown", check=True)
    assert {p.name for p in run.iterdir()} >= {"scenario.yaml", "cases.csv", "results.parquet", "report.html",
                                               "report.md"}
    written = _everything_written(run)
    for leak in (literal, "AKliteral1", from_set, "fromSet99"):
        assert leak not in written and leak not in proc.stdout + proc.stderr, leak
    import yaml

    saved = yaml.safe_load((run / "scenario.yaml").read_text())
    assert saved["variables"]["dbpw"] == "****" and saved["targets"]["jfs"]["juicefs"]["secret_key"] == "****"
    assert "mysql://jfs:****@(127.0.0.1:3306)/jfs" in (run / "report.html").read_text()


def test_a_meta_password_reaches_juicefs_through_its_environment_only(tmp_path):
    """Redis with requirepass, JuiceFS's meta URL with the password from a secret: never in argv or files."""
    for tool in ("redis-server", "juicefs", "fusermount3"):
        require(tool)
    secret = "Redis-pw-8472"
    scenario = write_scenario(tmp_path, f"""\
        name: meta-secret
        secrets: {{redis: {{env: FSB_REDIS_PW}}}}
        monitor: {{interval: 0.3s}}
        services:
          redis:
            port: auto
            files:
              redis.conf: |
                bind 127.0.0.1
                port ${{service.port}}
                daemonize yes
                pidfile ${{service.dir}}/redis.pid
                dir ${{service.dir}}
                save ""
                requirepass ${{secrets.redis}}
            start: ["redis-server ${{service.dir}}/redis.conf"]
            ready: REDISCLI_AUTH=${{secrets.redis}} redis-cli -p ${{service.port}} ping | grep -q PONG
            stop: ["REDISCLI_AUTH=${{secrets.redis}} redis-cli -p ${{service.port}} shutdown nosave"]
        targets:
          jfs:
            kind: juicefs
            path: {tmp_path}/mnt
            services: [redis]
            juicefs: {{meta: "redis://:${{secrets.redis}}@127.0.0.1:${{services.redis.port}}/1"}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 4m}}}}
        """)
    found_in_ps: list[str] = []
    stop = threading.Event()

    def watch_ps() -> None:
        while not stop.is_set():
            out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
            found_in_ps.extend(line for line in out.splitlines() if secret in line)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch_ps)
    watcher.start()
    try:
        proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain",
                       env={"FSB_REDIS_PW": secret}, timeout=300)
    finally:
        stop.set()
        watcher.join()
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    assert secret not in _everything_written(run) and secret not in proc.stderr
    assert found_in_ps == []  # not in any process's command line, at any moment sampled
    assert "redis://127.0.0.1:" in proc.stderr  # the URL shown without its password part


# -- paths -------------------------------------------------------------------------------------------------

def test_a_symlink_to_a_system_folder_is_refused_where_it_lives(tmp_path, fio):
    link = tmp_path / "innocent"
    link.symlink_to("/etc")
    scenario = write_scenario(tmp_path, f"""\
        name: symlink
        targets: {{t: {{path: {link}}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert proc.returncode == 4 and f"{link} resolves to /etc" in proc.stderr
    dotdot = write_scenario(tmp_path, scenario.read_text().replace(f"path: {link}", f"path: {tmp_path}/usr-link/..")
                            .replace("name: symlink", "name: dotdot"), "dotdot.yaml")
    (tmp_path / "usr-link").symlink_to("/usr/share")
    proc = run_cli("run", str(dotdot), "-o", str(tmp_path / "out"))
    assert proc.returncode == 4 and "resolves to /usr" in proc.stderr
    assert not (tmp_path / "out").exists()


# -- one process per run directory --------------------------------------------------------------------------

def test_two_resumes_of_one_run_directory_do_not_both_run(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: twice
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          slow: {{tool: fio, options: {{rw: write, size: 1m, time_based: true, runtime: 4}}}}
          other: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    first = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                              "--no-report"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "out").glob("*/raw/t__slow__r1/local/command")) and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)  # an interrupted run: both cases left to do
    run = first.communicate(timeout=60)[0].splitlines()[0]
    args = [sys.executable, "-m", "fsbench", "run", str(scenario), "--resume", run, "--no-report"]
    a = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    b = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    a.communicate(timeout=120)
    assert b.returncode == 2 and "is in use by fsbench (pid" in b.stderr and str(a.pid) in b.stderr
    assert a.returncode == 0
    manifest = json.loads((Path(run) / "manifest.json").read_text())
    assert set(manifest["cases"].values()) == {"ok"} and manifest["status"] == "complete"


def test_many_run_directories_created_at_once_are_all_distinct(tmp_path):
    from fsbench.run.store import RunDir

    made: list[Path] = []
    errors: list[BaseException] = []

    def create() -> None:
        try:
            made.append(RunDir.create(tmp_path, "burst", {"name": "burst"}).path)
        except BaseException as exc:  # noqa: BLE001 - the test collects them
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(120)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(made)) == 120
    assert all((p / "manifest.json").exists() for p in made)


# -- a full disk ------------------------------------------------------------------------------------------------

def test_a_full_run_directory_stops_cleanly_and_resumes(tmp_path, fio, small_disk):
    scenario = write_scenario(tmp_path, f"""\
        name: full
        monitor: {{enabled: false}}
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
          v: {{tool: fio, options: {{rw: write, bs: 4k, size: 32m, write_lat_log: lat}}}}
        """)
    filler = small_disk / "filler"  # 384 KiB left: the run directory fits, v's latency logs do not
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k", "count=42"], capture_output=True, check=True)
    proc = run_cli("run", str(scenario), "-o", str(small_disk), "--no-report")
    assert proc.returncode == 5, proc.stderr[-2000:]
    assert "is full" in proc.stderr and "--resume" in proc.stderr and "Traceback" not in proc.stderr
    run = Path(proc.stdout.splitlines()[0])
    assert json.loads((run / "manifest.json").read_text())["status"] == "out-of-space"
    filler.unlink()
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report")
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"


def test_a_disk_full_from_the_start_leaves_no_run_directory(tmp_path, small_disk):
    subprocess.run(["dd", "if=/dev/zero", f"of={small_disk / 'filler'}", "bs=64k", "count=64"], capture_output=True)
    scenario = write_scenario(tmp_path, f"""\
        name: nospace
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          w: {{tool: fio, options: {{rw: write, size: 1m}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(small_disk))
    assert proc.returncode == 2 and "no space left to create a run directory" in proc.stderr
    assert [p.name for p in small_disk.iterdir()] == ["filler"]


# -- a killed fsbench --------------------------------------------------------------------------------------------

def test_after_sigkill_the_next_run_cleans_up_the_dead_run_first(tmp_path, fio):
    mount = tmp_path / "tmpfs"
    stopped = tmp_path / "service-stopped"
    scenario = write_scenario(tmp_path, f"""\
        name: killed
        services:
          sleeper:
            start: ["(sleep 600 > /dev/null 2>&1 & echo $! > ${{service.dir}}/pid)"]
            ready: "true"
            stop: ["kill $(cat ${{service.dir}}/pid); touch {stopped}"]
        targets:
          t:
            path: {mount}
            services: [sleeper]
            setup: ["mkdir -p ${{target.path}}", "mount -t tmpfs -o size=64m fsbench-killed ${{target.path}}"]
            teardown: ["umount ${{target.path}}", "rmdir ${{target.path}}"]
        workloads:
          # killed 1 s in, so 3 s is running time to spare; the resume runs it again whole (it was 8 s)
          long: {{tool: fio, options: {{rw: write, size: 8m, time_based: true, runtime: 3}}}}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--no-report"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "out").glob("*/raw/t__long__r1/local/command")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=30)
    run = next((tmp_path / "out").iterdir())
    mounts = lambda: subprocess.run(["findmnt", "-n", "-o", "TARGET", str(mount)],  # noqa: E731
                                    capture_output=True, text=True).stdout.strip()
    strays = lambda: subprocess.run(["pgrep", "-f", f"{run.name}|sleep 600"],  # noqa: E731
                                    capture_output=True, text=True).stdout.split()
    assert mounts() == str(mount) and strays()  # what a SIGKILL leaves: the mount, fio, the service
    resume = run_cli("run", str(scenario), "--resume", str(run), "--no-report", "--progress", "plain", timeout=300)
    assert "cleaned up after the dead run" in resume.stderr
    assert resume.returncode == 0, resume.stderr[-3000:]
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    assert mounts() == "" and stopped.exists()  # one mount at a time: the leftover was unmounted first
    assert strays() == []


def test_a_second_ctrl_c_still_exits_130_with_the_manifest_marked(tmp_path, fio):
    scenario = write_scenario(tmp_path, f"""\
        name: twice-c
        targets:
          t:
            path: {tmp_path}/t
            setup: ["mkdir -p ${{target.path}}"]
            teardown: ["touch {tmp_path}/tearing-down", "test -e {tmp_path}/resuming || sleep 3", "rm -rf ${{target.path}}"]
        workloads:
          # 3 s: the first Ctrl-C lands 0.5 s in; the resume runs the case again, whole (it was 6 s)
          long: {{tool: fio, options: {{rw: write, size: 1m, time_based: true, runtime: 3}}}}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--progress", "plain"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "out").glob("*/raw/t__long__r1/local/command")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    # the second Ctrl-C once the teardown runs (its `sleep 3`): on a loaded machine stopping fio alone took
    # longer than a fixed 1.5 s, and a second Ctrl-C before the teardown let the teardown run whole
    deadline = time.monotonic() + 60
    while not (tmp_path / "tearing-down").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    run = next((tmp_path / "out").iterdir())
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert (tmp_path / "t").exists()  # the second Ctrl-C cut the teardown short: its clean-up is pending
    # what the second Ctrl-C cut short is cleaned up by the next run (whose own teardown needs no window for a
    # Ctrl-C: no sleep)
    (tmp_path / "resuming").touch()
    again = run_cli("run", str(scenario), "--resume", str(run), "--no-report", "--progress", "plain", timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"cleaned up after the dead run {run.name}: target t on local" in again.stderr
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    assert not (tmp_path / "t").exists()  # the resume's own teardown ran to its end this time


# -- over SSH ----------------------------------------------------------------------------------------------------

def test_ctrl_c_over_ssh_stops_the_remote_tool_and_removes_remote_folders(lab, tmp_path, fio):
    from tests.e2e.test_multihost import inventory

    inventory(lab, tmp_path / "inventory.yaml")
    scenario = write_scenario(tmp_path, f"""\
        name: ssh-stop
        inventory: inventory.yaml
        hosts: {{h2: {{}}}}
        targets: {{t: {{path: {tmp_path}/t, hosts: [h2], setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads:
          long: {{tool: fio, options: {{rw: write, size: 1m, time_based: true, runtime: 60}}}}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--no-report"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((tmp_path / "out").glob("*/raw/t__long__r1/h2/command")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    run = Path(out.splitlines()[0])
    user = lab.user
    assert not Path(f"/tmp/fsbench-{user}/{run.name}").exists()  # the remote work folder of the run is gone
    from tests.e2e.test_multihost import no_strays

    assert no_strays(run.name)  # the watchdogs of the last commands end within a second of their session
