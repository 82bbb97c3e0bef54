"""A throw-away Ceph cluster on one machine, as a service: mon, mgr, OSDs, MDSs, pools and file systems.

Everything lives in the service's folder in the run's scratch space and binds to one loopback
address chosen per run (127.0.10.N by default), so several labs and other servers coexist; on a host
its clients reach from other machines (an inventory host whose address is not loopback) it binds that
address instead, and its client conf is copied to the targets' hosts (ServicePlan.client_files). It runs
with auth none, pools of size 1 and one CRUSH rule per device class: each OSD says its class (ssd,
hdd, nvme), and each class gets an RBD pool `rbd-<class>` and a CephFS `cephfs-<class>` (metadata
and data pools on that class, its own MDS). Stopping kills the daemons and deletes their data; the
daemons' logs are kept in the run directory. Debian's ceph-mon, ceph-mgr, ceph-osd, ceph-mds and
python3-rados are needed on the service's host.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fsbench.api.sections import Section
from fsbench.api.services import ServiceKind, ServicePlan, ServiceSpec
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.units import is_whole_number

CLASSES = ("ssd", "hdd", "nvme")
STORES = ("memstore", "bluestore")
HELPER = "ceph_lab_helper.py"
#: serializes the choice of an address and the mon's bind across runs on one machine
LOCK = "/tmp/fsbench-ceph-lab.lock"
GIB = 2**30


def _subnet(value: object, path: tuple, lm, issues: list) -> Any:
    text = s.string(value, path, lm, issues)
    parts = str(text).split(".") if text is not None else []
    if len(parts) != 3 or parts[0] != "127" or not all(is_whole_number(p) and int(p) < 256 for p in parts):
        issues.append(lm.issue(path, f"expected the first three parts of a loopback address, got {value!r}",
                               "for example 127.0.10 (the lab picks a free 127.0.10.N)"))
        return None
    return text


def _address(value: object, path: tuple, lm, issues: list) -> Any:
    text = s.string(value, path, lm, issues)
    parts = str(text).split(".") if text is not None else []
    if text != "auto" and (len(parts) != 4 or parts[0] != "127" or not all(is_whole_number(p) and int(p) < 256
                                                                             for p in parts)):
        issues.append(lm.issue(path, f"expected auto or a loopback address (127.x.y.z), got {value!r}",
                               "the lab binds one loopback address; a real cluster is joined, not started"))
        return None
    return text


def _config_value(value: object, path: tuple, lm, issues: list) -> Any:
    text = s.line_text(value, path, lm, issues)
    return None if text is None else str(text)


@dataclass(frozen=True)
class Osd:
    """One OSD: its object store (memstore keeps data in RAM; bluestore on a sparse file), size and class."""

    store: str = option(s.one_of(*STORES), "bluestore")
    size: int = option(s.size, 4 * GIB, convert=int, doc="memstore: its capacity (RAM); bluestore: its sparse file")
    device_class: str = option(s.one_of(*CLASSES), "hdd", key="class", doc="the device class its pools are placed by")


OSD = Section(Osd, "OSD")
#: the lab's OSDs when the section names none: one in RAM, of class ssd
DEFAULT_OSDS = (Osd("memstore", 2 * GIB, "ssd"),)


def _osd_settings(checked: list) -> tuple[Osd, ...]:
    """The checked `osds:` as Osd settings; an empty list keeps the default."""
    return tuple(OSD.build(o) or Osd() for o in checked if o) or DEFAULT_OSDS


@dataclass(frozen=True)
class CephLab:
    """The lab's settings (the service's `ceph-lab:` section)."""

    address: str = option(_address, "auto", doc="auto (the host's own address when it is not loopback, else "
                                                "a free address of `subnet`) or a 127.x.y.z address")
    subnet: str = option(_subnet, "127.0.10", doc="where auto picks the address: 127.0.10 -> 127.0.10.2-254")
    osds: tuple[Osd, ...] = option(s.list_of(OSD), DEFAULT_OSDS, convert=_osd_settings)
    pg_num: int = option(s.integer(1), 8)
    cephfs: bool = option(s.boolean, True, doc="a CephFS cephfs-<class> per device class")
    rbd: bool = option(s.boolean, True, doc="an RBD pool rbd-<class> per device class")
    osd_memory_target: int = option(s.size, 896 * 2**20, convert=int,
                                    doc="bluestore's cache aims at this (the lowest Ceph allows)")
    mds_cache_memory_limit: int = option(s.size, 256 * 2**20, convert=int)
    nice: int = option(s.integer(0), 10, doc="the daemons' niceness: the clients under test come first")
    python: str = option(s.line_text, "/usr/bin/python3", doc="a Python with python3-rados")
    config: dict[str, dict[str, str]] = option(
        s.mapping_of(s.mapping_of(_config_value, name_rule=False), what="ceph.conf section"), factory=dict,
        convert=dict, doc="more ceph.conf options: {section: {option: value}}")

    def classes(self) -> list[str]:
        """The device classes of the OSDs, in first-seen order."""
        return list(dict.fromkeys(o.device_class for o in self.osds))


SECTION = Section(CephLab, "ceph-lab settings")


def rule(cls: str) -> str:
    """The CRUSH rule placing a pool on one device class."""
    return f"fsbench-{cls}"


def conf_template(lab: CephLab) -> str:
    """ceph.conf with ${service.dir} (filled by the session) and @ADDRESS@ / @FSID@ (by the first step)."""
    d = "${service.dir}"
    lines = [
        "# written by fsbench's ceph-lab service", "[global]", "fsid = @FSID@",
        "mon host = [v2:@ADDRESS@:3300,v1:@ADDRESS@:6789]", "public addr = @ADDRESS@", "cluster addr = @ADDRESS@",
        "public network = 127.0.0.0/8",
        "auth cluster required = none", "auth service required = none", "auth client required = none",
        # Pacific warns about insecure global_id reclaim even with auth none
        "auth allow insecure global id reclaim = false", "mon warn on insecure global id reclaim allowed = false",
        f"run dir = {d}/run", f"admin socket = {d}/run/$name.asok", f"pid file = {d}/run/$name.pid",
        f"log file = {d}/log/$name.log", f"mon cluster log file = {d}/log/cluster.log", f"crash dir = {d}/crash",
        "log to stderr = false", "err to stderr = true",
        "osd pool default size = 1", "osd pool default min size = 1", "osd pool default pg autoscale mode = off",
        "osd crush chooseleaf type = 0", "mon allow pool size one = true", "mon allow pool delete = true",
        "mon warn on pool no redundancy = false",
        # a shared disk with <30% free would raise MON_DISK_LOW, and stop the mon at 5%
        "mon data avail warn = 2", "mon data avail crit = 1",
        "mgr initial modules =", "mgr stats period = 1",
        # clients each get their own admin socket (per process and context: fio opens several), else the
        # CLI and the FUSE clients fight over one
        "[client]", f"admin socket = {d}/run/$name.$pid.$cctid.asok", f"pid file = {d}/run/$name.$pid.pid",
        f"log file = {d}/log/$name.$pid.log",
        # map changes commit in 50 ms instead of batching for 1 s: pools and file systems in under a second
        "[mon]", f"mon data = {d}/$name", "paxos propose interval = 0.05", "paxos min wait = 0.01",
        "mon osd reporter subtree level = osd",
        "[mgr]", f"mgr data = {d}/$name",
        "[osd]", f"osd data = {d}/$name", "osd class update on start = false",
        f"osd memory target = {lab.osd_memory_target}", "bluestore fsck on mkfs = false",
        "[mds]", f"mds data = {d}/$name", f"mds cache memory limit = {lab.mds_cache_memory_limit}",
    ]
    for i, osd in enumerate(lab.osds):
        lines += [f"[osd.{i}]", f"osd objectstore = {osd.store}"]
        if osd.store == "memstore":
            lines.append(f"memstore device bytes = {osd.size}")
        else:  # the block file must lie outside osd data, or mkfs links it to itself
            lines += [f"bluestore block path = {d}/osd.{i}.block", "bluestore block create = true",
                      f"bluestore block size = {osd.size}"]
    for section, options in lab.config.items():
        lines += [f"[{section}]", *(f"{k} = {v}" for k, v in options.items())]
    return "\n".join(lines) + "\n"


def _helper(lab: CephLab, *args: str) -> str:
    """The helper script in the service's folder ($d), run by the Python that has python3-rados."""
    return " ".join([shlex.quote(lab.python), f'"$d/{HELPER}"', *map(shlex.quote, args)])


def _mon(lab: CephLab) -> str:
    """Address, ceph.conf, mon keyring and map, the mon started; under a lock so two labs never pick one address."""
    choose = f"addr={shlex.quote(lab.address)}" if lab.address != "auto" else \
        f'addr=$({_helper(lab, "address", lab.subnet)} "$run" "${{service.host}}")'
    return "\n".join([
        'd=${service.dir}; run=${run.id}; conf="$d/ceph.conf"',
        'mkdir -p "$d/run" "$d/log" "$d/crash" "$d/mon.a" "$d/mgr.x"',
        f"exec 9>>{LOCK}; flock -w 120 9",
        choose,
        "fsid=$(cat /proc/sys/kernel/random/uuid)",
        'sed -e "s/@ADDRESS@/$addr/g" -e "s/@FSID@/$fsid/g" "$d/ceph.conf.in" > "$conf"',
        'echo "$addr" > "$d/address"',
        # --mkfs wants a keyring even with auth none
        "ceph-authtool --create-keyring \"$d/mon.keyring\" --gen-key -n mon. --cap mon 'allow *' > /dev/null",
        'monmaptool --create --clobber --fsid "$fsid" --addv a "[v2:$addr:3300,v1:$addr:6789]" "$d/monmap" '
        "> /dev/null",
        'ceph-mon -c "$conf" --mkfs -i a --monmap "$d/monmap" --keyring "$d/mon.keyring"',
        # the daemon must not inherit the lock (it would hold it for its life); the lock is released
        # once the mon holds its address, so the next lab picks another
        f'nice -n {lab.nice} ceph-mon -c "$conf" -i a 9>&-',
        f'{_helper(lab, "listening")} "$addr" 60',
    ])


def _mgr(lab: CephLab) -> str:
    """The mgr loads its Python modules (5-8 s) while the OSDs come up."""
    return f'd=${{service.dir}}; nice -n {lab.nice} ceph-mgr -c "$d/ceph.conf" -i x'


def _osds(lab: CephLab) -> str:
    """Every OSD registered with its class in one connection, then made and started in parallel."""
    classes = [o.device_class for o in lab.osds]
    return "\n".join([
        'd=${service.dir}; conf="$d/ceph.conf"; pids=""',
        f'{_helper(lab, "osds")} "$conf" {" ".join(classes)} > "$d/osd-ids"',
        'while read -r id uuid; do',
        '  ( mkdir -p "$d/osd.$id" && ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" '
        '> "$d/log/osd.$id.mkfs.log" 2>&1 &&',
        f'    nice -n {lab.nice} ceph-osd -c "$conf" -i "$id" ) & pids="$pids $!"',
        'done < "$d/osd-ids"',
        'for p in $pids; do wait "$p" || { echo "an OSD did not start: see $d/log" >&2; exit 1; }; done',
    ])


def _mds(lab: CephLab) -> str:
    """One MDS per file system (mds.a, mds.b...: the mons give each file system one of them)."""
    names = [chr(ord("a") + i) for i in range(len(lab.classes()))]
    return "; ".join(['d=${service.dir}'] + [f'nice -n {lab.nice} ceph-mds -c "$d/ceph.conf" -i {n}' for n in names])


def pool_commands(lab: CephLab) -> list[dict]:
    """The mon commands for rules, pools and file systems, per device class."""
    out: list[dict] = []

    def pool(name: str, cls: str, app: str) -> None:
        out.append({"prefix": "osd pool create", "pool": name, "pg_num": lab.pg_num, "pgp_num": lab.pg_num,
                    "pool_type": "replicated", "rule": rule(cls), "autoscale_mode": "off"})
        out.append({"prefix": "osd pool application enable", "pool": name, "app": app})

    for cls in lab.classes():
        out.append({"prefix": "osd crush rule create-replicated", "name": rule(cls), "root": "default",
                    "type": "osd", "class": cls})
        if lab.rbd:
            pool(f"rbd-{cls}", cls, "rbd")
        if lab.cephfs:
            out.append({"prefix": "osd pool create", "pool": f"cephfs-{cls}-meta", "pg_num": lab.pg_num,
                        "pgp_num": lab.pg_num, "pool_type": "replicated", "rule": rule(cls), "autoscale_mode": "off"})
            out.append({"prefix": "osd pool create", "pool": f"cephfs-{cls}-data", "pg_num": lab.pg_num,
                        "pgp_num": lab.pg_num, "pool_type": "replicated", "rule": rule(cls), "autoscale_mode": "off"})
            out.append({"prefix": "fs new", "fs_name": f"cephfs-{cls}", "metadata": f"cephfs-{cls}-meta",
                        "data": f"cephfs-{cls}-data"})
            # one MDS per file system and no standby: no "insufficient standby" warning
            out.append({"prefix": "fs set", "fs_name": f"cephfs-{cls}", "var": "standby_count_wanted", "val": "0"})
    return out


def _pools(lab: CephLab) -> str:
    cmds = " ".join(shlex.quote(json.dumps(c)) for c in pool_commands(lab))
    return f'd=${{service.dir}}; {_helper(lab, "mon")} "$d/ceph.conf" {cmds} > /dev/null'


def stop_script() -> str:
    """Kill the daemons (pid files), and any process still using this cluster's ceph.conf; delete the data."""
    return "\n".join([
        'd=${service.dir}; conf="$d/ceph.conf"; pids=""',
        'for f in "$d"/run/*.pid; do [ -e "$f" ] && pids="$pids $(cat "$f")"; done',
        # a client left by a crashed target (ceph-fuse, rbd-fuse) names the same ceph.conf
        'for p in /proc/[0-9]*; do tr "\\0" "\\n" < "$p/cmdline" 2>/dev/null | grep -qxF "$conf" '
        '&& pids="$pids ${p#/proc/}"; done',
        'for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done',
        'i=0; while [ $i -lt 100 ]; do alive=0; for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done; '
        '[ $alive = 0 ] && break; i=$((i + 1)); sleep 0.1; done',
        'rm -rf "$d"/mon.* "$d"/mgr.* "$d"/osd.* "$d"/mds.* "$d"/run "$d"/monmap "$d"/mon.keyring',
    ])


class CephLabService:
    """A single-machine Ceph cluster fsbench starts for the run and removes afterwards."""

    name = "ceph-lab"
    section = SECTION
    exports: tuple[str, ...] = ("conf", "user", *(f"{k}_{c}" for c in CLASSES for k in ("fs", "rbd_pool")))

    def settings(self, checked: dict | None) -> CephLab:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def plan(self, service: ServiceSpec[CephLab]) -> ServicePlan:
        lab = service.settings or SECTION.default()
        files = {"ceph.conf.in": conf_template(lab), HELPER: (Path(__file__).parent / HELPER).read_text()}
        start = [_mon(lab), _mgr(lab), _osds(lab)]
        start += [_mds(lab)] if lab.cephfs else []
        start.append(_pools(lab))
        ready = f'd=${{service.dir}}; {_helper(lab, "ready")} "$d/ceph.conf"'
        exports = {"conf": "${service.dir}/ceph.conf", "user": "admin"}
        for cls in CLASSES:
            exports[f"fs_{cls}"] = f"cephfs-{cls}"
            exports[f"rbd_pool_{cls}"] = f"rbd-{cls}"
        # clients on other hosts read the same conf (mon address; no cephx) at the same path, and write their
        # logs and admin sockets where its [client] section says
        return ServicePlan(files=files, start=start, ready=ready, stop=[stop_script()], exports=exports,
                           logs={"${service.dir}/log": "log", "${service.dir}/ceph.conf": "ceph.conf"},
                           client_files=("${service.dir}/ceph.conf",),
                           client_folders=("${service.dir}/run", "${service.dir}/log"))


PLUGIN: ServiceKind[CephLab] = CephLabService()
