"""Ceph daemons' counters read from their admin sockets: the scope's socket list, the choice between the sockets
and `ceph tell`, and the reader against a socket that answers as Ceph's AdminSocket does (a NUL-ended JSON
command in, a 4-byte big-endian length and the JSON out)."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

from fsbench.validity import ceph, ceph_asok, ceph_mds

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "backend-counters"


def test_the_scope_lists_the_sockets_found_here() -> None:
    text = (f"{ceph.SECTION}perf\nosd.0: {{}}\n{ceph.SECTION}asok\npython /usr/bin/python3\nosd.0 /run/ceph/osd.0.asok\n"
            "osd.1 /run/ceph/osd.1.asok\nnot a line\n")
    section = ceph_asok.sections(text, ceph.SECTION)[ceph_asok.SECTION]
    assert ceph_asok.sockets(section) == {"osd.0": "/run/ceph/osd.0.asok", "osd.1": "/run/ceph/osd.1.asok"}
    argv = ceph_asok.reader_for({"prefix": "perf dump"}, {"osd.1"}, section)
    # on the `ceph` CLI's own interpreter (its #! line), without site packages
    assert argv is not None and argv[:4] == ["/usr/bin/python3", "-I", "-S", "-c"]
    assert argv[5:] == ['{"prefix": "perf dump"}', "osd.1=/run/ceph/osd.1.asok"]
    # a serving daemon without a socket here (a remote cluster): `ceph tell` stays, never a mix of both
    assert ceph_asok.reader_for({"prefix": "perf dump"}, {"osd.1", "osd.2"}, section) is None
    assert ceph_asok.reader_for({"prefix": "perf dump"}, set(), section) is None
    assert ceph_asok.reader_for({"prefix": "perf dump"}, {"osd.1"}, "") is None
    # the OSDs' scope finds its own section
    assert ceph.scoped_fast(pools=("x",))(text) is None  # no queries section: which OSDs serve is unknown


def test_the_scope_finds_the_ceph_cli_s_interpreter_and_the_sockets_that_exist(tmp_path: Path) -> None:
    """The scope's shell lines, run for real: a `ceph` script whose #! names its Python, a conf whose sockets
    exist for osd.0 only (ceph-conf stands in as a script printing each daemon's path)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ceph").write_text("#!/usr/bin/python3.11 -s\n")
    (bin_dir / "ceph-conf").write_text(f'#!/bin/sh\necho "{tmp_path}/$4.asok"\n')
    for f in ("ceph", "ceph-conf"):
        (bin_dir / f).chmod(0o755)
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(tmp_path / "osd.0.asok"))
    (tmp_path / "perf.txt").write_text("osd.0: {}\nosd.1: {}\n")
    script = "\n".join(ceph_asok.list_lines(["ceph-conf", "-c", "/x"], "osd", str(tmp_path / "perf.txt")))
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30,
                         env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    live.close()
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["python /usr/bin/python3.11", f"osd.0 {tmp_path}/osd.0.asok"]
    assert ceph_asok.python(out.stdout) == "/usr/bin/python3.11" and ceph_asok.python("") == "python3"


def test_the_mds_reader_is_chosen_for_the_file_systems_mds_only() -> None:
    dump = (GOLDEN / "ceph-fs-dump.json").read_text()
    text = (f"{ceph_mds.SECTION}fsdump\n{dump}\n{ceph_mds.SECTION}perf\nmds.a: {{}}\nmds.b: {{}}\n"
            f"{ceph_mds.SECTION}asok\nmds.a /r/mds.a.asok\nmds.b /r/mds.b.asok\n")
    argv = ceph_mds.scoped_fast("cephfs-hdd")(text)
    assert argv is not None and argv[0] == "python3"  # no interpreter found: the one on PATH
    assert argv[5:] == ['{"prefix": "perf dump", "logger": "mds_server"}', "mds.a=/r/mds.a.asok"]
    assert ceph_mds.scoped_fast("cephfs-ssd")(text.replace("mds.b /r/mds.b.asok\n", "")) is None


def _serve(path: Path, answers: dict[str, dict], seen: list[bytes]) -> threading.Thread:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)

    def loop() -> None:
        for _ in range(len(answers)):
            conn, _ = server.accept()
            data = b""
            while not data.endswith(b"\0"):
                data += conn.recv(1024)
            seen.append(data)
            body = json.dumps(answers[json.loads(data[:-1])["prefix"]]).encode()
            conn.sendall(struct.pack(">I", len(body)) + body)
            conn.close()
        server.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def test_the_reader_prints_each_daemon_s_answer_in_the_tell_shape(tmp_path: Path) -> None:
    answer = {"osd": {"op_r": 5, "op_r_out_bytes": 4096, "op_w": 2, "op_w_in_bytes": 8192}}
    seen: list[bytes] = []
    thread = _serve(tmp_path / "osd.0.asok", {"perf dump": answer}, seen)
    argv = ceph_asok.reader_argv({"prefix": "perf dump"}, {"osd.0": str(tmp_path / "osd.0.asok")})
    out = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=30)
    thread.join(5)
    assert out.returncode == 0, out.stderr
    assert seen == [b'{"prefix": "perf dump"}\0']
    assert out.stdout.startswith("osd.0: {")
    snap = ceph.parse_perf(out.stdout)
    assert snap is not None and snap.ops["rados_read"].bytes == 4096 and snap.ops["rados_write"].bytes == 8192


def test_a_socket_that_does_not_answer_fails_the_read(tmp_path: Path) -> None:
    argv = ceph_asok.reader_argv({"prefix": "perf dump"}, {"osd.0": str(tmp_path / "gone.asok")})
    out = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and out.stdout == ""


def test_a_run_reads_a_targets_scope_once_and_every_case_keeps_it(tmp_path: Path) -> None:
    """Which OSDs and MDSs serve a target is asked of the monitors by the first case; the next cases of the run
    reuse the answer (each still records it in its raw folder), and the counters are then read from the
    sockets the scope found."""
    from types import SimpleNamespace

    from fsbench.kinds.cephfs import PLUGIN as CEPHFS
    from fsbench.kinds.cephfs import CephFS
    from fsbench.transport.fake import FakeTransport
    from fsbench.validity.backends import ScopeCache, kind_sources

    dump = (GOLDEN / "ceph-fs-dump.json").read_text()
    osd_scope = ((GOLDEN / "ceph-scope-queries-cephfs-hdd.txt").read_text()
                 + f"\n{ceph.SECTION}perf\n" + (GOLDEN / "ceph-tell-osd-perf-dump.txt").read_text()
                 + f"\n{ceph.SECTION}asok\npython /usr/bin/python3\nosd.0 /r/osd.0.asok\nosd.1 /r/osd.1.asok\n")
    mds_scope = (f"{ceph_mds.SECTION}fsdump\n{dump}\n{ceph_mds.SECTION}perf\n"
                 + (GOLDEN / "ceph-tell-mds-perf-dump.txt").read_text()
                 + f"\n{ceph_mds.SECTION}asok\nmds.a /r/mds.a.asok\nmds.b /r/mds.b.asok\n")
    host = FakeTransport("c1")
    host.on(r"which OSDs serve", stdout=osd_scope)
    host.on(r"which MDSs serve", stdout=mds_scope)
    target = SimpleNamespace(name="cephfs-hdd", path="/mnt/x", settings=CephFS(fs="cephfs-hdd", conf="/c/ceph.conf"))
    scopes = ScopeCache()
    got = []
    for case in ("c1", "c2", "c3"):
        notes: list[str] = []
        got.append(kind_sources((CEPHFS,), target, {}, [("c1", host)], tmp_path / case, notes, scopes))
        assert notes == [], notes
        assert (tmp_path / case / "backend-cephfs-hdd.scope.txt").read_text() == osd_scope
    assert len(host.commands()) == 2  # one scope of each kind, for three cases
    osd, mds = got[-1]
    assert mds.argv is not None and mds.argv[0] == "python3" and mds.argv[-1] == "mds.a=/r/mds.a.asok"
    assert osd.argv is not None and osd.argv[0] == "/usr/bin/python3" and osd.argv[-2:] == ['{"prefix": "perf dump"}', "osd.1=/r/osd.1.asok"]  # its OSD
    # without the cache, every case asks again
    kind_sources((CEPHFS,), target, {}, [("c1", host)], tmp_path / "c4", [])
    assert len(host.commands()) == 4
