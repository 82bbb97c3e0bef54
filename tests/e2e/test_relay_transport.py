"""The `ssh-relay` transport on five hosts of the namespaced lab (127.0.28.170-174), with a real ssh-agent.

client1 relays for client2 and client3, client4 for client5 (about sqrt(N) groups). Every command below goes
through a relay's one channel: on the relay host as its program's child, on the others through OpenSSH's client
and a master connection per host, logged in with the forwarded agent and checked against the controller's
known_hosts. What the direct transport promises holds: results, stops by process group, lost hosts named,
nothing left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fsbench.core.cancel import Cancel
from fsbench.core.inventory import load_inventory
from fsbench.transport.errors import ConnectError
from fsbench.transport.relay import PLUGIN, RelayedTransport, RelayHost
from fsbench.transport.run_agent import RUN_AGENT
from tests.conftest import require
from tests.mhlab import MultiHostLab, clients_layout, ssh_agent, start_multihost
from tests.paths import REPO

FIRST = 170  # 127.0.28.170-174: no other lab of the suite uses them
MARK = {"FSBENCH_RUN": "relay-e2e"}


class Host:
    def __init__(self, name: str):
        self.name = name


@pytest.fixture(scope="module")
def lab5(tmp_path_factory) -> Iterator[MultiHostLab]:
    for tool in ("/usr/sbin/sshd", "unshare", "nsenter", "ssh", "ssh-agent", "ssh-add"):
        require(tool)
    lab = start_multihost(tmp_path_factory.mktemp("relaylab"), clients_layout(5), first=FIRST)
    try:
        yield lab
    finally:
        lab.stop()


@pytest.fixture(scope="module")
def agent(lab5) -> Iterator[dict[str, str]]:
    with ssh_agent(lab5.client_key) as env, pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        yield env


def transports(lab: MultiHostLab, folder) -> dict:
    inv = lab.write_inventory(folder / "inventory.yaml", transport="ssh-relay")
    specs = load_inventory(inv)
    made = PLUGIN.make_all([Host(n) for n in specs], specs)
    for t in made.values():
        t.mark(MARK)
    return made


@pytest.fixture
def ts(lab5, agent, tmp_path):
    made = transports(lab5, tmp_path)
    yield made
    for t in made.values():
        t.close()
    assert lab5.wait_clean() == {}
    for name in ("client1", "client4"):  # the relays' folders went with them
        assert not list(lab5.host(name).path("/tmp").glob("fsbench-*/relay-*")), name


def test_hosts_are_split_into_relays_and_the_hosts_behind_them(ts):
    assert {n: type(t) for n, t in ts.items()} == {
        "client1": RelayHost, "client2": RelayedTransport, "client3": RelayedTransport, "client4": RelayHost,
        "client5": RelayedTransport}
    assert ts["client3"].link is ts["client1"].link and ts["client5"].link is ts["client4"].link


def test_commands_files_and_folders_through_the_relays(ts, lab5, tmp_path):
    for name, t in ts.items():
        r = t.run(["sh", "-c", 'hostname; echo "$FSBENCH_RUN"; echo warn >&2; exit 3'])
        assert (r.exit_status, r.extra["stdout"], r.stderr_tail) == (3, f"{name}\nrelay-e2e\n", "warn\n"), name
        assert t.run(["printenv", "SECRET"], env={"SECRET": "s3 cr3t"}).extra["stdout"] == "s3 cr3t\n"
    c2 = ts["client2"]
    assert c2.run(["sh", "-c", "exit 255"]).exit_status == 255  # the command's own 255 is not a lost host
    work = c2.workdir(tmp_path / "raw", "run1/case1/client2")
    c2.put_text(f"{work}/job.fio", "[job]\nrw=read\n")
    c2.put_file(lab5.client_key.with_suffix(".pub"), f"{work}/key.pub", mode=0o600)
    assert c2.run(["stat", "-c", "%a", f"{work}/key.pub"]).extra["stdout"] == "600\n"
    c2.run(["sh", "-c", f"mkdir -p {work}/out/sub && echo 1 > {work}/out/a && echo 2 > {work}/out/sub/b && "
                        f"ln -s /etc/passwd {work}/out/link"])
    assert c2.fetch(f"{work}/out", tmp_path / "got") and c2.fetch(f"{work}/job.fio", tmp_path / "job.fio")
    assert sorted(p.relative_to(tmp_path / "got").as_posix() for p in (tmp_path / "got").rglob("*")) == \
        ["a", "sub", "sub/b"]  # files and folders only, as SFTP's fetch: the symlink is not followed out
    assert (tmp_path / "job.fio").read_text() == "[job]\nrw=read\n"
    assert not c2.fetch(f"{work}/none", tmp_path / "none") and not (tmp_path / "none").exists()
    assert c2.is_dir(work) and not c2.is_dir(f"{work}/job.fio")
    c2.remove_tree(work)
    assert not lab5.host("client2").path(work).exists()


def test_a_steps_commands_on_every_host_go_together_without_a_thread_a_host(ts, lab5, monkeypatch):
    """run_on_group through relays: every host's command started from the caller's thread and waited for at once;
    the same results as one by one, a lost host is that host's result, an overrun stops every process group."""
    from fsbench.core import workers
    from fsbench.transport.group import run_on_group

    assert run_on_group(ts, ["true"]).ok  # every master up: what follows starts no thread at all
    threads = []
    monkeypatch.setattr(workers.WORKERS, "start", lambda call: threads.append(call) or call())
    argv = {n: ["sh", "-c", f'hostname; echo "$FSBENCH_RUN" >&2; exit {i}'] for i, n in enumerate(ts)}
    got = run_on_group(ts, argv)
    assert threads == []
    assert {n: (r.exit_status, r.extra["stdout"], r.stderr_tail) for n, r in got.results.items()} == \
        {n: (i, f"{n}\n", "relay-e2e\n") for i, n in enumerate(ts)}
    slow = run_on_group(ts, {n: ["sh", "-c", f"sleep 300 & exec sleep {310 + i}"] for i, n in enumerate(ts)},
                        timeout=1)
    assert all(r.timed_out and r.exit_status == -15 and r.duration_s < 8 for r in slow.results.values()), slow
    for i, name in enumerate(ts):  # each host's whole process group stopped, its background child too
        assert _gone_soon(lab5, name, f"sleep {310 + i}") and _gone_soon(lab5, name, "sleep 300"), name
    monkeypatch.undo()
    lab5.host("client3").crash()
    try:
        mixed = run_on_group(ts, ["hostname"])
        assert not mixed["client3"].ok and "client3" in mixed["client3"].stderr_tail, mixed["client3"]
        assert {n: r.extra["stdout"] for n, r in mixed.succeeded().items()} == \
            {n: f"{n}\n" for n in ts if n != "client3"}
    finally:
        lab5.restart("client3")
    assert run_on_group(ts, ["hostname"]).ok  # and it connects again


def test_a_cases_long_commands_start_from_one_thread_stream_and_stop_in_one_step(ts, lab5, tmp_path, monkeypatch):
    """Streams through relays (a case's samplers and servers): each host's output streams into its file while it
    runs, no thread is started, and one stop ends every host's process group, its background child too, with
    a kill command a host sent together: a relay's in one group."""
    from fsbench.api.streams import Stream, Streams
    from fsbench.core import workers
    from fsbench.transport.group import run_on_group
    from fsbench.transport.relay_link import RelayLink

    assert run_on_group(ts, ["true"]).ok  # every master up
    threads, groups = [], []
    monkeypatch.setattr(workers.WORKERS, "start", lambda call: threads.append(call) or call())
    real_group = RelayLink.group
    monkeypatch.setattr(RelayLink, "group", lambda self: groups.append(self) or real_group(self))
    line = 'echo "first $FSBENCH_RUN"; sleep 400 & while :; do sleep 1; done'
    streams = Streams([Stream(n, t, ["sh", "-c", line], tmp_path / f"{n}.out", tmp_path / f"{n}.err")
                       for n, t in ts.items()], timeout=None)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(
            (tmp_path / f"{n}.out").exists() and (tmp_path / f"{n}.out").read_text() for n in ts):
        time.sleep(0.05)
    assert {n: (tmp_path / f"{n}.out").read_text() for n in ts} == {n: "first relay-e2e\n" for n in ts}
    assert all(streams.alive(i) for i in range(len(ts))) and all(streams.result(i) is None for i in range(len(ts)))
    assert streams.ended() == []
    began = time.monotonic()
    assert streams.stop() == [] and time.monotonic() - began < 8
    assert threads == [] and len(groups) == 2  # TERM's kill commands: a group for each of the two relays
    assert sorted(streams.ended()) == list(range(len(ts)))
    results = [streams.result(i) for i in range(len(ts))]
    assert all(r is not None and r.interrupted and r.exit_status == -15 for r in results), results
    for name in ts:
        assert _gone_soon(lab5, name, "sleep 400"), name
    assert streams.stop() == []  # a second stop is the first's


def test_a_timeout_or_a_cancel_stops_the_commands_process_group_on_the_host(ts, lab5):
    for name in ("client1", "client3"):  # a relay host's own command, and one through a master
        t, host = ts[name], lab5.host(name)
        r = t.run(["sh", "-c", "sleep 300 & exec sleep 301"], timeout=1)
        assert r.timed_out and r.exit_status == -15 and r.duration_s < 5, (name, r)
        cancel = Cancel()
        threading.Timer(0.5, cancel.set).start()
        r = t.run(["sleep", "302"], cancel=cancel)
        assert r.interrupted and r.duration_s < 5, (name, r)
        deadline = time.monotonic() + 5
        while any("sleep 30" in _cmdline(p) for p in host.pids()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in host.pids() if "sleep 30" in _cmdline(p)], name


def test_a_host_lost_behind_a_relay_is_named_and_the_next_command_says_it_cannot_connect(ts, lab5):
    t = ts["client3"]
    assert t.run(["true"]).ok
    got: dict = {}
    runner = threading.Thread(target=lambda: got.setdefault("r", t.run(["sleep", "60"], timeout=90)))
    runner.start()
    time.sleep(1.0)
    lab5.host("client3").crash()
    runner.join(timeout=30)
    r = got["r"]
    assert r.exit_status is None and r.duration_s < 20
    assert r.extra["lost"].startswith(f"{lab5.host('client3').address}:{lab5.port}: the connection was lost")
    assert "reached through the relay on client1: the connection was lost" in r.stderr_tail, r.stderr_tail
    with pytest.raises(ConnectError) as exc:
        t.run(["true"])
    assert "client3" in str(exc.value) and "cannot connect from the relay on client1" in str(exc.value)
    assert ts["client2"].run(["true"]).ok  # the relay's other host goes on
    lab5.restart("client3")
    assert t.run(["hostname"]).extra["stdout"] == "client3\n"  # and the lost one connects again


def test_a_lost_relay_takes_its_hosts_with_it_and_a_later_command_starts_it_again(ts, lab5):
    behind, relay = ts["client5"], ts["client4"]
    got: dict = {}
    runners = [threading.Thread(target=lambda: got.setdefault("behind", behind.run(["sleep", "60"], timeout=90))),
               threading.Thread(target=lambda: got.setdefault("relay", relay.run(["sleep", "61"], timeout=90)))]
    for t in runners:
        t.start()
    # both run before the relay goes (client5's master may take a second or more to log in on a busy machine)
    assert _seen_soon(lab5, "client5", "sleep 60") and _seen_soon(lab5, "client4", "sleep 61")
    lab5.host("client4").crash()  # its sshd: the relay's program, its masters and its own commands must end
    for t in runners:
        t.join(timeout=30)
    for key in ("behind", "relay"):
        r = got[key]
        assert r.exit_status is None and r.extra.get("lost"), (key, r)
    # nothing of the run outlives the relay's session: not its program, nor its own command, nor client5's
    assert _gone_soon(lab5, "client4", "sleep 61") and _gone_soon(lab5, "client4", "agent.py")
    assert _gone_soon(lab5, "client5", "sleep 60")
    lab5.restart("client4")
    assert behind.run(["hostname"]).extra["stdout"] == "client5\n"
    assert relay.run(["hostname"]).extra["stdout"] == "client4\n"


def test_a_relay_whose_program_died_still_has_its_folder_removed_at_the_end(ts, lab5):
    """Its program killed on the relay host (not the host): the relay's hosts' commands are lost, and closing the
    transports still removes the folder it made (the fixture checks, on every relay host)."""
    assert ts["client2"].run(["true"]).ok
    host = lab5.host("client1")
    for pid in [p for p in host.pids() if "agent.py" in _cmdline(p)]:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while (r := ts["client2"].run(["true"], timeout=5)).ok and time.monotonic() < deadline:
        time.sleep(0.2)  # the first commands may still be answered before the channel's end is seen
    assert r.extra.get("lost") or not r.ok, r
    assert list(host.path(f"/tmp/fsbench-{lab5.user}").glob("relay-*"))  # there until the end


def test_without_an_ssh_agent_the_relays_use_one_of_the_runs_own_gone_once_they_close(lab5, tmp_path, monkeypatch):
    """A controller with the hosts' key file but no ssh-agent (a CI runner, a cron job): fsbench starts an agent
    of its own for its relays, holding the inventory's key, and ends it when the last relay closes: its process,
    its socket's folder and SSH_AUTH_SOCK gone again. (Its refusals: tests/unit/test_run_agent.py.)"""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    made = transports(lab5, tmp_path)
    try:
        assert made["client2"].run(["true"]).ok and made["client5"].run(["true"]).ok  # behind each relay
        sock = os.environ["SSH_AUTH_SOCK"]
        assert RUN_AGENT.running and Path(sock).parent.name.startswith("fsbench-agent-")
        held = subprocess.run(["ssh-add", "-l"], capture_output=True, text=True, timeout=30).stdout
        fingerprint = subprocess.run(["ssh-keygen", "-lf", str(lab5.client_key)], capture_output=True, text=True).stdout
        assert fingerprint.split()[1] in held, (held, fingerprint)  # the inventory's key, and only it
        assert len(held.splitlines()) == 1
        assert _pids_with(sock), "the run's agent runs with its socket"
    finally:
        for t in made.values():
            t.close()
    assert not RUN_AGENT.running and "SSH_AUTH_SOCK" not in os.environ
    assert not Path(sock).parent.exists() and _pids_with(sock) == []
    assert lab5.wait_clean() == {}


def _pids_with(text: str) -> list[int]:
    """The processes of this machine whose command line holds text."""
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and text in _cmdline(int(p.name))]


def test_an_inventory_says_which_hosts_go_through_relays(lab5, tmp_path):
    path = lab5.write_inventory(tmp_path / "inventory.yaml", transport="ssh-relay")
    assert {s.transport for s in load_inventory(path).values()} == {"ssh-relay"}
    data = yaml.safe_load(path.read_text())
    data["defaults"]["transport"] = "telnet"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(Exception) as exc:
        load_inventory(path)
    assert "ssh-relay" in str(exc.value) and "telnet" in str(exc.value)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _seen_soon(lab: MultiHostLab, name: str, text: str, seconds: float = 20) -> bool:
    """A process of the host whose command line holds text, within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if [p for p in lab.host(name).pids() if text in _cmdline(p)]:
            return True
        time.sleep(0.05)
    return False


def _gone_soon(lab: MultiHostLab, name: str, text: str) -> bool:
    """No process of the host whose command line holds text within a few seconds (a session's end sets off the
    dead man's switch of what it started)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not [p for p in lab.host(name).pids() if text in _cmdline(p)]:
            return True
        time.sleep(0.1)
    return False


def test_a_relays_start_removes_only_the_folders_of_relays_proven_gone(lab5, agent, tmp_path):
    """A controller killed before it removed its relay's folder leaves it: the next relay on that host removes it,
    since its `lock` is there and free. A folder whose lock a live program holds, one without a program or a lock
    (not proven
    a relay's) and a symlink stay."""
    base = lab5.host("client1").path(f"/tmp/fsbench-{lab5.user}")
    folders = {name: base / name for name in ("relay-gone", "relay-live", "relay-nolock", "relay-noprogram")}
    for name, path in folders.items():
        path.mkdir(parents=True, exist_ok=True)
        if name != "relay-noprogram":
            (path / "agent.py").write_text("# a relay's program\n")
    (folders["relay-noprogram"] / "lock").write_text("")
    (folders["relay-gone"] / "lock").write_text("")
    (folders["relay-live"] / "lock").write_text("")
    (base / "relay-link").symlink_to(tmp_path)
    holder = subprocess.Popen(["flock", str(folders["relay-live"] / "lock"), "sleep", "60"])
    try:
        time.sleep(0.3)  # it holds the lock
        made = transports(lab5, tmp_path)
        try:
            assert made["client2"].run(["true"]).ok  # client1's relay starts
        finally:
            for t in made.values():
                t.close()
        assert not folders["relay-gone"].exists()
        assert folders["relay-live"].exists() and folders["relay-nolock"].exists() and (base / "relay-link").is_symlink()
        assert folders["relay-noprogram"].exists()
        assert list(tmp_path.iterdir())  # nothing followed through the symlink
    finally:
        holder.kill()
        holder.wait()
        for name in ("relay-live", "relay-nolock", "relay-noprogram"):
            shutil.rmtree(folders[name], ignore_errors=True)
        (base / "relay-link").unlink(missing_ok=True)


def test_a_killed_controller_leaves_nothing_running_through_its_relays_and_the_next_relay_sweeps_its_folder(lab5, agent,
                                                                                                   tmp_path):
    """fsbench SIGKILLed while fio's servers and the samplers run on the five hosts (two through relays'
    masters, one relay host's own): every process the run started ends by itself (the relays' programs lose
    their input or their session, the hosts' sessions end, each dead man's switch fires), and the next relay on
    those hosts removes the relays' folders (their locks are free). (`--resume` after a kill: test_hardening.)"""
    require("fio")
    inventory = lab5.write_inventory(tmp_path / "inventory.yaml", transport="ssh-relay")
    scenario = tmp_path / "killed.yaml"
    scenario.write_text(f"""\
name: relay-killed
targets:
  shared: {{path: {lab5.root}/shared-killed, hosts: [clients], setup: ["mkdir -p ${{target.path}}"],
           teardown: ["rm -rf ${{target.path}}"]}}
workloads:
  long: {{tool: fio, options: {{rw: write, bs: 64k, size: 4m, ioengine: psync, time_based: true, runtime: 3}}}}
""")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "--inventory", str(inventory),
                             "-o", str(out), "--no-report", "--progress", "none"], env={**os.environ, "PYTHONPATH":
                            str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while len(list(out.glob("*/raw/shared__long__r1/*/server-command"))) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = [_seen_soon(lab5, h.name, "fio", seconds=30) for h in lab5.hosts]  # the five fio servers run
    time.sleep(1.0)  # and their jobs have begun
    running = {h.name: [p for p in h.pids() if "fio" in _cmdline(p)] for h in lab5.hosts}
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert all(seen) and all(running.values()), running  # fio ran on every host when fsbench was killed
    assert lab5.wait_clean(timeout=20) == {}  # and nothing of the run runs anywhere now
    relays = [lab5.host(n).path(f"/tmp/fsbench-{lab5.user}") for n in ("client1", "client4")]
    killed = [{p.name for p in base.glob("relay-*")} for base in relays]
    assert all(killed), killed  # the relays' folders are what a kill leaves
    made = transports(lab5, tmp_path)
    try:
        assert made["client2"].run(["true"]).ok and made["client5"].run(["true"]).ok  # both relays start again
        now = [{p.name for p in base.glob("relay-*")} for base in relays]
        assert all(len(n) == 1 and not n & k for n, k in zip(now, killed, strict=True)), (now, killed)
    finally:
        for t in made.values():
            t.close()
    assert not any(list(base.glob("relay-*")) for base in relays)
    assert lab5.wait_clean() == {}
