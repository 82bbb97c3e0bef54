"""Run on the lab's host by the system Python (python3-rados): address choice, mon commands, readiness.

The ceph-lab service kind ships this file into the service's folder and calls it from its start
steps and ready probe. It is a script, not part of fsbench's import graph: it imports only the
standard library and `rados` (Debian's python3-rados), which exists for the system Python only.
Each `ceph` CLI call costs 0.4-1.5 s of Python start-up; one librados connection runs them all.
"""

from __future__ import annotations

import json
import socket
import sys
import time
import uuid
import zlib

#: the mon's ports (msgr2, msgr1): an address is free when nothing holds either on it
MON_PORTS = (3300, 6789)
TIMEOUT_S = 30


def free_address(prefix: str, seed: str) -> str:
    """The first loopback address PREFIX.N (2..254) where both mon ports can be bound, from a seed's place."""
    start = zlib.crc32(seed.encode()) % 253
    for i in range(253):
        candidate = f"{prefix}.{2 + (start + i) % 253}"
        try:
            for port in MON_PORTS:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind((candidate, port))
        except OSError:
            continue
        return candidate
    raise SystemExit(f"no free address in {prefix}.2-254 (ports {MON_PORTS})")


def lab_address(prefix: str, seed: str, host: str = "") -> str:
    """The service host's own address where clients on other machines reach it (an inventory host), else a
    free loopback address PREFIX.N: a lab for this machine alone."""
    if host:
        try:
            own = socket.gethostbyname(host)
        except OSError as exc:
            raise SystemExit(f"cannot resolve the service's host address {host!r} here: {exc}") from None
        if not own.startswith("127."):
            for port in MON_PORTS:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    try:
                        s.bind((own, port))
                    except OSError as exc:
                        raise SystemExit(f"{own}:{port} (the mon's port) cannot be bound ({exc}): a Ceph mon may "
                                         "run there already; stop it, or run the lab on another host") from None
            return own
    return free_address(prefix, seed)


def wait_listening(address: str, seconds: float) -> None:
    """Return once the mon accepts connections on its msgr2 port; exit 1 after seconds."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection((address, MON_PORTS[0]), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"nothing listens on {address}:{MON_PORTS[0]} after {seconds:.0f}s") from None
            time.sleep(0.1)


def connect(conf: str):
    """A librados connection as client.admin (the lab runs with auth none)."""
    import rados  # Debian's python3-rados: the system Python only

    cluster = rados.Rados(conffile=conf, rados_id="admin")
    cluster.conf_set("client_mount_timeout", str(TIMEOUT_S))
    cluster.connect(timeout=TIMEOUT_S)
    return cluster


def mon_commands(conf: str, commands: list[str]) -> None:
    """Run mon commands in order (JSON each); print their outputs."""
    cluster = connect(conf)
    try:
        for text in commands:
            ret, out, err = cluster.mon_command(text, b"", timeout=TIMEOUT_S)
            if ret != 0:
                raise SystemExit(f"mon command {text} failed: {ret} {err}")
            if out:
                print(out.decode().strip())
    finally:
        cluster.shutdown()


def new_osds(conf: str, classes: list[str]) -> None:
    """Register one OSD per class given (in order), each with its device class; print `id uuid` lines.

    The lab's ceph.conf has a section per OSD id (its store and size), so the ids must be 0, 1, ...
    in the order asked, which a fresh cluster gives.
    """
    cluster = connect(conf)
    try:
        for i, cls in enumerate(classes):
            osd_uuid = str(uuid.uuid4())
            cmd = json.dumps({"prefix": "osd new", "uuid": osd_uuid})
            ret, out, err = cluster.mon_command(cmd, json.dumps({"crush_device_class": cls}).encode(),
                                                timeout=TIMEOUT_S)
            if ret != 0 or out.decode().strip() != str(i):
                raise SystemExit(f"osd new gave {ret} {out.decode().strip()!r} {err} (expected id {i})")
            print(i, osd_uuid)
    finally:
        cluster.shutdown()


def ready(conf: str) -> None:
    """Exit 0 when every PG is active+clean, every file system has an active MDS and health is not ERR."""
    cluster = connect(conf)
    try:
        def query(prefix: str) -> dict:
            ret, out, _err = cluster.mon_command(json.dumps({"prefix": prefix, "format": "json"}), b"",
                                                 timeout=TIMEOUT_S)
            return json.loads(out) if ret == 0 and out else {}

        status, fs = query("status"), query("fs dump")
    finally:
        cluster.shutdown()
    health = status.get("health", {})
    pgs = status.get("pgmap", {})
    clean = sum(s["count"] for s in pgs.get("pgs_by_state", []) if s["state_name"] == "active+clean")
    systems = fs.get("filesystems", [])
    active = sum(any(i.get("state") == "up:active" for i in f.get("mdsmap", {}).get("info", {}).values())
                 for f in systems)
    osds = status.get("osdmap", {})
    summary = (f"health={health.get('status')} checks={','.join(sorted(health.get('checks', {}))) or '-'} "
               f"osds_up={osds.get('num_up_osds')}/{osds.get('num_osds')} pgs_clean={clean}/{pgs.get('num_pgs')} "
               f"mds_active={active}/{len(systems)}")
    print(summary)
    ok = health.get("status") != "HEALTH_ERR" and pgs.get("num_pgs") and clean == pgs["num_pgs"] \
        and active == len(systems) and osds.get("num_up_osds") == osds.get("num_osds")
    sys.exit(0 if ok else 1)


def main(argv: list[str]) -> None:
    """address PREFIX SEED [HOST] | listening ADDRESS SECONDS | mon CONF JSON... | osds CONF CLASS... | ready CONF."""
    if len(argv) in (3, 4) and argv[0] == "address":
        print(lab_address(*argv[1:]))
    elif len(argv) == 3 and argv[0] == "listening":
        wait_listening(argv[1], float(argv[2]))
    elif len(argv) >= 2 and argv[0] == "mon":
        mon_commands(argv[1], argv[2:])
    elif len(argv) >= 2 and argv[0] == "osds":
        new_osds(argv[1], argv[2:])
    elif len(argv) == 2 and argv[0] == "ready":
        ready(argv[1])
    else:
        raise SystemExit("usage: ceph_lab_helper.py address PREFIX SEED [HOST] | listening ADDRESS SECONDS "
                         "| mon CONF JSON... | osds CONF CLASS... | ready CONF")


if __name__ == "__main__":
    main(sys.argv[1:])
