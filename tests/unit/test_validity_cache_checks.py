"""The page cache check's verdicts in numbers, the working set fio declares, and the client cache folders
each S3 FUSE kind names (only those inside the run's scratch space are ever emptied)."""

from __future__ import annotations

from types import SimpleNamespace

from fsbench.kinds import KINDS
from fsbench.run.targets.cache import _inside
from fsbench.tools import get_tool
from fsbench.validity.checks import PAGE_CACHE_FIT
from fsbench.validity.judge import checks_of, judge
from fsbench.validity.pagecache import HostCache
from fsbench.validity.settings import Thresholds
from fsbench.validity.watch import Evidence

MIB, GIB = 1024 * 1024, 1024 ** 3


def _rows(read: float) -> list[dict]:
    return [{"tool": "fio", "operation": "read", "metric": m, "value": v, "stat": "value", "host": "local"}
            for m, v in (("io_bytes", read), ("bandwidth", read / 0.1))]


def _seen(ws: float | None, dropped: bool, mem: int = 8 * GIB) -> Evidence:
    return Evidence.host_only(HostCache("local", mem, 2 * GIB, dropped, ws))


def test_a_small_working_set_read_without_a_drop_is_flagged_with_its_numbers():
    rows = _rows(256 * MIB)
    (v,) = judge(rows, "fio", [PAGE_CACHE_FIT], _seen(256 * MIB, dropped=False), Thresholds())
    assert not v.ok and rows[0]["validity"] == "flagged"
    assert v.detail.startswith("fio read 256 MiB of a 256 MiB working set; the page cache of local can hold 4 GiB "
                               "(50 % of its 8 GiB of memory), and it was not dropped before the read, 2 GiB cached")


def test_after_a_drop_one_pass_holds_and_a_re_read_does_not():
    (once,) = judge(_rows(256 * MIB), "fio", [PAGE_CACHE_FIT], _seen(256 * MIB, dropped=True), Thresholds())
    assert once.ok and once.detail.endswith("dropped before the read, read once")
    (again,) = judge(_rows(1 * GIB), "fio", [PAGE_CACHE_FIT], _seen(256 * MIB, dropped=True), Thresholds())
    assert not again.ok and "fio read it 4.0 times" in again.detail


def test_a_working_set_bigger_than_the_page_cache_holds_and_the_share_is_a_setting():
    (big,) = judge(_rows(6 * GIB), "fio", [PAGE_CACHE_FIT], _seen(6 * GIB, dropped=False), Thresholds())
    assert big.ok and big.detail.endswith("more than it holds")
    (small,) = judge(_rows(6 * GIB), "fio", [PAGE_CACHE_FIT], _seen(6 * GIB, dropped=False),
                     Thresholds(page_cache_share=0.9))
    assert not small.ok


def test_no_verdict_where_a_backend_counts_or_nothing_was_read():
    backend = Evidence(("s3",), 0, 0, 0, 0, 1.0, None, 0.0, True, HostCache("local", 8 * GIB, 0, False, MIB))
    assert judge(_rows(MIB), "fio", [PAGE_CACHE_FIT], backend, Thresholds()) == []
    assert judge(_rows(0), "fio", [PAGE_CACHE_FIT], _seen(MIB, dropped=False), Thresholds()) == []
    # the backend checks say nothing of a case whose backends count nothing
    fio_checks = checks_of(get_tool("fio"))
    assert [v.check for v in judge(_rows(MIB), "fio", fio_checks, _seen(MIB, False), Thresholds())] == \
        [PAGE_CACHE_FIT.name]


def test_fio_declares_the_working_set_of_its_buffered_reads():
    fio = get_tool("fio")
    assert PAGE_CACHE_FIT in fio.validity_checks
    assert fio.read_working_set({"rw": "read", "size": "8m", "numjobs": 4}, None, {}) == 32 * MIB
    assert fio.read_working_set({"rw": "read", "size": "8m", "direct": 1}, None, {}) == 0
    assert fio.read_working_set({"rw": "write", "size": "8m"}, None, {}) == 0


def test_each_s3_fuse_kind_names_its_cache_folder():
    def plan(kind: str, settings: object) -> list[str]:
        target = SimpleNamespace(name="t", path="/mnt/x", settings=settings)
        return KINDS.get(kind).plan(target, {"run.scratch": "/var/tmp/fsbench/r1"}, "/var/tmp/fsbench/r1").caches

    store = KINDS.get("s3fs").settings({"endpoint": "http://e", "bucket": "b", "binary": "s3fs",
                                        "options": ["use_cache=/var/tmp/fsbench/r1/c", "parallel_count=4"]})
    assert plan("s3fs", store) == ["/var/tmp/fsbench/r1/c"]
    plain = KINDS.get("s3fs").settings({"endpoint": "http://e", "bucket": "b", "binary": "s3fs"})
    assert plan("s3fs", plain) == []
    rclone = KINDS.get("rclone").settings({"endpoint": "http://e", "bucket": "b", "binary": "rclone"})
    assert plan("rclone", rclone) == ["/var/tmp/fsbench/r1/rclone/t/cache"]
    fuse = KINDS.get("fuse").settings({"mount": "s3fs b /mnt/x", "cache_dir": "${run.scratch}/s3fs-cache"})
    assert plan("fuse", fuse) == ["/var/tmp/fsbench/r1/s3fs-cache"]


def test_only_folders_inside_the_runs_scratch_are_ever_emptied():
    assert _inside("/var/tmp/fsbench/r1/c", "/var/tmp/fsbench/r1")
    assert not _inside("/var/tmp/fsbench/r1", "/var/tmp/fsbench/r1")
    assert not _inside("/var/tmp/fsbench/r1/../r2/c", "/var/tmp/fsbench/r1")
    assert not _inside("/var/cache/s3fs", "/var/tmp/fsbench/r1")


def test_a_cache_folder_is_emptied_unless_it_holds_writes_not_yet_uploaded(tmp_path):
    import subprocess

    from fsbench.run.targets.cache import empty_script

    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    for folder, flag in ((clean, "false"), (dirty, "true")):
        (folder / "vfs" / "b").mkdir(parents=True)
        (folder / "vfs" / "b" / "f").write_bytes(b"x" * 4096)
        (folder / "vfsMeta" / "b").mkdir(parents=True)
        (folder / "vfsMeta" / "b" / "f").write_text('{\n\t"Size": 4096,\n\t"Dirty": ' + flag + "\n}\n")
    ok = subprocess.run(empty_script(str(clean)), capture_output=True, text=True)
    assert ok.returncode == 0 and clean.is_dir() and list(clean.iterdir()) == []
    kept = subprocess.run(empty_script(str(dirty)), capture_output=True, text=True)
    assert kept.returncode == 4 and "has not uploaded yet: not emptied" in kept.stderr
    assert (dirty / "vfs" / "b" / "f").stat().st_size == 4096


def test_a_read_from_a_tmpfs_target_is_memory_by_design_and_not_flagged(tmp_path):
    seen = Evidence.host_only(HostCache("local", 8 * GIB, 2 * GIB, False, 256 * MIB, "tmpfs"))
    (v,) = judge(_rows(1 * GIB), "fio", [PAGE_CACHE_FIT], seen, Thresholds())
    assert v.ok and "is a tmpfs on local" in v.detail


def test_the_memory_and_the_memory_file_system_are_read_on_the_host_in_one_command(tmp_path):
    from fsbench.transport.local import LocalTransport
    from fsbench.validity.pagecache import read_facts

    tr = LocalTransport()
    memory, kind = read_facts(tr, "/dev/shm")
    assert kind == "tmpfs"  # a tmpfs on every Linux host with /dev/shm
    assert memory["MemTotal"] > 0 and memory["MemTotal"] % 1024 == 0 and "Cached" in memory
    assert read_facts(tr, "/")[1] == ""
    assert read_facts(tr, "")[1] == "" and read_facts(tr, "")[0]["MemTotal"] == memory["MemTotal"]
    # a path that is not there: the memory still read, no type
    missing, kind = read_facts(tr, str(tmp_path / "gone"))
    assert kind == "" and missing["MemTotal"] == memory["MemTotal"]


def test_the_facts_of_a_host_without_meminfo_are_none_and_a_failed_stat_gives_no_type():
    from fsbench.core.errors import CommandResult
    from fsbench.validity.pagecache import read_facts

    class Host:
        host = "h"

        def __init__(self, status: int, out: str) -> None:
            self.status, self.out = status, out

        def run(self, argv, **_):
            return CommandResult("h", argv, self.status, extra={"stdout": self.out})

    assert read_facts(Host(1, "@@\n"), "/x") == ({}, "")
    # stat printed a type but failed: not trusted
    assert read_facts(Host(1, "MemTotal: 4 kB\n@@\ntmpfs\n"), "/x") == ({"MemTotal": 4096}, "")
    assert read_facts(Host(0, "MemTotal: 4 kB\n@@\ntmpfs\n"), "/x") == ({"MemTotal": 4096}, "tmpfs")
    assert read_facts(Host(0, "MemTotal: 4 kB\n"), "/x") == ({}, "")  # cut before its end: nothing trusted
