"""Heavy systems the end-to-end tests share: one Ceph lab, one HDFS with an S3 server, per test session.

Each lab starts on its first user's setup and stops after its last user's teardown (not at the end of
the session: an idle Ceph or a pair of JVMs would take CPU from every test after it), and the modules that
use a lab run one after the other so it runs once. Labs are started by fsbench's own service kinds, as a
run starts them; tests that prove a service's own start, stop or clean-up keep starting their own.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from fsbench import hadoop
from fsbench.run.targets.services import ServiceSession
from fsbench.scenario.load import load_scenario
from fsbench.scenario.model import Service
from fsbench.services import SERVICE_KINDS
from fsbench.transport.local import LocalTransport
from tests.conftest import require
from tests.paths import REPO

CEPH_SCENARIO = REPO / "scenarios" / "cephfs-vs-rbd.yaml"
CEPH_BINARIES = ("ceph-mon", "ceph-mgr", "ceph-osd", "ceph-mds", "ceph-fuse", "rbd-fuse", "rbd", "ceph", "losetup",
                 "mkfs.ext4", "fio", "mdtest", "mpirun")
HADOOP_TOOLS = ("java", "curl", "fsbench-s3", "redis-server", "juicefs", "python3")


def processes_with(text: str) -> list[str]:
    """Command lines of live processes (not this one, not zombies) that mention text."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            out.append(f"{entry.name}: {cmdline}")  # whole: a JVM's class name comes after its long classpath
    return out


def gone(text: str, within_s: float = 20.0) -> list[str]:
    """The processes that still mention text after waiting up to within_s for them to exit."""
    deadline = time.monotonic() + within_s
    while (left := processes_with(text)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return left


def require_ceph() -> None:
    """Ceph's daemons and clients, python3-rados and root with /dev/fuse: fails (not skips) without them."""
    for binary in CEPH_BINARIES:
        require(binary)
    r = subprocess.run(["/usr/bin/python3", "-c", "import rados, rbd"], capture_output=True, text=True)
    assert r.returncode == 0, f"python3-rados / python3-rbd missing: {r.stderr}"
    assert Path("/dev/fuse").exists() and os.geteuid() == 0, "FUSE mounts and loop devices need root"


@contextmanager
def ceph_lab() -> Iterator[str]:
    """Seed 004's lab cluster at its smoke sizes (a memstore OSD of class ssd, a bluestore one of class hdd,
    a pool and a file system per class), started and stopped by the ceph-lab service kind: its conf path."""
    require_ceph()
    # short: the daemons' admin sockets live under it, and a socket path has at most 107 bytes
    scratch = Path(tempfile.mkdtemp(prefix="fsbench-cl-", dir="/tmp"))
    try:
        svc = load_scenario(CEPH_SCENARIO, ["scale=smoke"]).services["ceph"]
        assert [(o.store, o.size, o.device_class) for o in svc.settings.osds] == [
            ("memstore", 2 * 2**30, "ssd"), ("bluestore", 4 * 2**30, "hdd")]
        svc = replace(svc, ready_timeout_s=300)
        # a run id of its own: the stop ends the processes marked with it, so a fixed one would stop the lab
        # of another test session on the machine too (it did: a fixed id killed a concurrent session's daemons)
        run_id = f"test-ceph-lab-{secrets.token_hex(4)}"
        tr = LocalTransport("local")
        tr.marker = {"FSBENCH_RUN": run_id}
        session = ServiceSession(svc, "local", tr, run_id, str(scratch), scratch / "logs", lambda e: None)
        started = time.monotonic()
        reason = session.start(threading.Event())
        conf = f"{scratch}/services/ceph/ceph.conf"
        try:
            assert reason is None, reason
            assert session.exported()["services.ceph.conf"] == conf
            address = Path(conf).with_name("address").read_text().strip()
            assert address.startswith("127.0.10."), address  # a loopback address of its own, chosen for the lab
            print(f"shared ceph lab ready in {time.monotonic() - started:.1f}s on {address}")
            yield conf
        finally:
            session.stop()
        data = Path(conf).parent
        assert gone(str(data)) == [], "the lab's daemons outlived its stop"
        assert not list(data.glob("osd.*")) and not list(data.glob("mon.*")), "the lab's data was not removed"
        assert (scratch / "logs" / "log").is_dir(), "the daemons' logs were not kept"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # also after a failed start: nothing of the lab stays


@dataclass
class HadoopLab:
    """The session's HDFS and S3 server: where they listen."""

    hdfs_url: str
    hdfs_http: str
    s3_port: str
    s3_endpoint: str
    logs: Path

    def hdfs_list(self, path: str) -> list[str]:
        """Names in an HDFS folder (WebHDFS); [] when it does not exist."""
        try:
            # 60 s: a loaded machine kept the NameNode's HTTP answer past 10 s once in a full run
            with urllib.request.urlopen(f"{self.hdfs_http}/webhdfs/v1{path}?op=LISTSTATUS", timeout=60) as r:
                return [s["pathSuffix"] for s in json.load(r)["FileStatuses"]["FileStatus"]]
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise

    def s3_keys(self, prefix: str) -> str:
        """The bucket's listing under prefix (fsbench-s3 checks no signature)."""
        with urllib.request.urlopen(f"{self.s3_endpoint}/fsbench?prefix={prefix}", timeout=10) as r:
            return r.read().decode()


def _start_service(kind: str, settings: object, folder: Path, name: str) -> ServiceSession:
    svc = Service(name=name, kind=kind, hosts=("local",), ready_timeout_s=240.0, settings=settings)
    session = ServiceSession(svc, "local", LocalTransport("local"), f"test-{secrets.token_hex(3)}",
                             str(folder / "scratch"), folder / "logs" / name, lambda e: None)
    reason = session.start()
    if reason:
        session.stop()
        pytest.fail(reason)
    return session


@contextmanager
def hadoop_lab() -> Iterator[HadoopLab]:
    """A single-node HDFS and an S3 server (fsbench-s3, bucket fsbench), started by fsbench's service kinds."""
    for tool in HADOOP_TOOLS:
        require(tool)
    assert Path(hadoop.home(), "fsbench-hadoop.jar").is_file(), hadoop.MISSING.format(home=hadoop.home())
    folder = Path(tempfile.mkdtemp(prefix="fsbench-hadoop-lab-", dir="/var/tmp"))
    try:
        hdfs = _start_service("hdfs", SERVICE_KINDS.get("hdfs").settings(None), folder, "hdfs")
        try:
            s3 = _start_service("s3", SERVICE_KINDS.get("s3").settings(
                {"buckets": ["fsbench"], "server": "fsbench-s3", "backend": "mem", "region": "us-east-1"}), folder,
                "s3")
        except BaseException:
            hdfs.stop()
            raise
        values = {**hdfs.exported(), **s3.exported()}
        services = str(folder / "scratch" / "services")
        running = processes_with(services)
        try:
            # what the stop must end, found by the service folder in their command lines
            assert [n for n in ("NameNode", "DataNode", "fsbench-s3") if not any(n in c for c in running)] == [], \
                running
            yield HadoopLab(values["services.hdfs.url"], f"http://127.0.0.1:{values['services.hdfs.port_http']}",
                            values["services.s3.port"], values["services.s3.endpoint"], folder / "logs")
        finally:
            s3.stop()
            hdfs.stop()
        # stopped: the NameNode and DataNode JVMs (their classpath holds the service's folder) and
        # fsbench-s3 (its -db file is there) are gone, and the logs were fetched before their folder goes
        assert gone(services) == [], "the lab's HDFS or S3 server outlived its stop"
        assert (folder / "logs" / "hdfs" / "logs" / "namenode.log").stat().st_size > 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # also after a failed start: nothing of the lab stays


#: the shared labs by fixture name (tests/e2e/conftest.py makes each a fixture of that name)
LABS: dict[str, Callable[[], Any]] = {"ceph_lab": ceph_lab, "hadoop_lab": hadoop_lab}


class SharedLabs:
    """The running labs: started on first use, stopped after the last test of the session that uses each."""

    def __init__(self) -> None:
        self.running: dict[str, tuple[Any, ExitStack]] = {}
        self.last_user: dict[str, str] = {}  # lab -> node id of the last collected test that uses it
        self.failed: dict[str, str] = {}  # lab -> why its start failed (its later users fail at once)

    def get(self, name: str) -> Any:
        """The lab, started now if it is not running; a start that failed once is not tried again."""
        if name in self.failed:
            pytest.fail(f"the shared {name} failed to start earlier in this session: {self.failed[name]}")
        if name not in self.running:
            stack = ExitStack()
            try:
                value = stack.enter_context(LABS[name]())
            except BaseException as exc:
                self.failed[name] = f"{type(exc).__name__}: {str(exc)[:500]}"
                raise
            self.running[name] = (value, stack)
        return self.running[name][0]

    def stop(self, name: str) -> None:
        """Stop one lab; its checks (nothing of it left) raise here."""
        _, stack = self.running.pop(name)
        stack.close()

    def stop_all(self) -> None:
        """Stop every running lab; the first failure is raised after all were stopped."""
        failure: BaseException | None = None
        for name in list(self.running):
            try:
                self.stop(name)
            except BaseException as exc:  # stop the others before reporting this one
                failure = failure or exc
        if failure:
            raise failure

    # pytest hooks (registered by tests/e2e/conftest.py)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Run the modules of one lab one after another (each where its lab's first module was), keeping every
        other order, and note each lab's last user, after deselection (trylast)."""
        modules: dict[str, list[pytest.Item]] = {}
        for item in items:
            modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
        first: dict[str, int] = {}  # lab -> position of its first module
        keys: dict[str, int] = {}
        for position, (module, its) in enumerate(modules.items()):
            used = [lab for lab in LABS if any(lab in getattr(i, "fixturenames", ()) for i in its)]
            for lab in used:
                first.setdefault(lab, position)
            keys[module] = min([first[lab] for lab in used] or [position])
        order = sorted(modules, key=lambda m: keys[m])  # stable: modules keep their order within a key
        items[:] = [item for module in order for item in modules[module]]
        self.last_user = {lab: item.nodeid for item in items for lab in LABS
                          if lab in getattr(item, "fixturenames", ())}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        """After the last user's own teardown, stop its lab: its checks fail that test's teardown."""
        try:
            return (yield)
        finally:
            for lab in [lab for lab in self.running if self.last_user.get(lab) == item.nodeid]:
                self.stop(lab)

    def pytest_sessionfinish(self) -> None:
        """Stop what a stopped session (-x, ^C, a later user deselected by xdist) left running."""
        self.stop_all()
