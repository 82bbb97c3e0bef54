"""The collector kinds' optional hooks, found by Protocol on a real JuiceFS mount (Redis metadata): juicefs
stats parses its lines knowing when the tool ran (ParsesWindow), so its means cover the run, not the idle
seconds around it; juicefs profile keeps reading the access log for its tail (HasTail) and parses streams."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fsbench.collectors import COLLECTORS
from fsbench.collectors.juicefs_profile import count_log, parse_profile
from fsbench.scenario.model import Collector
from fsbench.transport.local import LocalTransport
from tests.conftest import require, run_cli, write_scenario
from tests.paths import GOLDEN


def test_juicefs_stats_means_cover_the_tool_s_run_and_profile_counts_its_calls(tmp_path):
    for tool in ("juicefs", "redis-server", "redis-cli", "script", "fusermount3"):
        require(tool)
    scenario = write_scenario(tmp_path, f"""\
        name: collector-hooks
        monitor: {{enabled: false}}
        services:
          redis: {{kind: redis, redis: {{appendonly: false}}}}
        targets:
          jfs:
            kind: juicefs
            path: {tmp_path}/jfs
            services: [redis]
            juicefs: {{meta: "${{services.redis.url}}/1", storage: file}}
        collectors:
          stats: {{kind: juicefs-stats, targets: [jfs], interval: 1s}}
          profile: {{kind: juicefs-profile, targets: [jfs]}}
        workloads:
          bench:
            tool: juicefs-bench
            options: {{threads: 1, block_size: 1m, big_file_size: 128m, small_file_size: 64k, small_file_count: 50}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--progress", "plain", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    raw = run / "raw" / "jfs__bench__r1" / "local"
    results = pd.read_csv(run / "results.csv", keep_default_na=False)

    # every sample, idle ones before and after the tool included, is in the series
    series = pd.read_csv(raw / "collector-stats-local.csv")
    written = series[series.metric == "fuse.write"].value
    assert len(written) >= 3 and written.max() > 0
    stats = results[(results.tool == "juicefs-stats") & (results.operation == "fuse_write")
                    & (results.metric == "bandwidth")].set_index("stat")
    # the window's mean: what was written per second of the tool's run, above the mean of all samples (what
    # the session's plain `parse` gives: the guard that the window still reaches juicefs stats by its hook)
    assert stats.loc["mean", "value"] > 1.05 * written.mean(), (stats.loc["mean", "value"], written.mean())
    # samples fell in the run: no fallback to all of them, which a warnings column would say
    assert "warnings" not in stats.columns or stats.loc["mean", "warnings"] == ""
    assert 0 < stats.loc["max", "value"] <= written.max()

    profile = results[(results.tool == "juicefs-profile") & (results.metric == "ops")].set_index("operation")
    # juicefs bench created its 50 small files (and its big one); the client's access log drops lines when its
    # reader falls behind (seen on CI's loaded machine: 45, then 30 of them), so the count is at most theirs
    assert 0 < profile.loc["create", "value"] <= 51 and profile.loc["write", "value"] > 0


def test_juicefs_profile_replays_a_recording_cut_mid_line(tmp_path):
    """The real juicefs profile on an access log whose last line a kill cut before its <duration>: on the
    log itself it panics (1.4.2), on the whole lines fsbench hands it, it gives every operation's totals."""
    juicefs = require("juicefs")
    log = (GOLDEN / "collectors" / "inputs" / "juicefs-1.4.2_accesslog_bench_p1.txt").read_text()
    raw = tmp_path / "collector-profile.txt"
    last = log.splitlines()[-1]
    raw.write_text(log + last[:last.index(" OK <")])  # as a kill cut one in CI: "... 4096]) -"
    on_the_cut = LocalTransport().run([juicefs, "profile", str(raw), "--interval", "0"], timeout=60,
                                      stdout_path=tmp_path / "cut.out", stderr_path=tmp_path / "cut.err")
    assert not on_the_cut.ok and "panic" in (tmp_path / "cut.err").read_text()  # why the copy exists
    argv = COLLECTORS.get("juicefs-profile").after(Collector(name="profile", kind="juicefs-profile",
                                                             options={"binary": juicefs}), str(raw))
    replay = LocalTransport().run(argv, timeout=60, stdout_path=tmp_path / "replay.out")
    assert replay.ok, replay.describe()
    got = parse_profile((tmp_path / "replay.out").read_text())
    assert {op: n for op, (n, _, _) in got.items()} == {op: n for op, (n, _, _) in count_log(log).items()}
