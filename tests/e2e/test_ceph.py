"""A real Ceph (Debian's 16.2 packages) on this machine: the ceph-lab service, the cephfs, rbd and
rbd-image target kinds, seed 004's scenario end to end, and a killed run's cluster cleaned by the next.

The session's lab cluster (tests/e2e/labs.py: started once through fsbench's own service kind, not a
script, with the seed scenario's own lab settings) is joined as an existing cluster would be (its conf
path) by the kinds' scenario and by the seed scenario itself (`--set cluster=existing`). Only the killed
run starts a cluster of its own, through `fsbench run`: two clusters per test run. Needs root, /dev/fuse
and loop devices (as in CI); every test checks that nothing of it remains: daemons, FUSE clients,
mounts, loop devices, RBD images, scratch folders.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import run_cli, write_scenario
from tests.e2e.labs import gone, processes_with, require_ceph
from tests.paths import REPO

CEPH = REPO / "scenarios" / "cephfs-vs-rbd.yaml"


def _mounts_under(*prefixes: str) -> list[str]:
    lines = Path("/proc/self/mounts").read_text().splitlines()
    return [line for line in lines if any(line.split()[1].startswith(p) for p in prefixes)]


def _loops_backed_by(text: str) -> list[str]:
    r = subprocess.run(["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True)
    return [line for line in r.stdout.splitlines() if text in line]


def _images(conf: str, pool: str) -> list[str]:
    r = subprocess.run(["rbd", "-c", conf, "ls", pool], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def _nothing_left(marker: str, mounts: tuple[str, ...] = (), run_id: str = "") -> None:
    """No process, mount or loop device of a run (found by its scratch path, its mounts, the run id in
    its images' names: a loop device whose rbd-fuse died shows its file as /IMAGE) remains."""
    assert gone(marker, within_s=15) == []
    assert _mounts_under(marker, *mounts) == []
    assert _loops_backed_by(marker) == [] and (not run_id or _loops_backed_by(run_id) == [])


def test_lab_cluster_has_a_pool_and_a_file_system_per_device_class(ceph_lab):
    osds = json.loads(subprocess.run(["ceph", "-c", ceph_lab, "osd", "tree", "--format", "json"], capture_output=True,
                                     text=True, timeout=60, check=True).stdout)
    classes = {n["name"]: n.get("device_class") for n in osds["nodes"] if n["type"] == "osd"}
    assert classes == {"osd.0": "ssd", "osd.1": "hdd"}
    pools = json.loads(subprocess.run(["ceph", "-c", ceph_lab, "osd", "pool", "ls", "detail", "--format", "json"],
                                      capture_output=True, text=True, timeout=60, check=True).stdout)
    rules = {r["rule_id"]: r["rule_name"] for r in json.loads(subprocess.run(
        ["ceph", "-c", ceph_lab, "osd", "crush", "rule", "dump", "--format", "json"], capture_output=True, text=True,
        timeout=60, check=True).stdout)}
    placed = {p["pool_name"]: rules[p["crush_rule"]] for p in pools if p["pool_name"] != "device_health_metrics"}
    assert placed == {"rbd-ssd": "fsbench-ssd", "cephfs-ssd-meta": "fsbench-ssd", "cephfs-ssd-data": "fsbench-ssd",
                      "rbd-hdd": "fsbench-hdd", "cephfs-hdd-meta": "fsbench-hdd", "cephfs-hdd-data": "fsbench-hdd"}
    assert all(p["size"] == 1 for p in pools)


def test_cephfs_rbd_and_rbd_image_on_an_existing_cluster(ceph_lab, tmp_path):
    """The kinds against a cluster named by its conf, as a user's own would be: mdtest and fio on each."""
    scratch = tmp_path / "scratch"
    scenario = write_scenario(tmp_path, f"""\
        name: ceph-kinds
        settings: {{scratch: {scratch}}}
        monitor: {{interval: 1s}}
        targets:
          rbd-ssd:
            kind: rbd
            path: {tmp_path}/rbd
            fstype: ext4
            rbd: {{pool: rbd-ssd, size: 1g, conf: {ceph_lab}}}
          cephfs-hdd:
            kind: cephfs
            path: {tmp_path}/cephfs
            fstype: fuse.ceph-fuse
            cephfs: {{fs: cephfs-hdd, conf: {ceph_lab}}}
          librbd-hdd:
            kind: rbd-image
            path: "rbd:rbd-hdd"
            rbd-image: {{pool: rbd-hdd, size: 256m, conf: {ceph_lab}}}
        workloads:
          md:
            tool: mdtest
            targets: [rbd-ssd, cephfs-hdd]
            options: {{n: 30, u: true, z: 2, i: 2, tasks: 2}}
          randrw:
            tool: fio
            options: {{ioengine: psync, rw: randread, bs: 4k, direct: 1, size: 16m, runtime: 1, time_based: true,
                       filename_format: test}}
            sweep: {{product: {{numjobs: [1, 4]}}}}
        """)
    proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = Path(proc.stdout.splitlines()[0])
    cases = list(csv.DictReader((run / "cases.csv").open()))
    assert len(cases) == 8 and {c["status"] for c in cases} == {"ok"}
    hosts = next(csv.DictReader((run / "hosts.csv").open()))
    # this machine has no Ceph modules: auto chose the FUSE clients, and says why
    assert re.fullmatch(r"/dev/loop\d+ ext4 \S+ via rbd-fuse\+loop /dev/loop\d+ \(auto: krbd: no rbd module; "
                        r"nbd: no rbd-nbd or nbd module\)", hosts["mount_rbd-ssd"]), hosts["mount_rbd-ssd"]
    assert hosts["mount_cephfs-hdd"].startswith("ceph-fuse fuse.ceph-fuse ") and \
        hosts["mount_cephfs-hdd"].endswith("via ceph-fuse (auto: no ceph kernel client: not in /proc/filesystems, "
                                           "modprobe ceph failed)")
    assert hosts["mount_librbd-hdd"].startswith("via librbd rbd-hdd/fsbench-")
    rows = list(csv.DictReader((run / "results.csv").open()))
    iops = {r["target"] for r in rows if r["tool"] == "fio" and r["metric"] == "iops" and float(r["value"]) > 0}
    assert iops == {"rbd-ssd", "cephfs-hdd", "librbd-hdd"}
    assert {r["target"] for r in rows if r["tool"] == "mdtest" and r["operation"] == "file_creation"} == \
        {"rbd-ssd", "cephfs-hdd"}
    job = (run / "raw" / "librbd-hdd__randrw__numjobs=4__r1" / "local" / "job.fio").read_text()
    assert "ioengine=rbd" in job and "pool=rbd-hdd" in job and "directory" not in job
    # the image's 16 MiB that both cases read is written once, by the first, not the whole 256 MiB image
    fill = run / "raw" / "librbd-hdd__randrw__numjobs=1__r1" / "local" / "prepare"
    assert json.loads((fill / "fio.json").read_text())["jobs"][0]["write"]["io_bytes"] == 16 * 2**20
    assert not (run / "raw" / "librbd-hdd__randrw__numjobs=4__r1" / "local" / "prepare").exists()
    assert (run / "targets" / "cephfs-hdd" / "ceph-fuse-local.log").exists()
    # undone: mounts, loop devices, FUSE clients, the images fsbench created, the scratch space
    _nothing_left(str(scratch), (str(tmp_path / "rbd"), str(tmp_path / "cephfs")), run.name)
    assert _images(ceph_lab, "rbd-ssd") == [] and _images(ceph_lab, "rbd-hdd") == []
    assert not scratch.exists() or not any(scratch.iterdir())


def test_an_image_in_use_is_refused_and_an_existing_one_needs_destructive(ceph_lab, tmp_path):
    subprocess.run(["rbd", "-c", ceph_lab, "create", "--size", "64M", "--image-feature", "layering", "rbd-hdd/kept"],
                   check=True, capture_output=True, timeout=60)
    # another client with the image open until its stdin closes (then it closes the image: no stale watcher)
    holder = subprocess.Popen(["/usr/bin/python3", "-c", (
        "import rados, rbd, sys\n"
        "c = rados.Rados(conffile=sys.argv[1]); c.connect(timeout=30); io = c.open_ioctx('rbd-hdd')\n"
        "img = rbd.Image(io, 'kept'); print('open', flush=True); sys.stdin.read()\n"
        "img.close(); io.close(); c.shutdown()"), ceph_lab],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"  # a watcher: another client has the image open
        for destructive in ("false", "true"):
            scenario = write_scenario(tmp_path, f"""\
                name: in-use
                settings: {{scratch: {tmp_path}/scratch}}
                targets:
                  img: {{kind: rbd-image, path: "rbd:rbd-hdd", destructive: {destructive},
                         rbd-image: {{pool: rbd-hdd, image: kept, conf: {ceph_lab}}}}}
                workloads:
                  w: {{tool: fio, options: {{rw: write, bs: 4k, size: 1m}}}}
                """, f"in-use-{destructive}.yaml")
            proc = run_cli("run", str(scenario), "-o", str(tmp_path / "out"), "--no-report", timeout=300)
            assert proc.returncode == 1, proc.stderr[-2000:]
            run = Path(proc.stdout.splitlines()[0])
            reason = next(csv.DictReader((run / "cases.csv").open()))["reason"]
            expected = "is open by another client" if destructive == "true" else "exists already"
            assert expected in reason, reason
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert _images(ceph_lab, "rbd-hdd") == ["kept"]  # an image fsbench did not create stays
    subprocess.run(["rbd", "-c", ceph_lab, "rm", "--no-progress", "rbd-hdd/kept"], check=True, capture_output=True,
                   timeout=60)


def test_seed_004_runs_for_real_on_the_lab_cluster(ceph_lab, tmp_path):
    """`fsbench run scenarios/cephfs-vs-rbd.yaml --set scale=smoke --set cluster=existing`: the session's
    lab cluster (the scenario's own lab, started once), all four variants, mdtest and fio, the seed's tables
    with real numbers, and nothing left afterwards: mounts, loop devices, FUSE clients, images."""
    started = time.monotonic()
    proc = run_cli("run", str(CEPH), "--set", "scale=smoke", "--set", "cluster=existing",
                   "--set", f"ceph_conf={ceph_lab}", "-o", str(tmp_path / "out"), timeout=900)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"scale=smoke took {took:.0f}s")
    run = Path(proc.stdout.splitlines()[0])
    run_cli("report", str(run), "--markdown", check=True)
    cases = list(csv.DictReader((run / "cases.csv").open()))
    assert len(cases) == 4 * (1 + 4 * 2) and {c["status"] for c in cases} == {"ok"}
    hosts = next(csv.DictReader((run / "hosts.csv").open()))
    for variant in ("ssd", "hdd"):  # auto, on a machine without Ceph's kernel modules
        assert "via rbd-fuse+loop /dev/loop" in hosts[f"mount_rbd-{variant}"]
        assert hosts[f"mount_cephfs-{variant}"].startswith("ceph-fuse fuse.ceph-fuse")
        assert "(auto: " in hosts[f"mount_rbd-{variant}"] and "(auto: " in hosts[f"mount_cephfs-{variant}"]
    rows = list(csv.DictReader((run / "results.csv").open()))
    for target in ("rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"):
        rates = [float(r["value"]) for r in rows if r["target"] == target and r["tool"] == "mdtest"
                 and r["operation"] == "file_creation" and r["metric"] == "rate"]
        assert rates and min(rates) > 0, target
        for workload in ("seq-write-128k", "seq-read-128k", "rand-write-4k", "rand-read-4k"):
            bw = [float(r["value"]) for r in rows if r["target"] == target and r["workload"] == workload
                  and r["metric"] == "bandwidth" and r["tool"] == "fio"]
            assert len(bw) >= 2 and min(bw) > 0, (target, workload)
    # the MDSs' own counts vouch for CephFS's mdtest phases: a change asks the MDS once per item (held), a stat
    # of what ceph-fuse just made is answered by the client itself (flagged); RBD's stats say why not checked
    mdtest = {(r["target"], r["operation"]): r for r in rows if r["tool"] == "mdtest" and r["metric"] == "rate"}
    for target in ("cephfs-ssd", "cephfs-hdd"):
        for phase in ("file_creation", "file_removal", "directory_rename"):
            assert mdtest[(target, phase)]["validity"] == "ok", mdtest[(target, phase)]["validity_detail"]
            assert "1.00 per item (checked: never reached the MDS)" in mdtest[(target, phase)]["validity_detail"]
        assert mdtest[(target, "file_stat")]["validity"] == "flagged"
        assert mdtest[(target, "file_stat")]["validity_detail"].startswith("never reached the MDS: the file system's "
                                                                          "MDSs served ")
    assert not [r for r in rows if r["tool"] == "backend" and r["operation"].startswith("mds_")
                and r["metric"] != "ops"]
    # the lab's daemons run here: their counters were read from their admin sockets, not with `ceph tell`
    scopes = sorted((run / "raw").rglob("backend-cephfs-ssd*.scope.txt"))
    assert scopes and all(re.search(r"^(osd|mds)\.\S+ /\S+\.asok$", s.read_text(), re.M) for s in scopes), scopes
    snaps = sorted((run / "raw").rglob("backend-cephfs-ssd-mds.start.txt"))
    assert snaps and snaps[0].read_text().startswith("mds."), snaps
    assert mdtest[("rbd-ssd", "file_stat")]["validity_detail"].startswith(
        "not checked: the file system on the image (ext4, xfs) answers a stat")
    html = (run / "report.html").read_text()
    md = (run / "report.md").read_text()
    views = html.split('id="more"', 1)[0]
    for target in ("rbd-ssd", "cephfs-ssd", "rbd-hdd", "cephfs-hdd"):
        assert f"<h3>{target}</h3>" in views
    assert "<th>Operation</th><th>Max IOPS</th><th>Min IOPS</th><th>Mean IOPS</th><th>Std Dev</th>" in views
    assert "<th>Name</th><th>IOPS</th><th>%</th>" in views
    for title in ("Metadata Benchmark", "Compare", "Sequential Write", "Sequential Read", "Random Write",
                  "Random Read"):
        assert f"## {title}" in md, title
    stats = md.split("### cephfs-ssd", 1)[1].split("###", 1)[0]
    assert re.search(r"\| File creation \| [\d.]+k? op/s \| [\d.]+k? op/s \| [\d.]+k? op/s \| [\d.]+k? op/s \|",
                     stats), stats  # real numbers in the seed's shape
    assert "### numjobs=16" in md and "100%" in md and "The seed's questions" in md
    # seed 004's findings after the conclusions, each with its verdict: at smoke scale (1 and 16 threads, one
    # run) those at 64 threads are not measured and the others not decided by a single run (or by a value
    # the validity checks flagged: CephFS's mdtest, whose metadata the store had not all taken in its window)
    section = md.split("## The study's findings, here", 1)[1].split("\n## ", 1)[0]
    findings = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(findings) == 9 and all("**not decided**" in f for f in findings), findings
    assert sum("at numjobs=64 in this run" in f for f in findings) == 4
    assert all("one run per target" in f or "numjobs=64" in f or "flagged by the validity checks" in f
               for f in findings), [f for f in findings if "one run per target" not in f]
    assert not (run / "services").exists()  # an existing cluster: nothing started
    run_id = run.name
    _nothing_left(f"/var/tmp/fsbench/{run_id}", ("/mnt/fsbench-rbd-", "/mnt/fsbench-cephfs-"), run_id)
    assert not Path(f"/var/tmp/fsbench/{run_id}").exists()
    assert _images(ceph_lab, "rbd-ssd") == [] and _images(ceph_lab, "rbd-hdd") == []  # the run's images removed
    assert json.loads((run / "leftovers.json").read_text()) == []


def test_a_killed_runs_ceph_is_cleaned_up_by_the_next_run(tmp_path):
    """SIGKILL while an RBD image is mapped and mounted on the run's own cluster: the next run stops the
    daemons and rbd-fuse, unmounts, detaches the loop device and removes the cluster's data first."""
    require_ceph()
    scratch = tmp_path / "scratch"
    mount = tmp_path / "rbd"
    scenario = write_scenario(tmp_path, f"""\
        name: killed-ceph
        settings: {{scratch: {scratch}}}
        monitor: {{enabled: false}}
        services:
          ceph:
            kind: ceph-lab
            ready_timeout: 5m
            ceph-lab: {{osds: [{{store: memstore, size: 1g, class: ssd}}], cephfs: false}}
        targets:
          rbd:
            kind: rbd
            path: {mount}
            services: [ceph]
            rbd: {{pool: rbd-ssd, size: 512m, conf: "${{services.ceph.conf}}"}}
        workloads:
          long: {{tool: fio, options: {{rw: randwrite, bs: 4k, size: 32m, direct: 1, time_based: true, runtime: 120}}}}
        """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "fsbench", "run", str(scenario), "-o", str(tmp_path / "out"),
                             "--no-report"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not list((tmp_path / "out").glob("*/raw/rbd__long__r1/local/command")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    time.sleep(2.0)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    run = next((tmp_path / "out").iterdir())
    # what a SIGKILL leaves: the daemons, rbd-fuse, the loop device, the mount, the cluster's data
    assert processes_with(str(scratch)) and _mounts_under(str(mount)) and _loops_backed_by(str(scratch))
    other = write_scenario(tmp_path, f"""\
        name: next
        targets: {{t: {{path: {tmp_path}/t, setup: ["mkdir -p ${{target.path}}"]}}}}
        workloads: {{w: {{tool: fio, options: {{rw: write, size: 1m}}}}}}
        """, "next.yaml")
    started = time.monotonic()
    nxt = run_cli("run", str(other), "-o", str(tmp_path / "out2"), "--no-report", "--progress", "plain", timeout=300)
    assert nxt.returncode == 0, nxt.stderr[-3000:]
    assert "cleaned up after the dead run" in nxt.stderr
    print(f"the next run cleaned up and ran in {time.monotonic() - started:.0f}s")
    _nothing_left(str(scratch), (str(mount),), run.name)
    assert not scratch.exists() or not any(scratch.iterdir())
    assert json.loads((run / "manifest.json").read_text())["status"] == "interrupted"
    assert json.loads((run / "leftovers.json").read_text()) == []
