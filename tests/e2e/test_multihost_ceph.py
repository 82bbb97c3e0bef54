"""Seed 004 across hosts: the ceph-lab service on ceph1, CephFS and RBD mounted by client1 and client2, each in
its own mount namespace (tests/mhlab.py on 127.0.29.N: a lab of this module's own).

The scenario runs once (module fixture) with configs/inventory-cephfs-vs-rbd.example.yaml, its addresses and
keys replaced by the lab's; the tests then check what each host did and that nothing of it is left."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import require
from tests.mhlab import LabWatcher, MultiHostLab, lab_inventory, run_on_lab, start_multihost
from tests.paths import REPO

NET = "127.0.29"  # this module's lab; test_multihost_campaigns.py's is on 127.0.28
LAYOUT = [("ceph1", "ceph"), ("client1", "ceph-clients"), ("client2", "ceph-clients")]
CLIENTS = ("client1", "client2")
EXAMPLE = REPO / "configs" / "inventory-cephfs-vs-rbd.example.yaml"
SCENARIO = REPO / "scenarios" / "cephfs-vs-rbd.yaml"
DAEMONS = {"ceph-mon", "ceph-mgr", "ceph-osd", "ceph-mds"}
CLIENT_PROCS = {"ceph-fuse", "rbd-fuse", "fio", "mdtest", "orted"}
TARGETS = ("rbd-ssd", "cephfs-ssd")


@pytest.fixture(scope="module")
def cephlab(tmp_path_factory) -> Iterator[MultiHostLab]:
    """ceph1 and client1-2 for this module; at the end every namespace is emptied and every sshd stopped."""
    for tool in ("/usr/sbin/sshd", "unshare", "nsenter", "ssh", "ceph-mon", "ceph-mgr", "ceph-osd", "ceph-mds",
                 "ceph-fuse", "rbd-fuse", "rbd", "losetup", "fio", "mdtest", "mpirun"):
        require(tool)
    assert Path("/dev/fuse").exists() and os.geteuid() == 0, "FUSE mounts and loop devices need root"
    lab = start_multihost(tmp_path_factory.mktemp("cephlab"), LAYOUT, net=NET)
    try:
        yield lab
    finally:
        lab.stop()
        assert not any(h.proc.poll() is None for h in lab.hosts), "a lab sshd outlived the module"


def trimmed(path: Path) -> Path:
    """cephfs-vs-rbd with its layout (the lab on `ceph`, every target on `ceph-clients`) and less work: the SSD
    pair of its four variants (one memstore OSD), fewer mdtest items and one fio workload at one thread count.
    Each client path (ceph-fuse, rbd-fuse + loop + ext4) and each tool still runs on the clients."""
    sc = yaml.safe_load(SCENARIO.read_text())
    for name in ("rbd-hdd", "cephfs-hdd"):
        del sc["targets"][name]
    sc["services"]["ceph"]["ceph-lab"] = {"osds": [{"store": "memstore", "size": "1g", "class": "ssd"}],
                                          "subnet": "127.0.129"}  # not the machine's labs' 127.0.10
    sc["variables"]["rbd_image_size"] = "256m"
    for name in ("seq-read-128k", "rand-write-4k", "rand-read-4k"):
        del sc["workloads"][name]
    sc["workloads"]["mdtest"]["options"].update(n=5, i=1)  # tasks: 1, as the seed: RBD is one ext4 per client
    sc["workloads"]["seq-write-128k"]["sweep"]["product"]["numjobs"] = [2]
    sc["report"]["views"] = [v for v in sc["report"]["views"] if v["workload"] in sc["workloads"]]
    sc["monitor"]["processes"] = sorted(DAEMONS)  # the lab's daemons: the run's own, in the monitor's figures
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def ceph_run(cephlab, tmp_path_factory):
    """cephfs-vs-rbd at smoke scale, trimmed, on ceph1 + client1-2: (process, run dir, watcher)."""
    folder = tmp_path_factory.mktemp("cephfs-vs-rbd")
    inventory = lab_inventory(cephlab, folder / "inventory.yaml", EXAMPLE)
    scenario = trimmed(folder / "cephfs-vs-rbd.yaml")
    return run_on_lab(cephlab, scenario, inventory, folder, LabWatcher(cephlab, DAEMONS | CLIENT_PROCS))


def test_cephfs_and_rbd_run_on_both_clients_of_the_lab_on_ceph1(ceph_run):
    proc, run, _ = ceph_run
    assert proc.returncode == 0, proc.stderr[-4000:]
    cases = pd.read_csv(run / "cases.csv", keep_default_na=False)
    assert (cases.status == "ok").all(), cases[cases.status != "ok"][["case_id", "reason"]].to_string()
    assert set(cases.target) == set(TARGETS)
    assert set(cases.hosts) == {"client1 client2"}
    # fio per client beside `all`, on both kinds
    rows = pd.read_csv(run / "results.csv", keep_default_na=False)
    for target in TARGETS:
        fio = rows[(rows.tool == "fio") & (rows.metric == "bandwidth") & (rows.target == target)]
        assert set(fio.host) == {*CLIENTS, "all"}, (target, set(fio.host))
        assert (fio.value.astype(float) > 0).all(), fio.to_string()
    assert "ceph1" not in set(rows[rows.tool.isin(["fio", "mdtest"])].host)  # (its monitor rows are there)
    # the daemons the run started on ceph1 are measured as the run's, never as other users' processes (issue 33)
    daemons = rows[(rows.tool == "monitor") & (rows.operation == "process") & (rows.host == "ceph1")]
    assert set(daemons.job) >= DAEMONS, sorted(set(daemons.job))
    assert not [w for w in rows.get("warnings", []) if "none started by this run" in w]
    # fio on both clients; mdtest's one rank (the seed's -np 1) on client1, and the run says so
    placed = pd.read_csv(run / "placement.csv", keep_default_na=False)
    for target in TARGETS:
        md = placed[placed.case_id == f"{target}__mdtest__r1"].set_index("host").runs
        assert md.to_dict() == {"client1": "rank 0", "client2": "none"}, placed.to_string()
        fio = placed[placed.case_id == f"{target}__seq-write-128k__numjobs=2__r1"].set_index("host").runs
        assert set(fio.index) == set(CLIENTS) and "none" not in set(fio), placed.to_string()
    assert "workloads.mdtest" in proc.stderr and "client2" in proc.stderr
    # each client says how it reached each target: its own ceph-fuse, its own rbd-fuse + loop device
    hosts = pd.read_csv(run / "hosts.csv", keep_default_na=False).set_index("host")
    for client in CLIENTS:
        assert "via ceph-fuse" in hosts.loc[client, "mount_cephfs-ssd"], hosts.loc[client].to_dict()
        assert "via rbd-fuse+loop /dev/loop" in hosts.loc[client, "mount_rbd-ssd"], hosts.loc[client].to_dict()


def test_each_host_did_its_part_in_its_own_namespace(ceph_run):
    _, _, watched = ceph_run
    assert watched.procs["ceph1"] >= DAEMONS, watched.procs
    assert not watched.procs["ceph1"] & {"ceph-fuse", "rbd-fuse"}
    for client in CLIENTS:
        assert {"ceph-fuse", "rbd-fuse", "fio"} <= watched.procs[client], (client, watched.procs)
        assert not watched.procs[client] & DAEMONS, (client, watched.procs)
        assert {"/mnt/fsbench-rbd-ssd", "/mnt/fsbench-cephfs-ssd"} <= watched.mounts[client], watched.mounts
    assert not {m for m in watched.mounts["ceph1"] if m.startswith("/mnt/")}, watched.mounts
    assert "mdtest" in watched.procs["client1"], watched.procs


def test_nothing_is_left_on_any_host_and_the_ceph_daemons_stopped(ceph_run, cephlab):
    _, run, _ = ceph_run
    assert cephlab.wait_clean(30) == {}  # no mount, FUSE client, fio server or Ceph daemon in any namespace
    # the conf fsbench copied to the clients went with the run's scratch space, on every host
    for h in cephlab.hosts:
        assert [p.name for p in h.path("/mnt").iterdir()] == [], h.name
        assert not h.path(f"/var/tmp/fsbench/{run.name}").exists(), h.name
    loops = subprocess.run(["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True)
    assert run.name not in loops.stdout, loops.stdout
