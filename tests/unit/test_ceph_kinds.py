"""The Ceph plug-ins' plans: the lab cluster's files and steps, the target kinds' argv lists and scripts,
fio's rbd engine on rbd-image targets only, and the seed 004 scenario's two ways to reach a cluster."""

from __future__ import annotations

import json
import socket
import subprocess
from dataclasses import replace

import pytest

from fsbench.api.tools import BuildContext, HostInfo
from fsbench.core.errors import ScenarioError
from fsbench.kinds import KINDS
from fsbench.kinds.cephfs import CephFS
from fsbench.kinds.rbd import Rbd
from fsbench.kinds.rbd_image import RbdImage
from fsbench.scenario.load import load_scenario, load_scenario_text
from fsbench.scenario.model import Service, Target
from fsbench.scenario.plan import plan_cases
from fsbench.services import SERVICE_KINDS
from fsbench.services import ceph_lab_helper as helper
from fsbench.services.ceph_lab import CephLab, Osd, conf_template, pool_commands
from fsbench.tools import get_tool
from fsbench.tools.fio.containment import TargetPlace, find_escapes
from fsbench.tools.fio.jobfile import parse_jobfile
from tests.paths import REPO

CEPH = REPO / "scenarios" / "cephfs-vs-rbd.yaml"
VALUES = {"run.id": "r1", "target.name": "t", "target.path": "/mnt/t", "run.scratch": "/var/tmp/fsbench/r1",
          "host.name": "local", "services.ceph.conf": "/var/tmp/fsbench/r1/services/ceph/ceph.conf"}
SCRATCH = "/var/tmp/fsbench/r1"
LAB = CephLab(osds=(Osd("memstore", 2 * 2**30, "ssd"), Osd("bluestore", 8 * 2**30, "hdd")))


def _syntax_ok(argv: list[str]) -> None:
    """A generated shell script parses (sh -n), so no quoting slip reaches a host."""
    assert argv[:3] == ["/bin/sh", "-e", "-c"], argv
    r = subprocess.run(["/bin/sh", "-n", "-c", argv[3]], capture_output=True, text=True)
    assert r.returncode == 0, (r.stderr, argv[3])


def _target(kind: str, settings: object, **kw) -> Target:
    return Target(name="t", path="/mnt/t", kind=kind, settings=settings, **kw)


# -- the lab cluster ------------------------------------------------------------------------------------

def test_lab_conf_has_each_osd_with_its_store_and_size():
    conf = conf_template(LAB)
    assert "[osd.0]\nosd objectstore = memstore\nmemstore device bytes = 2147483648\n" in conf
    assert "[osd.1]\nosd objectstore = bluestore\nbluestore block path = ${service.dir}/osd.1.block\n" in conf
    assert "bluestore block size = 8589934592" in conf
    assert "mon host = [v2:@ADDRESS@:3300,v1:@ADDRESS@:6789]" in conf and "fsid = @FSID@" in conf
    assert "auth client required = none" in conf and "osd pool default size = 1" in conf
    # clients each get their own admin socket (the CLI, ceph-fuse and rbd-fuse run side by side)
    assert "[client]\nadmin socket = ${service.dir}/run/$name.$pid.$cctid.asok" in conf
    assert "osd class update on start = false" in conf and "mds cache memory limit = 268435456" in conf


def test_lab_pools_and_file_systems_per_device_class():
    cmds = pool_commands(LAB)
    rules = [c for c in cmds if c["prefix"] == "osd crush rule create-replicated"]
    assert [(r["name"], r["class"], r["type"]) for r in rules] == [("fsbench-ssd", "ssd", "osd"),
                                                                    ("fsbench-hdd", "hdd", "osd")]
    pools = {c["pool"]: c["rule"] for c in cmds if c["prefix"] == "osd pool create"}
    assert pools == {"rbd-ssd": "fsbench-ssd", "cephfs-ssd-meta": "fsbench-ssd", "cephfs-ssd-data": "fsbench-ssd",
                     "rbd-hdd": "fsbench-hdd", "cephfs-hdd-meta": "fsbench-hdd", "cephfs-hdd-data": "fsbench-hdd"}
    assert [c["fs_name"] for c in cmds if c["prefix"] == "fs new"] == ["cephfs-ssd", "cephfs-hdd"]
    assert {c["pool"] for c in cmds if c["prefix"] == "osd pool application enable"} == {"rbd-ssd", "rbd-hdd"}
    assert all(json.dumps(c) for c in cmds)
    only_rbd = pool_commands(replace(LAB, cephfs=False))
    assert not [c for c in only_rbd if c["prefix"] == "fs new" or "cephfs" in c.get("pool", "")]


def test_lab_plan_steps_exports_and_stop():
    kind = SERVICE_KINDS.get("ceph-lab")
    plan = kind.plan(Service(name="ceph", kind="ceph-lab", settings=LAB))
    assert set(plan.files) == {"ceph.conf.in", "ceph_lab_helper.py"}
    assert "def ready(conf: str)" in plan.files["ceph_lab_helper.py"]  # the helper ships as it is in fsbench
    mon, mgr, osds, mds, pools = plan.start
    assert '"$d/ceph_lab_helper.py" address 127.0.10 "$run" "${service.host}"' in mon and "flock -w 120 9" in mon
    assert 'ceph-mon -c "$conf" --mkfs -i a' in mon and "nice -n 10 ceph-mon" in mon
    assert "ceph-mgr" in mgr
    assert '"$d/ceph_lab_helper.py" osds "$conf" ssd hdd' in osds and "--mkfs --osd-uuid" in osds
    assert mds.count("ceph-mds") == 2
    assert '"prefix": "fs new"' in pools
    assert plan.ready and "ready" in plan.ready
    assert plan.exports["conf"] == "${service.dir}/ceph.conf" and plan.exports["rbd_pool_hdd"] == "rbd-hdd"
    assert plan.exports["fs_ssd"] == "cephfs-ssd" and set(kind.exports) >= set(plan.exports)
    stop = plan.stop[0]
    assert '"$d"/run/*.pid' in stop and "kill -KILL" in stop and 'grep -qxF "$conf"' in stop
    assert 'rm -rf "$d"/mon.* "$d"/mgr.* "$d"/osd.*' in stop
    assert plan.logs == {"${service.dir}/log": "log", "${service.dir}/ceph.conf": "ceph.conf"}
    # clients on other hosts get the conf at the same path, and the folders its [client] section writes into
    assert plan.client_files == ("${service.dir}/ceph.conf",)
    assert plan.client_folders == ("${service.dir}/run", "${service.dir}/log")
    for script in [*plan.start, plan.ready, stop]:
        _syntax_ok(["/bin/sh", "-e", "-c", script])
    fixed = kind.plan(Service(name="ceph", kind="ceph-lab", settings=replace(LAB, address="127.0.10.9")))
    assert "addr=127.0.10.9" in fixed.start[0] and "address 127.0.10" not in fixed.start[0]


def test_helper_binds_the_hosts_own_address_when_clients_reach_it_from_other_machines():
    """An inventory host's address that is not loopback is where the lab binds (clients on other machines
    reach no 127.x); a loopback one (this machine, or the tests' namespaced hosts) keeps a free 127.0.10.N.
    A mon port taken on the host's address is refused, naming it."""
    own = next((a for a in subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
                if "." in a and not a.startswith("127.")), "")
    assert own, "this test needs a non-loopback IPv4 address on the machine (hostname -I)"
    assert helper.lab_address("127.0.10", "fsbench-unit", own) == own
    assert helper.lab_address("127.0.10", "fsbench-unit", "127.0.0.1").startswith("127.0.10.")
    assert helper.lab_address("127.0.10", "fsbench-unit") == helper.free_address("127.0.10", "fsbench-unit")
    with socket.socket() as s:
        s.bind((own, 0))  # the mon's ports are fixed; a port of the kernel's choice stands in through a patch
        port = s.getsockname()[1]
        s.listen()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(helper, "MON_PORTS", (port, 6789))
            with pytest.raises(SystemExit, match=f"{own}:{port} .*cannot be bound"):
                helper.lab_address("127.0.10", "fsbench-unit", own)


def test_helper_skips_an_address_whose_mon_port_is_taken():
    seed = "fsbench-unit"
    first = helper.free_address("127.0.10", seed)
    with socket.socket() as s:  # something listens on the mon's msgr2 port there: the next address is chosen
        s.bind((first, 3300))
        s.listen()
        second = helper.free_address("127.0.10", seed)
    assert second != first and second.startswith("127.0.10.")
    assert int(second.rsplit(".", 1)[1]) in range(2, 255)


def test_lab_settings_are_checked_where_they_are_written():
    text = """
name: lab
services:
  ceph:
    kind: ceph-lab
    ceph-lab:
      address: 10.0.0.5
      subnet: 127.0.10.0
      osds: [{store: filestore, size: 1g, class: ssd}, {store: bluestore, size: lots, class: fast}]
targets: {t: {path: /mnt/x, services: [ceph]}}
workloads: {w: {tool: fio, options: {rw: write, size: 1m}}}
"""
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "lab.yaml")
    text = str(err.value)
    for where in ("ceph-lab.address", "ceph-lab.subnet", "osds[0].store", "osds[1].size", "osds[1].class"):
        assert where in text, (where, text)


# -- cephfs -------------------------------------------------------------------------------------------------

def test_cephfs_plan_mounts_with_the_client_the_host_has():
    spec = KINDS.get("cephfs").settings({"fs": "cephfs-ssd", "conf": "${services.ceph.conf}", "user": "admin",
                                         "root": "/", "client": "auto", "keyring": "", "fuse_options": [],
                                         "kernel_options": []})
    plan = KINDS.get("cephfs").plan(_target("cephfs", spec), VALUES, SCRATCH)
    state = f"{SCRATCH}/ceph/t"
    assert plan.prepare == [["mkdir", "-p", "/mnt/t", state]]
    script = plan.mount[0][3]
    conf = VALUES["services.ceph.conf"]
    assert (f"ceph-fuse -c {conf} --id admin --client_fs cephfs-ssd --pid-file {state}/ceph-fuse.pid "
            f"--log-file {state}/ceph-fuse.log /mnt/t") in script
    assert f"mount -t ceph :/ /mnt/t -o name=admin,conf={conf},mds_namespace=cephfs-ssd" in script
    # auto: the kernel client where it is loaded or loads now (not merely on disk), and where it mounts
    assert "grep -qw ceph /proc/filesystems || modprobe -q ceph" in script and "case auto in" in script
    assert "modinfo" not in script and 'the kernel mount failed: $why' in script
    assert plan.unmount == [["umount", "/mnt/t"]] and plan.after == [["rmdir", "/mnt/t"]]
    assert "kill -KILL" in plan.force_unmount[0][3] and "umount -l /mnt/t" in plan.force_unmount[0][3]
    assert plan.via == ["cat", f"{state}/via"] and plan.logs == {f"{state}/ceph-fuse.log": "ceph-fuse-{host}.log"}
    for argv in plan.mount + plan.force_unmount:
        _syntax_ok(argv)
    sub = KINDS.get("cephfs").plan(_target("cephfs", CephFS(root="/bench", client="fuse")), VALUES, SCRATCH)
    assert "-r /bench" in sub.mount[0][3] and "case fuse in" in sub.mount[0][3]


def test_cephfs_keyring_only_with_ceph_fuse():
    kind = KINDS.get("cephfs")
    assert kind.check(_target("cephfs", CephFS(keyring="/etc/ceph/k")))[0][0] == ("cephfs", "keyring")
    assert kind.check(_target("cephfs", CephFS(keyring="/etc/ceph/k", client="fuse"))) == []
    assert kind.check(_target("cephfs", CephFS(root="bench")))[0][0] == ("cephfs", "root")


# -- rbd ------------------------------------------------------------------------------------------------------

def test_rbd_plan_creates_maps_formats_mounts_and_undoes_it():
    kind = KINDS.get("rbd")
    spec = Rbd(pool="rbd-ssd", size=2**30, conf="${services.ceph.conf}", keyring="/etc/ceph/k")
    plan = kind.plan(_target("rbd", spec), VALUES, SCRATCH)
    conf, state = VALUES["services.ceph.conf"], f"{SCRATCH}/ceph/t"
    rbd = f"rbd -c {conf} --id admin --keyring /etc/ceph/k"
    image = "rbd-ssd/fsbench-r1-t-local"  # one per run, target and host
    assert plan.once == [] and plan.prepare[0] == ["mkdir", "-p", "/mnt/t", state]
    create = plan.prepare[1][3]  # on every host: each maps an image of its own
    assert f"if {rbd} info {image} > /dev/null 2>&1; then" in create
    assert f"{rbd} create --size 1024M --image-feature layering {image}" in create
    assert "exists already" in create and "destructive: true" in create and f"touch {state}/created" in create
    mount = plan.mount[0][3]
    assert f"{rbd} status --format json {image} | grep -Eq" in mount  # nobody else has it open
    assert f"setsid rbd-fuse -c {conf} --id admin --keyring /etc/ceph/k -p rbd-ssd -r fsbench-r1-t-local -f " \
           f"{state}/rbd-fuse" in mount
    assert f"losetup --find --show --direct-io=on {state}/rbd-fuse/fsbench-r1-t-local" in mount
    assert f"map_krbd() {{ dev=$({rbd} map {image} 2> {state}/map.err); }}" in mount
    assert "map_nbd() { dev=$(rbd-nbd -c" in mount and "modinfo" not in mount
    assert 'mkfs -t ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$dev"' in mount
    assert 'mount -t ext4 "$dev" /mnt/t' in mount and 'name="rbd-fuse+loop $dev"' in mount
    unmap = plan.unmount[0][3]
    assert "umount /mnt/t" in unmap and 'losetup -d "$l"' in unmap and 'kill -TERM "$p"' in unmap
    forced = plan.force_unmount[0][3]
    assert "umount -l /mnt/t" in forced and "kill -KILL" in forced and "|| true" in forced
    remove = plan.after[0][3]
    assert f"if [ -e {state}/created ]; then" in remove
    assert f"timeout 60 {rbd} --client_mount_timeout 10 rm --no-progress {image}" in remove
    assert plan.after[1] == ["rmdir", "/mnt/t"] and plan.via == ["cat", f"{state}/via"]
    for argv in plan.prepare[1:] + plan.mount + plan.unmount + plan.force_unmount + plan.after[:1]:
        _syntax_ok(argv)
    mine = kind.plan(_target("rbd", spec, destructive=True), VALUES, SCRATCH).prepare[1][3]
    assert "exists already" not in mine  # a destructive target may format an image that exists
    xfs = kind.settings({"pool": "p", "fstype": "xfs"})
    assert 'mkfs -t xfs -q -f -K "$dev"' in kind.plan(_target("rbd", xfs), VALUES, SCRATCH).mount[0][3]
    assert kind.check(_target("rbd", None))[0][0] == ("kind",)


# -- rbd-image and fio's rbd engine ---------------------------------------------------------------------

def _rbd_image_ctx(spec: RbdImage) -> BuildContext:
    return BuildContext({"local": HostInfo("local", "127.0.0.1")}, address="url", target_kind="rbd-image",
                        target_settings=spec)


def test_rbd_maps_an_image_per_host_and_a_shared_image_name_runs_on_one_host():
    """ext4 on one image is mounted by one client at a time: each host its own image by default; an image named
    alike for every host narrows the target to its first host, with a warning that says why."""
    kind = KINDS.get("rbd")
    spec = Rbd(pool="p")
    client2 = kind.plan(_target("rbd", spec), {**VALUES, "host.name": "client2"}, SCRATCH)
    assert "p/fsbench-r1-t-client2" in client2.prepare[1][3] and "p/fsbench-r1-t-client2" in client2.mount[0][3]
    assert kind.one_host(_target("rbd", spec)) == ""
    assert "put ${host.name} in `image:`" in kind.one_host(_target("rbd", Rbd(pool="p", image="kept")))
    text = """\
name: shared-image
hosts:
  c1: {transport: local, groups: [clients]}
  c2: {transport: local, groups: [clients]}
targets:
  own: {kind: rbd, path: /mnt/own, hosts: [clients], rbd: {pool: p}}
  kept: {kind: rbd, path: /mnt/kept, hosts: [clients], rbd: {pool: p, image: kept}}
workloads:
  w: {tool: fio, options: {rw: write, size: 1m}}
"""
    sc = load_scenario_text(text, "shared.yaml")
    assert sc.targets["own"].hosts == ("clients",) and sc.targets["kept"].hosts == ("c1",)
    assert any(w.startswith("targets.kept: runs on c1 only, not on c2: its image 'kept'") for w in sc.warnings)


def test_rbd_image_plan_has_no_mount_and_removes_what_it_made():
    kind = KINDS.get("rbd-image")
    plan = kind.plan(_target("rbd-image", RbdImage(pool="rbd-hdd")), VALUES, SCRATCH)
    assert plan.mount == [] and plan.unmount == []
    assert "create --size 10240M --image-feature layering rbd-hdd/fsbench-r1-t" in plan.once[0][3]
    assert "is open by another client" in plan.once[0][3]
    assert "rm --no-progress rbd-hdd/fsbench-r1-t" in plan.after[0][3]
    assert plan.via == ["echo", "librbd rbd-hdd/fsbench-r1-t (fio ioengine=rbd)"]
    _syntax_ok(plan.once[0])
    assert kind.check(_target("rbd-image", RbdImage(keyring="/k")))[0][0] == ("rbd-image", "keyring")


def test_fio_uses_its_rbd_engine_on_rbd_image_targets():
    sc = load_scenario_text("""
name: librbd
targets:
  img: {kind: rbd-image, path: "rbd:rbd-hdd", rbd-image: {pool: rbd-hdd, image: bench, conf: /etc/ceph/lab.conf}}
workloads:
  rr: {tool: fio, options: {ioengine: psync, rw: randread, bs: 4k, size: 64m, direct: 1, filename_format: test,
                            nrfiles: 1, runtime: 2, time_based: true}}
""", "librbd.yaml")
    case = plan_cases(sc)[0]
    assert case.prepare  # reads: the extent is written first
    fio = get_tool("fio")
    ctx = _rbd_image_ctx(sc.targets["img"].settings)
    inv = fio.build(case, "rbd:rbd-hdd", ctx)
    job = parse_jobfile(inv.files["job.fio"])
    glob = job.section("global")
    assert (glob["ioengine"], glob["pool"], glob["rbdname"], glob["clientname"]) == ("rbd", "rbd-hdd", "bench", "admin")
    assert not {"directory", "filename", "filename_format", "nrfiles"} & {k for _n, o in job.sections for k in o}
    assert inv.env == {"CEPH_CONF": "/etc/ceph/lab.conf"}
    fill = parse_jobfile(fio.prepare(case, "rbd:rbd-hdd", ctx).files["job.fio"]).section("global")
    assert (fill["rw"], fill["size"], fill["ioengine"], fill["rbdname"]) == ("write", "64m", "rbd", "bench")
    assert "create_only" not in fill and "time_based" not in fill


def test_fio_rbd_engine_only_on_rbd_image_targets():
    jf = parse_jobfile("[job]\nioengine=rbd\npool=p\nrbdname=i\n")
    image = TargetPlace("img", "rbd:p", kind="rbd-image")
    assert find_escapes(jf, [image]) == []
    for others in ([TargetPlace("t", "/mnt/cephfs", kind="cephfs")],
                   [TargetPlace("disk", "/dev/loop7", destructive=True, kind="device")],  # never on a device
                   [image, TargetPlace("t", "/mnt/rbd", kind="rbd")]):
        escapes = find_escapes(jf, others)
        assert len(escapes) == 1 and "writes to an RBD image" in escapes[0].message, others
        assert "rbd-image" in escapes[0].hint
    sg = parse_jobfile("[job]\nioengine=sg\n")
    assert find_escapes(sg, [image])  # other device engines stay refused there


def test_scenario_refuses_the_rbd_engine_and_mdtest_where_they_do_not_belong():
    text = """
name: refuse
targets:
  fs: {kind: cephfs, path: /mnt/fs, cephfs: {fs: a}}
  img: {kind: rbd-image, path: "rbd:p", rbd-image: {pool: p}}
workloads:
  raw: {tool: fio, targets: [fs], options: {ioengine: rbd, rw: write, size: 1m}}
  md: {tool: mdtest, targets: [img], options: {n: 10}}
  ok: {tool: fio, options: {ioengine: psync, rw: write, size: 1m}}
"""
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "refuse.yaml")
    issues = {i.path: i.message for i in err.value.issues}
    assert "writes to an RBD image" in issues["workloads.raw.options.ioengine"]
    assert "mdtest cannot run on target img" in issues["workloads.md.targets"]
    assert not any(p.startswith("workloads.ok") for p in issues)


# -- the seed 004 scenario: a lab here, an existing cluster with the seed's sizes --------------------------

def test_cephfs_vs_rbd_lab_and_full():
    lab = load_scenario(CEPH, ["scale=lab"])
    svc = lab.services["ceph"]
    assert svc.kind == "ceph-lab" and [(o.store, o.device_class) for o in svc.settings.osds] == \
        [("memstore", "ssd"), ("bluestore", "hdd")]
    assert list(lab.hosts) == ["local"] and lab.inventory_file == ""
    kinds = {n: (t.kind, t.services) for n, t in lab.targets.items()}
    assert kinds == {"rbd-ssd": ("rbd", ("ceph",)), "cephfs-ssd": ("cephfs", ("ceph",)),
                     "rbd-hdd": ("rbd", ("ceph",)), "cephfs-hdd": ("cephfs", ("ceph",))}
    assert lab.targets["rbd-hdd"].settings.pool == "rbd-hdd" and lab.targets["cephfs-hdd"].settings.fs == "cephfs-hdd"
    assert lab.targets["rbd-ssd"].settings.conf == "${services.ceph.conf}" and lab.baseline == "rbd-ssd"
    # lab: the two ends the seed's summary contrasts, in 3 rounds (the report pairs the variants by round)
    assert lab.workloads["seq-read-128k"].sweep.product == {"numjobs": [1, 64]}
    assert lab.settings.order == "rounds" and lab.settings.repetitions.min == 3
    full = load_scenario(CEPH, ["scale=full"])
    assert full.workloads["seq-read-128k"].sweep.product == {"numjobs": [1, 4, 16, 64]}  # the seed's, once
    assert list(full.hosts) == ["client1"] and full.inventory_file.endswith("inventory-example.yaml")
    assert all(t.services == () and t.settings.conf == "/etc/ceph/ceph.conf" for t in full.targets.values())
    assert full.workloads["mdtest"].options["n"] == 5000
    smoke = load_scenario(CEPH, ["scale=smoke"])
    assert smoke.workloads["rand-write-4k"].sweep.product == {"numjobs": [1, 16]}
    # this machine as the client of a cluster that runs already (the e2e test joins its lab this way)
    here = load_scenario(CEPH, ["scale=smoke", "cluster=existing", "ceph_conf=/srv/lab/ceph.conf"])
    assert list(here.hosts) == ["local"] and here.inventory_file == ""
    assert all(t.services == () and t.settings.conf == "/srv/lab/ceph.conf" for t in here.targets.values())
    # across hosts (configs/inventory-cephfs-vs-rbd.example.yaml): the lab on ceph1, every target on both clients
    spread = load_scenario(CEPH, ["scale=smoke"], REPO / "configs" / "inventory-cephfs-vs-rbd.example.yaml")
    assert spread.resolve_hosts(spread.services["ceph"].hosts) == ["ceph1"]
    assert {tuple(spread.resolve_hosts(t.hosts)) for t in spread.targets.values()} == {("client1", "client2")}
    assert not [w for w in spread.warnings if "runs on client1 only" in w]  # an RBD image per client


def _lab_conf(sc, hosts, tmp_path):
    """The service manager of a ceph-lab on ceph1, its session there, and the conf it left (its client file)."""
    from fsbench.run.targets.manager import ServiceManager
    from fsbench.run.targets.services import ServiceSession

    manager = ServiceManager(sc, hosts, "r1", "/var/tmp/fsbench/r1", tmp_path, lambda e: None, ["fs"])
    session = ServiceSession(sc.services["ceph"], "ceph1", hosts["ceph1"], "r1", "/var/tmp/fsbench/r1",
                             tmp_path / "ceph", lambda e: None)
    conf = "/var/tmp/fsbench/r1/services/ceph/ceph.conf"
    hosts["ceph1"].files[conf] = b"[global]\nmon host = 127.0.10.7\n"
    return manager, session, conf


def test_the_labs_client_conf_is_copied_to_the_other_hosts_of_its_targets(tmp_path):
    """The ceph-lab's conf (mon address, no cephx) is a file on its host: the service manager copies it, and
    makes the folders its [client] section writes into, at the same path on every other host of the targets
    that use the service; its own host and hosts of no such target get nothing."""
    from fsbench.transport.fake import fake_hosts

    sc = load_scenario_text("""\
name: spread
hosts:
  ceph1: {transport: local, groups: [ceph]}
  c1: {transport: local, groups: [clients]}
  c2: {transport: local, groups: [clients]}
  other: {transport: local}
services:
  ceph: {kind: ceph-lab, hosts: [ceph]}
targets:
  fs: {kind: cephfs, path: /mnt/fs, hosts: [clients], services: [ceph], cephfs: {conf: "${services.ceph.conf}"}}
workloads:
  w: {tool: fio, options: {rw: write, size: 1m}}
""", "spread.yaml")
    hosts = fake_hosts("ceph1", "c1", "c2", "other")
    manager, session, conf = _lab_conf(sc, hosts, tmp_path)
    assert manager._ship_client_files("ceph", session) is None
    for client in ("c1", "c2"):
        assert hosts[client].files[conf] == hosts["ceph1"].files[conf]
        assert {"/var/tmp/fsbench/r1/services/ceph/run", "/var/tmp/fsbench/r1/services/ceph/log"} <= \
            hosts[client].dirs
    assert hosts["ceph1"].ops("put_file") == [] and hosts["other"].log == []
    # a conf the service did not leave is said, with the host and the clients that need it
    del hosts["ceph1"].files[conf]
    why = manager._ship_client_files("ceph", session)
    assert why and f"cannot read its client file {conf} on ceph1" in why and "c1, c2" in why
    # a kind naming a client file outside its own folder is refused: fsbench writes only into its folders
    session.plan = replace(session.plan, client_files=("/etc/ceph/ceph.conf",))
    why = manager._ship_client_files("ceph", session)
    assert why and "/etc/ceph/ceph.conf are outside its folder" in why


def test_the_client_conf_goes_to_every_client_host_at_once_and_the_first_failure_in_order_is_said(tmp_path):
    """Eight clients get the conf together (each put waits until all eight are in flight: one after the other
    they never would be); a client whose folder cannot be made is named, the first of them in the hosts' order."""
    import threading

    from fsbench.core.errors import FsbenchError
    from fsbench.transport.fake import fake_hosts

    clients = [f"c{i}" for i in range(1, 9)]
    sc = load_scenario_text(f"""\
name: spread
hosts:
  ceph1: {{transport: local, groups: [ceph]}}
{chr(10).join(f"  {c}: {{transport: local, groups: [clients]}}" for c in clients)}
services:
  ceph: {{kind: ceph-lab, hosts: [ceph]}}
targets:
  fs: {{kind: cephfs, path: /mnt/fs, hosts: [clients], services: [ceph], cephfs: {{conf: "${{services.ceph.conf}}"}}}}
workloads:
  w: {{tool: fio, options: {{rw: write, size: 1m}}}}
""", "spread.yaml")
    hosts = fake_hosts("ceph1", *clients)
    together = threading.Barrier(len(clients), timeout=10)
    for c in clients:
        put = hosts[c].put_file

        def waiting_put(local, remote, mode=None, _put=put):
            together.wait()
            return _put(local, remote, mode=mode)

        hosts[c].put_file = waiting_put  # type: ignore[method-assign]
    manager, session, conf = _lab_conf(sc, hosts, tmp_path)
    assert manager._ship_client_files("ceph", session) is None
    assert all(hosts[c].files[conf] == hosts["ceph1"].files[conf] for c in clients)

    def refuse(path, *args, **kwargs):
        raise FsbenchError("permission denied")

    for c in ("c6", "c3"):
        hosts[c].makedirs = refuse  # type: ignore[method-assign]
    together = threading.Barrier(len(clients) - 2, timeout=10)  # the six others still get theirs together
    why = manager._ship_client_files("ceph", session)
    assert why is not None and why.startswith("service ceph: cannot copy its client files to c3: permission denied")
