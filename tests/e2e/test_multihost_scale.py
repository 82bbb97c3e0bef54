"""A campaign on 16 clients of the namespaced lab (tests/mhlab.py, 127.0.28.150 on): fio --client across the
16 (one fio --server each), mdtest under mpirun with a hostfile of the 16 (2 ranks a host), every host's rows
and placement checked, a host whose fio is held to a fiftieth of a CPU named a straggler, nothing left on any host; and what
a run of many hosts does when some do not answer: one at preflight, one lost mid-case (and `--resume`).

The tree the tools share is the lab's folder, which every lab host sees at the same path (as an NFS or a
parallel file system would be)."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import require, run_cli
from tests.cpu_throttle import throttled
from tests.mhlab import MultiHostLab, clients_layout, ssh_agent, start_multihost

CLIENTS = 16
FIRST = 150  # 127.0.28.150-165: no other lab of the suite uses them
NAMES = [f"client{i}" for i in range(1, CLIENTS + 1)]
NOBODY = "127.0.28.199"  # an address of the range where no sshd listens: a host that does not answer
SLOW, SLOW_SHARE = "client7", 0.02  # a slow host: its fio held to a fiftieth of a CPU


@pytest.fixture(scope="module")
def lab16(tmp_path_factory) -> Iterator[MultiHostLab]:
    for tool in ("/usr/sbin/sshd", "unshare", "nsenter", "fio", "mpirun", "mdtest"):
        require(tool)
    lab = start_multihost(tmp_path_factory.mktemp("mhlab16"), clients_layout(CLIENTS), first=FIRST)
    try:
        yield lab
    finally:
        lab.stop()
        assert not any(h.proc.poll() is None for h in lab.hosts), "a lab sshd outlived the module"


MDTEST = f"  mdtest: {{tool: mdtest, options: {{tasks: {CLIENTS}, ppn: 1, I: 2, z: 1, b: 2, u: true}}}}\n"


def campaign(lab: MultiHostLab, folder: Path, extra: str = "", mdtest: str = MDTEST) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "scale.yaml"
    path.write_text(f"""\
name: scale16
{extra}targets:
  shared:
    description: one tree the 16 clients share
    path: {lab.root}/shared-{folder.name}
    hosts: [clients]
    setup: ["mkdir -p ${{target.path}}"]
    teardown: ["rm -rf ${{target.path}}"]
workloads:
  fio-write: {{tool: fio, options: {{rw: write, bs: 4k, size: 16m, ioengine: psync}}}}
{mdtest}""")
    return path


@pytest.fixture(scope="module")
def run16(lab16, tmp_path_factory):
    folder = tmp_path_factory.mktemp("scale16")
    inventory = lab16.write_inventory(folder / "inventory.yaml")
    scenario = campaign(lab16, folder / "sc")
    slow = next(h for h in lab16.hosts if h.name == SLOW)
    began = time.monotonic()
    def fio_on_slow() -> list[int]:  # its fio server and job, caught as they start (every 20 ms)
        return [p for p in slow.pids() if _comm(p) == "fio"]

    with throttled(fio_on_slow, SLOW_SHARE, SLOW, follow=0.02):
        proc = run_cli("run", str(scenario), "--inventory", str(inventory), "-o", str(folder / "out"), "--progress",
                       "plain", timeout=600)
    return proc, Path(proc.stdout.splitlines()[0]) if proc.stdout.strip() else folder, time.monotonic() - began, \
        scenario, inventory


def _comm(pid: int) -> str:
    """A process's name; "" when it ended meanwhile (it may end between the listing and the read)."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_a_campaign_on_16_clients_runs_each_tool_across_all_of_them(run16, lab16):
    proc, run, took, _, _ = run16
    assert proc.returncode == 0, proc.stderr[-4000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all(), cases[["case_id", "status", "reason"]].to_string()
    assert set(cases.hosts) == {" ".join(NAMES)}
    # fio: one server per client, one --client pair per client on the controller, a row per client and `all`
    raw = run / "raw" / "shared__fio-write__r1"
    command = (raw / "controller" / "command").read_text()
    for h in lab16.hosts:
        assert f"--client=ip:{h.address}," in command
        assert (raw / h.name / "server-command").read_text().startswith(f"fio --server=ip:{h.address},")
        assert (raw / h.name / "monitor.txt").stat().st_size > 0  # every host sampled during the case
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio = rows[(rows.tool == "fio") & (rows.metric == "bandwidth")]
    assert set(fio.host) == {*NAMES, "all"} and (fio.value > 0).all()
    # mdtest: 16 ranks under one mpirun, one on each client (ppn: 1), by a hostfile of the 16 addresses
    md = run / "raw" / "shared__mdtest__r1" / "controller"
    assert "-np 16" in (md / "command").read_text() and "--map-by ppr:1:node" in (md / "command").read_text()
    assert [line.split()[0] for line in (md / "hostfile").read_text().splitlines()] == [h.address for h in lab16.hosts]
    assert "16 tasks" in (md / "stdout").read_text()
    placed = pd.read_csv(run / "placement.csv", keep_default_na=False)
    mdtest = placed[placed.workload == "mdtest"].set_index("host").runs.to_dict()
    assert mdtest == {f"client{i}": f"rank {i - 1}" for i in range(1, CLIENTS + 1)}, mdtest
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False)
    assert list(hosts.host) == NAMES and set(hosts.hostname) == set(NAMES)
    # fsbench's own steps of each case, timed
    assert {"side jobs start", "clean-up"} <= set(json.loads((raw / "phases.json").read_text()))
    assert took < 240, took


def test_a_campaign_on_16_clients_reads_as_groups_of_hosts_in_plan_show_and_the_report(run16):
    proc, run, _, scenario, inventory = run16
    assert proc.returncode == 0, proc.stderr[-3000:]
    shown = run_cli("plan", str(scenario), "--inventory", str(inventory), "--show", check=True).stdout
    assert "-- placement (which host runs what, 16 hosts):\n   client1-client16 (16 hosts): 1 rank each\n" in shown
    assert "client1-client16 (16 hosts): a fio server running the job file (1 job) each" in shown
    assert "   client2: " not in shown  # not a line per host
    page = (run / "report.html").read_text()
    table = page.split('id="placement"')[1].split("</table>")[0]
    assert "hosts (16): what each runs" in table and "client1-client16 (16 hosts): 1 rank each" in table
    assert "<th>client2</th>" not in table
    per_host = page.split('class="results per-host"')[1].split("</details>")[0]
    assert "<th>fastest</th><th>slowest</th><th>spread</th><th>stragglers</th>" in per_host, per_host[:2000]
    # the host whose fio was held to a fiftieth of a CPU wrote slowest, and is named a straggler under the table
    notes = per_host.split('class="stragglers"')[1] if 'class="stragglers"' in per_host else ""
    assert f"{SLOW} (" in notes and "worse than the hosts&#39; median" in notes, per_host[-3000:]
    bandwidth = pd.read_csv(run / "results.csv", keep_default_na=False)
    fio = bandwidth[(bandwidth.tool == "fio") & (bandwidth.metric == "bandwidth") & (bandwidth.host != "all")]
    assert fio.set_index("host").value.idxmin() == SLOW
    # the monitors' figures per host group: one row per workload and target for the 16 clients, no column each
    groups = page.split('id="monitor-groups"')[1].split("</section>")[0]
    assert "host CPU (cpu_usage, mean over each case) per host group" in groups
    assert groups.count("<td>clients (16)</td>") >= 2 and "<th>client2</th>" not in groups


def test_a_campaign_on_16_clients_leaves_nothing_on_any_host(run16, lab16):
    proc, run, _, _, _ = run16
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert lab16.wait_clean() == {}
    for h in lab16.hosts:
        assert not h.path(f"/var/tmp/fsbench/{run.name}").exists(), h.name
    assert not (lab16.root / "shared-sc").exists()


def with_a_silent_host(lab: MultiHostLab, path: Path, transport: str | None = None) -> Path:
    """The lab's 16 clients and client17, whose address nothing answers on."""
    lab.write_inventory(path, transport=transport)
    text = path.read_text() + f"  client17:\n    address: {NOBODY}\n    groups:\n    - clients\n"
    path.write_text(text)
    return path


def test_one_client_of_17_that_does_not_answer_refuses_the_run_naming_it(lab16, tmp_path):
    inventory = with_a_silent_host(lab16, tmp_path / "inventory.yaml")
    scenario = campaign(lab16, tmp_path / "sc", mdtest="")
    proc = run_cli("run", str(scenario), "--inventory", str(inventory), "-o", str(tmp_path / "out"), timeout=300)
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert "preflight failed, nothing ran" in proc.stderr and "client17" in proc.stderr and NOBODY in proc.stderr
    assert not any(h in proc.stderr for h in NAMES[1:]), proc.stderr  # only the silent one is named
    assert not (tmp_path / "out").exists()


LOST = "client5"  # a client whose sshd dies while a case runs on the 16, and comes back a moment later
RELAYS = ("client1", "client6", "client11", "client16")  # 17 hosts through relays: groups of 5


def test_with_min_hosts_the_run_goes_on_without_a_silent_client_and_past_one_lost_mid_case(lab16, tmp_path):
    """Failures at scale in one run, every host reached through relays (`transport: ssh-relay`: client1, client6,
    client11 and client16 relay for the others): client17 does not answer at preflight (its relay cannot connect
    to it; left out: min_hosts 16), client5's sshd is killed while the first case runs on the 16 and is back a
    second later (a host that reboots). That case fails naming client5, the run goes on to the next, and
    `--resume` redoes the failed one on the 16. Nothing is left on any host, the relays' folders neither."""
    require("ssh-agent")
    inventory = with_a_silent_host(lab16, tmp_path / "inventory.yaml", transport="ssh-relay")
    # a collector on every host beside each case: through relays its commands start together and stop in one step
    ticks = "collectors:\n  ticks: {kind: command, command: 'echo on ${host.name}; while :; do date +%s; sleep 0.5; done'}\n"
    scenario = campaign(lab16, tmp_path / "sc", extra="settings: {min_hosts: 16}\n" + ticks, mdtest="  fio-long: {tool: fio, "
                        "options: {rw: write, bs: 64k, size: 4m, ioengine: psync, time_based: true, runtime: 5}}\n")
    out = tmp_path / "out"
    crashed = threading.Event()
    seen_relays: dict[str, list[str]] = {}

    def lose_a_client_mid_case() -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if list(out.glob(f"*/raw/shared__fio-long__r1/{LOST}/server-command")):
                for name in RELAYS:  # each relay's folder: its program and a control socket per host behind it
                    seen_relays[name] = sorted(p.name for p in lab16.host(name).path("/tmp").glob("fsbench-*/relay-*/*"))
                time.sleep(2.0)  # the 16 fio servers run their jobs
                lab16.host(LOST).crash()
                crashed.set()
                time.sleep(1.0)
                lab16.restart(LOST)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=lose_a_client_mid_case, daemon=True)
    killer.start()
    with ssh_agent(lab16.client_key) as agent:
        proc = run_cli("run", str(scenario), "--inventory", str(inventory), "-o", str(out), "--no-report",
                       "--progress", "plain", timeout=300, env=agent)
        relays = dict(seen_relays)
        run = Path(proc.stdout.splitlines()[0]) if proc.stdout.strip() else out
        first = (run / "cases.csv").read_text() if (run / "cases.csv").exists() else ""  # before --resume redoes
        resumed = run_cli("run", str(scenario), "--inventory", str(inventory), "--resume", str(run), "--no-report",
                          "--progress", "plain", timeout=300, env=agent)
    killer.join(timeout=60)
    assert crashed.is_set(), proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "left out of the run, not answering at preflight" in proc.stderr and "client17" in proc.stderr
    assert "cannot connect from the relay on client16" in proc.stderr, proc.stderr[-3000:]
    # the relays ran: client1 for client2-5 (control sockets c1-c4), client16 for client17 (it never answered)
    # (no __pycache__: the program writes no byte code on the host)
    program = ["agent.py", "c1", "c2", "c3", "c4", "known_hosts", "lock", "relay_frames.py"]
    assert relays["client1"] == program and relays["client6"] == program, relays
    cases = pd.read_csv(io.StringIO(first), keep_default_na=False).set_index("workload")
    assert set(cases.hosts) == {" ".join(NAMES)}, cases.hosts
    # named by its lost connection, not only through its job file on fio's command line
    reason = cases.loc["fio-long", "reason"]
    assert cases.loc["fio-long", "status"] == "failed" and reason.startswith(f"{LOST} lost while the case ran ("), reason
    assert "the connection was lost" in reason.split("): fio failed")[0], reason
    # the run went on to the other case on the 16: it ran once client5 was back, or failed naming it when it
    # reached client5 before its sshd listened again
    write = cases.loc["fio-write"]
    assert write.status == "ok" or (write.status == "failed" and LOST in write.reason), cases.to_string()
    notes = pd.read_csv(run / "run-warnings.csv", keep_default_na=False)
    assert notes.warning.str.contains("client17").sum() == 1, notes.to_string()
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all() and set(cases.hosts) == {" ".join(NAMES)}, cases.to_string()
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    for workload in ("fio-write", "fio-long"):
        bandwidth = rows[(rows.workload == workload) & (rows.metric == "bandwidth")]
        assert set(bandwidth.host) == {*NAMES, "all"}, (workload, sorted(bandwidth.host))
    for host in NAMES:  # each host's collector ran beside the case, its output kept as it came
        lines = (run / "raw" / "shared__fio-write__r1" / host / "collector-ticks.txt").read_text().splitlines()
        assert lines[0] == f"on {host}" and len(lines) >= 2, (host, lines)
    assert lab16.wait_clean() == {}
    for name in RELAYS:
        assert not list(lab16.host(name).path("/tmp").glob("fsbench-*/relay-*")), name
