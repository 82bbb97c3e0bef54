"""What fsbench owns on a host: its mount by identity (real findmnt), the folders it made (real mkdir),
the JuiceFS format only on an empty metadata engine; all on this machine, no mount needed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fsbench.kinds.fuse import Fuse
from fsbench.kinds.juicefs import PLUGIN as JUICEFS
from fsbench.kinds.juicefs import JuiceFS, empty_meta_check
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.run.targets.ownership import NOT_OURS, guarded, read_identity
from fsbench.scenario.model import Target
from fsbench.transport.local import LocalTransport
from tests.conftest import require


def _session(path: Path) -> TargetSession:
    target = Target(name="t", path=str(path), kind="fuse", settings=Fuse(mount="true"), client_process="x")
    return TargetSession(target, {"local": LocalTransport()}, "r1", lambda e: None)


def test_the_identity_of_a_mount_and_of_a_plain_folder(tmp_path):
    require("findmnt")
    root, unknown = read_identity(LocalTransport(), "/")
    assert unknown is None and len(root.split()) == 4  # mount id, device, type, source
    assert read_identity(LocalTransport(), str(tmp_path)) == ("", None)


def test_a_guarded_command_runs_only_on_fsbenchs_own_mount_or_none(tmp_path):
    require("findmnt")
    tr, marker = LocalTransport(), tmp_path / "ran"
    root, _ = read_identity(tr, "/")
    touch = ["touch", str(marker)]
    r = tr.run(guarded(touch, "/", "1 0:1 tmpfs someone-elses"), timeout=30)
    assert r.exit_status == NOT_OURS and not marker.exists()
    assert "/ holds a mount fsbench did not make" in r.stderr_tail and f"now: {root}" in r.stderr_tail
    assert tr.run(guarded(touch, "/", ""), timeout=30).exit_status == NOT_OURS  # none recorded: not ours either
    assert tr.run(guarded(touch, "/", root), timeout=30).ok and marker.exists()
    marker.unlink()
    assert tr.run(guarded(touch, str(tmp_path), ""), timeout=30).ok and marker.exists()  # no mount there


def test_the_recorded_clean_up_unmounts_only_the_identified_mount_and_rmdirs_only_a_made_folder(tmp_path):
    session = _session(tmp_path / "mnt")
    before = session.cleanup_commands("local")
    assert ["rmdir", str(tmp_path / "mnt")] not in before
    unmounts = [c for c in before if c[:3] == ["/bin/sh", "-e", "-c"] and "only while it holds" in c[3]]
    assert unmounts and all("fsbench recorded no mount of its own" in c[3] for c in unmounts)
    session._made_dir.add("local")
    session._ours["local"] = "77 0:99 fuse.x x"
    after = session.cleanup_commands("local")
    assert ["rmdir", str(tmp_path / "mnt")] in after
    assert any("'77 0:99 fuse.x x'" in c[3] for c in after if c[0] == "/bin/sh")


def test_an_existing_mount_target_has_no_unmount_nor_rmdir_in_its_clean_up(tmp_path):
    target = Target(name="t", path=str(tmp_path), kind="fuse", existing_mount=True, client_process="x")
    session = TargetSession(target, {"local": LocalTransport()}, "r1", lambda e: None)
    assert session.cleanup_commands("local") == [["rm", "-rf", "--", session.scratch]]


def test_a_planted_link_at_the_scratch_folder_is_refused_and_left_alone(tmp_path):
    victim = tmp_path / "victim"
    (victim / "case").mkdir(parents=True)
    session = _session(tmp_path)
    assert Path(session.scratch).name.startswith("fsbench-r1-") and len(Path(session.scratch).name) == 23
    session.scratch = str(tmp_path / "fsbench-r1")
    Path(session.scratch).symlink_to(victim)
    session._setup_started = True
    reason = session._make_scratch("local", LocalTransport())
    assert reason and "File exists" in reason and "never through an entry someone else put there" in reason
    session.teardown()
    assert (victim / "case").is_dir() and Path(session.scratch).is_symlink()


def test_juicefs_formats_only_after_checking_the_meta_is_empty_and_never_an_existing_volume(tmp_path):
    target = Target(name="jfs", path="/mnt/j", kind="juicefs", settings=JuiceFS(meta="redis://h:1/1"))
    plan = JUICEFS.plan(target, {}, "/var/tmp/s")
    assert "juicefs status redis://h:1/1" in plan.once[0][3] and plan.once[1][:2] == ["juicefs", "format"]
    existing = Target(name="jfs", path="/mnt/j", kind="juicefs",
                      settings=JuiceFS(meta="redis://h:1/1", existing=True))
    plan = JUICEFS.plan(existing, {}, "/var/tmp/s")
    assert plan.once == [] and plan.store is None and plan.mount[0][:2] == ["juicefs", "mount"]
    with_bucket = Target(name="jfs", path="/mnt/j", kind="juicefs",
                         settings=JuiceFS(meta="redis://h:1/1", existing=True, bucket="/b"))
    assert [k for k, _, _ in JUICEFS.check(with_bucket)] == [("juicefs", "bucket")]


def test_the_empty_meta_check_tells_apart_a_volume_an_empty_engine_and_an_unknown_answer(tmp_path):
    fake = tmp_path / "juicefs"

    def check(script: str) -> subprocess.CompletedProcess:
        fake.write_text("#!/bin/sh\n" + script)
        fake.chmod(0o755)
        return subprocess.run(empty_meta_check(str(fake), "redis://h:1/1"), capture_output=True, text=True)

    assert check("echo '{}'; exit 0\n").returncode == 1  # a volume: refused
    assert check("echo '<FATAL>: database is not formatted, please run' >&2; exit 1\n").returncode == 0
    unknown = check("echo 'connection refused' >&2; exit 1\n")
    assert unknown.returncode == 1 and "cannot tell whether" in unknown.stderr and "connection refused" in unknown.stderr
