"""`client: auto` (cephfs) and `map: auto` (rbd) choose by what works: their mount scripts run here with
stand-ins for the Ceph and kernel commands (modprobe, mount, rbd, rbd-nbd, rbd-fuse, ceph-fuse, losetup,
mkfs), which answer as a host would whose modules load or not, and whose kernel mount or map fails."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fsbench.kinds import KINDS
from fsbench.kinds.cephfs import CephFS
from fsbench.kinds.rbd import Rbd
from fsbench.scenario.model import Target

VALUES = {"run.id": "r1", "target.name": "t", "host.name": "local"}
#: what each stand-in does, set per test through the environment: FAKE_<NAME>=ok|fail
STANDINS = {
    "modprobe": 'echo "modprobe $*" >> "$FAKE_LOG"; [ "$FAKE_MODPROBE" = ok ]',
    "mount": 'echo "mount $*" >> "$FAKE_LOG"\n'
             'case "$*" in *"-t ceph"*) [ "$FAKE_KERNEL_MOUNT" = ok ] || '
             '{ echo "mount error 19 = No such device" >&2; exit 32; } ;; esac',
    "ceph-fuse": 'echo "ceph-fuse $*" >> "$FAKE_LOG"',
    "rbd": 'echo "rbd $*" >> "$FAKE_LOG"\n'
           'case "$*" in\n'
           '  *" status "*) echo \'{"watchers": []}\' ;;\n'
           '  *" info "*) echo "rbd: error opening image: (2) No such file or directory" >&2; exit 2 ;;\n'
           '  *" map "*) [ "$FAKE_KRBD" = ok ] && echo /dev/rbd0 || '
           '{ echo "rbd: sysfs write failed" >&2; echo "rbd: map failed: (1) Operation not permitted" >&2; exit 1; } ;;\n'
           'esac',
    "rbd-nbd": 'echo "rbd-nbd $*" >> "$FAKE_LOG"; [ "$FAKE_NBD" = ok ] && echo /dev/nbd0 || '
               '{ echo "rbd-nbd: failed to open device /dev/nbd0" >&2; exit 1; }',
    # rbd-fuse shows the image as a file in the folder it is given last
    "rbd-fuse": 'echo "rbd-fuse $*" >> "$FAKE_LOG"\n'
                'while [ $# -gt 1 ]; do [ "$1" = -r ] && image=$2; shift; done; touch "$1/$image"',
    "losetup": 'echo "losetup $*" >> "$FAKE_LOG"; echo /dev/loop7',
    "mkfs": 'echo "mkfs $*" >> "$FAKE_LOG"',
}


@pytest.fixture
def host(tmp_path: Path):
    """Runs a kind's mount script with the stand-ins first on PATH; returns (via fact, commands run)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in STANDINS.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    scratch = tmp_path / "scratch"

    def run(kind: str, settings: object, **answers: str) -> tuple[str, str, subprocess.CompletedProcess]:
        target = Target(name="t", path=str(tmp_path / "mnt"), kind=kind, settings=settings)
        plan = KINDS.get(kind).plan(target, VALUES, str(scratch))
        log = tmp_path / f"log-{len(list(tmp_path.glob('log-*')))}"
        log.write_text("")
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_LOG": str(log),
               **{f"FAKE_{k.upper()}": v for k, v in answers.items()}}
        for argv in plan.prepare:  # rbd creates its image here (on every host): the stand-ins answer it too
            subprocess.run(argv, env=env, check=True)
        r = subprocess.run(plan.mount[0], env=env, capture_output=True, text=True, timeout=60)
        via = scratch / "ceph" / "t" / "via"
        return (via.read_text().strip() if via.exists() else ""), log.read_text(), r

    return run


def _kernel_has_ceph() -> bool:
    return "ceph" in Path("/proc/filesystems").read_text().split()


def test_cephfs_auto_uses_the_kernel_client_where_it_mounts(host):
    via, log, r = host("cephfs", CephFS(fs="cephfs-ssd"), modprobe="ok", kernel_mount="ok")
    assert r.returncode == 0, r.stderr
    assert via == "kernel" and "mount -t ceph :/" in log and "ceph-fuse" not in log


def test_cephfs_auto_falls_back_to_ceph_fuse_when_the_kernel_mount_fails(host):
    """A container: the module loads (or seems to), the mount is refused; ceph-fuse mounts, and the fact says why."""
    via, log, r = host("cephfs", CephFS(fs="cephfs-ssd"), modprobe="ok", kernel_mount="fail")
    assert r.returncode == 0, r.stderr
    assert via == "ceph-fuse (auto: the kernel mount failed: mount error 19 = No such device )"
    assert log.index("mount -t ceph") < log.index("ceph-fuse -c /etc/ceph/ceph.conf --id admin --client_fs cephfs-ssd")


def test_cephfs_auto_uses_ceph_fuse_where_no_kernel_client_loads(host):
    via, log, r = host("cephfs", CephFS(), modprobe="fail", kernel_mount="ok")
    assert r.returncode == 0, r.stderr
    if _kernel_has_ceph():  # this kernel has the client built in or loaded: no probe needed, and it mounts
        assert via == "kernel" and "modprobe" not in log
    else:
        assert via == "ceph-fuse (auto: no ceph kernel client: not in /proc/filesystems, modprobe ceph failed)"
        assert "modprobe -q ceph" in log and "mount -t ceph" not in log and "ceph-fuse" in log


def test_cephfs_kernel_asked_for_fails_with_the_mounts_error(host):
    via, log, r = host("cephfs", CephFS(client="kernel"), modprobe="ok", kernel_mount="fail")
    assert r.returncode != 0 and "mount error 19" in r.stderr and via == "" and "ceph-fuse" not in log


def test_rbd_auto_maps_with_krbd_where_it_works(host):
    via, log, r = host("rbd", Rbd(pool="rbd-ssd"), modprobe="ok", krbd="ok", nbd="ok")
    assert r.returncode == 0, r.stderr
    assert via == "krbd /dev/rbd0" and "rbd-nbd" not in log and "rbd-fuse" not in log
    assert 'mount -t ext4 /dev/rbd0' in log


def test_rbd_auto_moves_on_when_a_map_fails_and_says_why(host):
    """Modules that load but maps the kernel refuses (a container): krbd, then rbd-nbd fail; rbd-fuse + loop."""
    via, log, r = host("rbd", Rbd(pool="rbd-ssd"), modprobe="ok", krbd="fail", nbd="fail")
    assert r.returncode == 0, r.stderr
    assert via == ("rbd-fuse+loop /dev/loop7 (auto: krbd: rbd: sysfs write failed rbd: map failed: (1) Operation "
                   "not permitted ; nbd: rbd-nbd: failed to open device /dev/nbd0 )")
    order = [log.index(w) for w in ("map rbd-ssd/fsbench-r1-t", "rbd-nbd -c", "rbd-fuse -c", "losetup --find")]
    assert order == sorted(order) and "mount -t ext4 /dev/loop7" in log
    nbd_works = host("rbd", Rbd(pool="rbd-ssd"), modprobe="ok", krbd="fail", nbd="ok")[0]
    assert nbd_works.startswith("nbd /dev/nbd0 (auto: krbd: rbd: sysfs write failed")


def test_rbd_auto_without_modules_goes_to_rbd_fuse(host):
    via, log, r = host("rbd", Rbd(pool="rbd-ssd"), modprobe="fail", krbd="ok", nbd="ok")
    assert r.returncode == 0, r.stderr
    if Path("/sys/bus/rbd").exists():  # a kernel with krbd loaded maps without a probe
        assert via == "krbd /dev/rbd0"
    else:
        assert via == "rbd-fuse+loop /dev/loop7 (auto: krbd: no rbd module; nbd: no rbd-nbd or nbd module)"
        assert " map " not in log and "rbd-nbd" not in log


def test_rbd_krbd_asked_for_fails_with_the_maps_error(host):
    via, log, r = host("rbd", Rbd(pool="rbd-ssd", map="krbd"), modprobe="ok", krbd="fail", nbd="ok")
    assert r.returncode != 0 and "sysfs write failed" in r.stderr and via == ""
    assert "rbd-nbd" not in log and "rbd-fuse" not in log
