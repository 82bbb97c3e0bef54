"""SSHTransport, run_on_group and inventories against a real sshd on 127.0.0.2-127.0.0.5 (tests/sshlab.py)."""

from __future__ import annotations

import logging
import resource
import secrets
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from fsbench.api.transport import TAIL_BYTES, Transport, work_name
from fsbench.core.errors import CommandResult, ScenarioError
from fsbench.core.inventory import HostSpec, load_inventory
from fsbench.transport.errors import AuthError, HostKeyError, TransferError
from fsbench.transport.group import GroupFailed, run_on_group
from fsbench.transport.hosts import transports_for
from fsbench.transport.ssh import SSHTransport
from tests.conftest import require
from tests.sshlab import make_key, sshlab, write_known_hosts

pytestmark = pytest.mark.e2e


def unique_seconds() -> str:
    """A sleep length no other test (or test run on this machine) uses, so pgrep finds only ours."""
    return str(1_000_000 + secrets.randbelow(9_000_000))


def strays(pattern: str, wait: float = 10.0) -> list[str]:
    """Processes whose command line matches pattern, after giving dying ones `wait` seconds to go."""
    deadline = time.monotonic() + wait
    while True:
        out = subprocess.run(["pgrep", "-af", pattern], check=False, capture_output=True, text=True, timeout=30).stdout
        if not out.strip() or time.monotonic() > deadline:
            return out.splitlines()
        time.sleep(0.1)


@pytest.fixture
def opened(lab):
    """Transports to close at the end of the test (before the lab stops)."""
    made: list = []
    yield made
    for t in made:
        t.close()


def connect(lab, opened, address: str | None = None, **settings) -> SSHTransport:
    t = lab.transport(address, **settings)
    opened.append(t)
    return t


def test_run_gives_exit_status_stdout_stderr_cwd_and_env(lab, opened):
    t = connect(lab, opened, "127.0.0.3")
    assert isinstance(t, Transport)
    r = t.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=60)
    assert (r.exit_status, r.stdout_tail, r.stderr_tail, r.extra["stdout"]) == (3, "out\n", "err\n", "out\n")
    assert r.host == "127.0.0.3" and not r.ok and not r.timed_out and r.duration_s > 0
    weird = "a b'c\"$HOME;`id`"
    r = t.run(["sh", "-c", 'pwd; printf "%s\\n" "$FOO" "$1"', "sh", weird], cwd=str(lab.root), env={"FOO": weird})
    assert r.ok and r.stdout_tail == f"{lab.root}\n{weird}\n{weird}\n"
    assert t.run(["echo", "$HOME", ";", "`id`"]).stdout_tail == "$HOME ; `id`\n"


def test_the_private_folder_for_a_commands_environment_is_made_once_and_again_when_it_went(lab, opened, tmp_path,
                                                                                         monkeypatch):
    base = tmp_path / "base"
    t = connect(lab, opened, "127.0.0.3", remote_base=str(base))
    made: list[list[str]] = []
    execute = t.execute

    def counting(argv, **kw):
        made.extend([argv] if argv[:1] == ["mkdir"] else [])
        return execute(argv, **kw)

    monkeypatch.setattr(t, "execute", counting)
    for value in ("one", "two", "three"):
        assert t.run(["sh", "-c", 'printf %s "$FOO"'], env={"FOO": value}).stdout_tail == value
    assert len(made) == 1 and (base.stat().st_mode & 0o777) == 0o700
    assert list(base.iterdir()) == []  # each environment file removed by its command
    base.rmdir()  # as a host that rebooted would lose it
    assert t.run(["sh", "-c", 'printf %s "$FOO"'], env={"FOO": "four"}).stdout_tail == "four"
    assert len(made) == 2 and (base.stat().st_mode & 0o777) == 0o700


def test_a_failing_command_is_a_result_not_an_exception(lab, opened):
    t = connect(lab, opened)
    assert t.run(["false"]).exit_status == 1
    r = t.run(["no-such-command-fsbench"])
    assert r.exit_status == 127 and "not found" in r.stderr_tail
    assert "127.0.0.2" in r.describe() and "exit status 127" in r.describe()
    r = t.run(["true"], cwd="/no/such/dir")
    assert r.exit_status == 127 and "/no/such/dir" in r.stderr_tail  # as locally: cannot start


def test_timeout_kills_the_remote_process_group(lab, opened):
    t = connect(lab, opened)
    a, b = unique_seconds(), unique_seconds()
    r = t.run(["sh", "-c", f"sleep {a} & sleep {b}; echo never"], timeout=1)
    assert r.timed_out and not r.ok and r.exit_status == -15 and "never" not in r.stdout_tail
    assert r.stderr_tail == ""  # the wrapper's own lines are not the tool's stderr
    assert r.duration_s < 20
    assert strays(f"sleep ({a}|{b})") == []


def test_a_process_that_ignores_term_gets_kill(lab, opened):
    t = connect(lab, opened)
    n = unique_seconds()
    # 3 s, not 1: the TERM must come after the shell's `trap '' TERM` has run, which a loaded machine can delay
    r = t.run(["sh", "-c", f"trap '' TERM; sleep {n}"], timeout=3)
    assert r.timed_out and r.exit_status == -9
    assert strays(f"sleep {n}") == []


def test_cancel_event_stops_the_remote_process(lab, opened):
    t = connect(lab, opened)
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    n = unique_seconds()
    r = t.run(["sh", "-c", f"sleep {n} & wait"], timeout=120, cancel=cancel)
    assert r.interrupted and not r.timed_out and r.duration_s < 60
    assert strays(f"sleep {n}") == []


def test_large_output_streams_to_files_in_chunks(lab, opened, tmp_path):
    t = connect(lab, opened)
    size = 50_000_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = t.run(["sh", "-c", f"head -c {size} /dev/zero; echo done >&2"], timeout=300,
              stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.ok, r.describe()
    assert (tmp_path / "out").stat().st_size == size and (tmp_path / "err").read_text() == "done\n"
    assert "stdout" not in r.extra and len(r.stdout_tail) == TAIL_BYTES and r.stderr_tail == "done\n"
    assert grown_mib < 30, f"memory grew by {grown_mib:.0f} MiB: output was held in memory"


def test_sftp_put_text_and_fetch(lab, opened, tmp_path):
    t = connect(lab, opened, "127.0.0.4")
    remote = lab.root / "remote"
    remote.mkdir()
    text = "[job]\nrw=write ÄÖ €\n" * 10_000
    t.put_text(f"{remote}/job.fio", text)
    assert t.fetch(f"{remote}/job.fio", tmp_path / "got" / "job.fio")
    assert (tmp_path / "got" / "job.fio").read_text() == text
    assert t.fetch(f"{remote}/missing", tmp_path / "missing") is False and not (tmp_path / "missing").exists()
    with pytest.raises(TransferError, match=r"127\.0\.0\.4 .*cannot write /no/such/dir/x"):
        t.put_text("/no/such/dir/x", "x")


def test_makedirs_remove_tree_is_dir_and_workdir(lab, opened, tmp_path):
    t = connect(lab, opened)
    nasty = lab.root / "remote" / "a b" / "x; touch PWNED" / "c'd"
    t.makedirs(str(nasty))
    assert nasty.is_dir() and t.is_dir(str(nasty)) and not t.is_dir(str(nasty / "nope"))
    (nasty / "file").write_text("x")
    t.remove_tree(str(lab.root / "remote" / "a b"))
    assert not (lab.root / "remote" / "a b").exists() and not t.is_dir(str(lab.root / "remote" / "a b"))
    t.remove_tree(str(lab.root / "remote" / "never-there"))  # missing is fine
    assert not list(Path.cwd().glob("PWNED")) and not list(lab.root.rglob("PWNED"))

    base = lab.root / "work-base"
    t2 = connect(lab, opened, remote_base=str(base))
    raw = tmp_path / "reports" / "run-1" / "raw" / "case-a" / "127.0.0.2"
    name = work_name("run-1", "case-a", "127.0.0.2")  # the runner names it; the transport reads no raw path
    work = t2.workdir(raw, name)
    assert work == f"{base}/run-1/case-a/127.0.0.2" and Path(work).is_dir() and raw.is_dir()
    assert oct(base.stat().st_mode & 0o777) == "0o700"
    (Path(work) / "stale").write_text("from an earlier attempt")
    assert t2.workdir(raw, name) == work and list(Path(work).iterdir()) == []
    assert t2.workdir(tmp_path / "elsewhere", work_name("run-1", "../x", ".")) == f"{base}/run-1/.._x/_."
    assert t.remote_base == f"/tmp/fsbench-{lab.user}"


def test_one_connection_is_reused_for_every_call(lab, opened, tmp_path):
    t = connect(lab, opened)
    first = t.connection()
    results: list[CommandResult] = []
    threads = [threading.Thread(target=lambda: results.append(t.run(["echo", "hi"]))) for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    for i in range(5):
        assert t.run(["echo", str(i)]).stdout_tail == f"{i}\n"
    t.put_text(f"{lab.root}/f", "x")
    assert t.fetch(f"{lab.root}/f", tmp_path / "f")
    assert len(results) == 12 and all(r.ok for r in results)
    assert t.connection() is first and t.connects == 1 and lab.accepted_logins() == 1


def test_group_fan_out_reports_every_host_including_an_unreachable_one(lab, opened):
    hosts = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.9"]  # nothing listens on .9
    transports = {h: connect(lab, opened, h) for h in hosts}
    group = run_on_group(transports, ["sh", "-c", "echo $SSH_CONNECTION"], timeout=60, max_workers=4)
    assert list(group) == hosts and not group.ok
    for h in hosts[:3]:
        assert group[h].ok and f"{h} {lab.port}" in group[h].stdout_tail
    bad = group.failed()
    assert list(bad) == ["127.0.0.9"] and bad["127.0.0.9"].exit_status is None
    assert "127.0.0.9:" in bad["127.0.0.9"].stderr_tail and "cannot connect" in bad["127.0.0.9"].stderr_tail
    with pytest.raises(GroupFailed) as info:
        group.raise_if_failed("echo")
    assert info.value.group is group and "failed on 1 of 4 hosts (127.0.0.9)" in str(info.value)

    per_host = run_on_group({h: transports[h] for h in hosts[:3]}, {h: ["echo", h] for h in hosts[:3]})
    assert per_host.ok and [per_host[h].stdout_tail for h in hosts[:3]] == [f"{h}\n" for h in hosts[:3]]
    per_host.raise_if_failed()


def _server_fingerprint(lab) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", f"{lab.host_key}.pub"], capture_output=True, text=True,
                         check=True, timeout=30).stdout
    return out.split()[1]


def test_a_changed_host_key_is_refused_before_any_command(lab, opened, tmp_path):
    other = make_key(tmp_path / "impostor")
    known = write_known_hosts(tmp_path / "known_hosts", lab.addresses, lab.port, Path(f"{other}.pub"))
    t = connect(lab, opened, "127.0.0.3", name="web1", known_hosts=str(known))
    marker = tmp_path / "ran"
    with pytest.raises(HostKeyError) as info:
        t.run(["touch", str(marker)])
    text = str(info.value)
    assert "web1" in text and f"127.0.0.3:{lab.port}" in text and "CHANGED" in text
    assert _server_fingerprint(lab) in text and info.value.fingerprint.endswith(_server_fingerprint(lab))
    assert f"ssh-keyscan -p {lab.port} -t ed25519 127.0.0.3 >> {known}" in text
    assert not marker.exists() and lab.accepted_logins() == 0


def test_an_unknown_host_is_refused_and_the_hint_fixes_it(lab, opened, tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    t = connect(lab, opened, "127.0.0.5", name="db1", known_hosts=str(known))
    with pytest.raises(HostKeyError) as info:
        t.run(["true"])
    text = str(info.value)
    assert "db1" in text and "not known" in text and _server_fingerprint(lab) in text
    command = f"ssh-keyscan -p {lab.port} -t ed25519 127.0.0.5 >> {known}"
    assert command in text and lab.accepted_logins() == 0
    subprocess.run(command, shell=True, check=True, capture_output=True, timeout=60)
    assert t.run(["true"]).ok


def test_a_wrong_client_key_is_an_auth_error_naming_host_and_key(lab, opened, tmp_path):
    wrong = make_key(tmp_path / "not-authorized")
    t = connect(lab, opened, "127.0.0.2", name="client7", key_file=str(wrong))
    with pytest.raises(AuthError) as info:
        t.run(["true"])
    assert "client7" in str(info.value) and str(wrong) in str(info.value) and "authorized_keys" in str(info.value)
    t2 = connect(lab, opened, "127.0.0.2", name="client8", key_file=str(tmp_path / "no-such-key"))
    with pytest.raises(AuthError, match="client8 .*no-such-key does not exist"):
        t2.run(["true"])


def test_an_sshd_killed_mid_command_fails_only_that_host(lab, opened, tmp_path):
    n = unique_seconds()
    with sshlab(tmp_path / "lab2", addresses=["127.0.0.6"]) as doomed:
        transports = {h: connect(lab, opened, h) for h in lab.addresses[:3]}
        victim = doomed.transport("127.0.0.6", name="victim")
        opened.append(victim)
        transports["victim"] = victim
        for t in transports.values():
            t.connection()  # connected before the crash, so the crash hits a running command

        def crash_when_running() -> None:
            deadline = time.monotonic() + 60
            while not strays(f"sleep {n}", wait=0) and time.monotonic() < deadline:
                time.sleep(0.05)
            doomed.crash()

        killer = threading.Thread(target=crash_when_running)
        killer.start()
        argv = {h: ["sh", "-c", "sleep 1; echo done"] for h in lab.addresses[:3]}
        group = run_on_group(transports, {**argv, "victim": ["sleep", n]}, timeout=120)
        killer.join(60)
        assert list(group.failed()) == ["victim"]
        assert all(group[h].stdout_tail == "done\n" for h in lab.addresses[:3])
        lost = group["victim"]
        assert lost.exit_status is None and not lost.timed_out
        assert "connection to victim (127.0.0.6:" in lost.stderr_tail and "lost" in lost.stderr_tail
    assert strays(f"sleep {n}") == []


def test_ssh_config_alias_and_proxy_jump_are_honoured(lab, opened, tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text(f"""\
Host benchbox
    HostName 127.0.0.4
    Port {lab.port}
    User {lab.user}
    IdentityFile {lab.client_key}
    UserKnownHostsFile {lab.known_hosts}
Host behind
    HostName 127.0.0.5
    ProxyJump benchbox
    Port {lab.port}
    IdentityFile {lab.client_key}
    UserKnownHostsFile {lab.known_hosts}
""")
    t = SSHTransport(HostSpec(name="benchbox"), ssh_config=config, user_known_hosts=None)
    opened.append(t)
    r = t.run(["sh", "-c", "echo $SSH_CONNECTION"])
    assert r.ok and r.stdout_tail.split()[2:] == ["127.0.0.4", str(lab.port)]
    assert (t.settings.address, t.settings.port, t.settings.user) == ("127.0.0.4", lab.port, lab.user)

    inner = SSHTransport(HostSpec(name="behind"), ssh_config=config, user_known_hosts=None)
    opened.append(inner)
    r = inner.run(["sh", "-c", "echo $SSH_CONNECTION"])
    assert r.ok and r.stdout_tail.split()[2:] == ["127.0.0.5", str(lab.port)]
    assert type(inner.connection().sock).__name__ == "Channel"  # tunnelled, not a TCP socket of ours
    assert inner.jump_host is not None and inner.jump_host.settings.address == "127.0.0.4"


def test_jump_host_from_an_inventory(lab, opened, tmp_path):
    inv = tmp_path / "hosts.yaml"
    inv.write_text(f"""\
defaults:
  port: {lab.port}
  user: {lab.user}
  key_file: {lab.client_key}
  known_hosts: {lab.known_hosts}
hosts:
  gw: {{address: 127.0.0.2}}
  inner: {{address: 127.0.0.3, jump: gw, groups: [clients], slots: 4}}
""")
    transports = transports_for(load_inventory(inv), ["inner"], ssh_config=None, user_known_hosts=None)
    opened.extend(transports.values())
    assert transports["inner"].run(["true"]).ok
    assert type(transports["inner"].connection().sock).__name__ == "Channel"
    assert transports["inner"].jump_host.host == "gw" and lab.accepted_logins() == 2


def test_sudo_prefix_runs_commands_and_kills_through_sudo(lab, opened, tmp_path):
    require("sudo")
    t = connect(lab, opened, sudo=True, remote_base=str(lab.root / "base"))
    r = t.run(["sh", "-c", 'echo "$SUDO_USER:$(id -u)"'])
    assert r.ok and r.stdout_tail == f"{lab.user}:0\n"
    work = t.workdir(tmp_path / "run" / "raw" / "case" / "host", work_name("run", "case", "host"))
    t.put_text(f"{work}/job", "from sftp")
    assert t.run(["cat", "job"], cwd=work).stdout_tail == "from sftp"
    n = unique_seconds()
    r = t.run(["sleep", n], timeout=1)
    assert r.timed_out and strays(f"sleep {n}") == []


def test_a_password_from_the_environment_never_shows(lab, opened, tmp_path, monkeypatch, caplog):
    secret = f"pw-{uuid.uuid4().hex}"
    monkeypatch.setenv("FSB_TEST_PW", secret)
    caplog.set_level(logging.DEBUG)
    good = connect(lab, opened, name="pw-good", password_env="FSB_TEST_PW")
    assert good.run(["true"]).ok
    wrong = make_key(tmp_path / "wrong")
    bad = connect(lab, opened, name="pw-bad", password_env="FSB_TEST_PW", key_file=str(wrong))
    with pytest.raises(AuthError) as info:
        bad.run(["true"])
    assert "password from $FSB_TEST_PW" in str(info.value)
    assert "Failed password for" in lab.log.read_text()  # the password really was sent, and refused
    seen = [repr(good.spec), str(good.spec), repr(good), repr(bad), str(info.value), repr(info.value),
            caplog.text, repr(vars(good)), repr(vars(bad)), lab.log.read_text()]
    assert not [s for s in seen if secret in s]
    assert getattr(good.connection().auth_handler, "password", None) is None


def test_inventory_errors_name_file_line_and_key_path(tmp_path):
    bad = tmp_path / "hosts.yaml"
    bad.write_text("""\
defaults:
  user: bench
hosts:
  web1:
    address: 10.0.0.1
    port: "abc"
  web2:
    adress: 10.0.0.2
  web3:
    password: hunter2
  web4:
    jump: nowhere
""")
    with pytest.raises(ScenarioError) as info:
        load_inventory(bad)
    text = str(info.value)
    assert f"{bad}:6: hosts.web1.port: expected a TCP port number" in text
    assert f"{bad}:8: hosts.web2.adress: unknown key 'adress'" in text and "did you mean 'address'" in text
    assert f"{bad}:10: hosts.web3.password: passwords are not read from files" in text and "password_env" in text
    assert f"{bad}:12: hosts.web4.jump: jump host 'nowhere'" in text
    assert "hunter2" not in text

    good = tmp_path / "ok.yaml"
    good.write_text("defaults: {key_file: keys/id, sudo: true}\nhosts:\n  a: {groups: [x], slots: 2}\n"
                    "  b: {address: 10.1.1.1, port: 2222, sudo: false}\n")
    hosts = load_inventory(good)
    assert hosts["a"] == HostSpec(name="a", key_file=str(tmp_path / "keys/id"), groups=("x",), slots=2, sudo=True)
    assert (hosts["b"].target, hosts["b"].port, hosts["b"].sudo) == ("10.1.1.1", 2222, False)
    with pytest.raises(ScenarioError, match=r"yaml:2: .*loop"):
        (tmp_path / "loop.yaml").write_text("hosts:\n  a: {jump: b}\n  b: {jump: a}\n")
        load_inventory(tmp_path / "loop.yaml")
