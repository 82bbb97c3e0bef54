"""The destructive-path guard resolves paths on the target's host and refuses what it cannot resolve."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fsbench.core.errors import CommandResult
from fsbench.core.path_safety import RESOLVE_SCRIPT, resolved_unsafe_reason
from fsbench.transport.local import LocalTransport


class WithEnv(LocalTransport):
    """This machine, seen as a host whose commands get extra environment (its own HOME)."""

    def __init__(self, env: dict[str, str]):
        super().__init__("hostA")
        self.env = env

    def run(self, argv, **kw):
        return super().run(argv, **{**kw, "env": {**self.env, **(kw.get("env") or {})}})


class Unreachable:
    """A host whose connection breaks."""

    host = "hostB"

    def run(self, argv, **kw):
        raise ConnectionError("connection reset by peer")


class NoShell:
    """A host with no /bin/sh."""

    host = "hostC"

    def run(self, argv, **kw):
        return CommandResult(self.host, argv, 127, "", "sh: not found", 0.01)


@pytest.fixture
def no_gnu_realpath(tmp_path, monkeypatch) -> Path:
    """A PATH whose `realpath` is BusyBox-like: it knows no -m."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "realpath"
    fake.write_text("#!/bin/sh\necho 'realpath: unrecognized option: m' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return bin_dir


@pytest.fixture
def tree(tmp_path) -> Path:
    """Folders and symlinks of every shape the walk meets: absolute, relative, chains, dangling, `..`."""
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "to-etc").symlink_to("/etc")
    (root / "usr-share").symlink_to("/usr/share")
    (root / "rel").symlink_to("a/b")
    (root / "a" / "up").symlink_to("..")
    (root / "chain").symlink_to("rel")
    (root / "dangling").symlink_to("/etc/fsbench-no-such-folder")
    (root / "dangling-rel").symlink_to("a/missing/deeper")
    (root / "file").write_text("x")
    return root


TRICKY = ["to-etc", "to-etc/x/y", "usr-share/..", "rel", "rel/../..", "a/up/a/b", "chain/../b", "dangling",
          "dangling/sub", "dangling-rel/../..", "missing/../to-etc", "a/./b//", "file/x/..", "a/b/../../to-etc/.."]


def _walk(path: str) -> str:
    """The path as the portable walk resolves it."""
    out = subprocess.run(["/bin/sh", "-c", RESOLVE_SCRIPT, "t", path], capture_output=True, text=True, check=True)
    _home, _home_real, method, resolved = out.stdout.split("\0")
    assert method == "sh walk", method
    return resolved


def test_the_portable_walk_agrees_with_gnu_realpath_m(tree, no_gnu_realpath):
    for rel in TRICKY:
        path = f"{tree}/{rel}"
        gnu = subprocess.run(["/usr/bin/realpath", "-m", "--", path], capture_output=True, text=True,
                             check=True).stdout.strip()
        assert _walk(path) == gnu, rel


def test_without_gnu_realpath_a_symlink_to_a_system_folder_is_still_refused(tree, no_gnu_realpath):
    tr = LocalTransport("hostA")
    reason = resolved_unsafe_reason(tr, f"{tree}/to-etc")
    assert reason == f"{tree}/to-etc resolves to /etc on hostA, which is inside the system folder /etc"
    assert "resolves to /usr on hostA" in (resolved_unsafe_reason(tr, f"{tree}/usr-share/..") or "")
    assert "resolves to /etc/fsbench-no-such-folder" in (resolved_unsafe_reason(tr, f"{tree}/dangling") or "")
    assert resolved_unsafe_reason(tr, f"{tree}/rel") is None


def test_a_symlink_loop_is_refused_not_followed_forever(tree, no_gnu_realpath):
    (tree / "loop1").symlink_to("loop2")
    (tree / "loop2").symlink_to("loop1")
    reason = resolved_unsafe_reason(LocalTransport("hostA"), f"{tree}/loop1/x") or ""
    assert reason.startswith(f"cannot resolve {tree}/loop1/x on hostA") and "a loop?" in reason
    assert "install GNU coreutils" in reason


def test_without_readlink_a_symlink_that_is_no_folder_is_refused(tree, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # neither realpath nor readlink: only the shell's builtins
    tr = LocalTransport("hostA")
    assert resolved_unsafe_reason(tr, f"{tree}/rel") is None  # folders resolve with `cd -P` alone
    assert "resolves to /etc on hostA" in (resolved_unsafe_reason(tr, f"{tree}/to-etc") or "")
    reason = resolved_unsafe_reason(tr, f"{tree}/dangling") or ""
    assert reason.startswith(f"cannot resolve {tree}/dangling on hostA") and "readlink cannot read it" in reason


def test_a_host_that_cannot_check_fails_closed():
    reason = resolved_unsafe_reason(Unreachable(), "/data/bench") or ""
    assert reason.startswith("cannot check where /data/bench on hostB leads (connection reset by peer)")
    assert "install GNU coreutils" in reason
    reason = resolved_unsafe_reason(NoShell(), "/data/bench") or ""
    assert reason.startswith("cannot resolve /data/bench on hostC (exit status 127: sh: not found)")


def test_the_home_checked_is_the_hosts_not_the_controllers(tmp_path, monkeypatch):
    controller_home, host_home = tmp_path / "controller-home", tmp_path / "host-home"
    controller_home.mkdir()
    host_home.mkdir()
    (tmp_path / "home-link").symlink_to(host_home)
    monkeypatch.setenv("HOME", str(controller_home))
    tr = WithEnv({"HOME": str(tmp_path / "home-link")})  # the host's HOME is itself a symlink
    assert resolved_unsafe_reason(tr, str(host_home)) == f"{host_home} on hostA is a home directory"
    assert "is a home directory" in (resolved_unsafe_reason(tr, str(tmp_path / "home-link")) or "")
    assert resolved_unsafe_reason(tr, str(controller_home)) is None
    assert resolved_unsafe_reason(tr, str(host_home / "bench")) is None
