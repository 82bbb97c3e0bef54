"""The destructive-path guard over a real SSH connection: the path is resolved on the host, against the home
of the user fsbench logs in as there, and a host without a usable `realpath -m` still gets its paths resolved."""

from __future__ import annotations

from fsbench.core.path_safety import RESOLVE_SCRIPT, resolved_unsafe_reason


def test_paths_are_resolved_on_the_host_against_its_own_home(lab, tmp_path):
    t = lab.transport("127.0.0.3")
    try:
        (tmp_path / "to-etc").symlink_to("/etc")
        (tmp_path / "bench").mkdir()
        assert resolved_unsafe_reason(t, f"{tmp_path}/to-etc/x") == \
            f"{tmp_path}/to-etc/x resolves to /etc/x on {t.host}, which is inside the system folder /etc"
        assert resolved_unsafe_reason(t, f"{tmp_path}/bench") is None
        home = t.run(["sh", "-c", 'printf %s "$HOME"']).extra["stdout"]
        out = t.run(["/bin/sh", "-c", RESOLVE_SCRIPT, "x", f"{tmp_path}/to-etc"]).extra["stdout"].split("\0")
        assert out[0] == home and out[3] == "/etc"  # the login's own $HOME, NUL-separated fields intact
        # the host's realpath knows no -m (BusyBox-like, first on the PATH of every session): the walk answers
        fake = tmp_path / "bin"
        fake.mkdir()
        (fake / "realpath").write_text("#!/bin/sh\necho 'realpath: unrecognized option: m' >&2\nexit 1\n")
        (fake / "realpath").chmod(0o755)
        walked = t.run(["/bin/sh", "-c", f"PATH={fake}:$PATH; export PATH; exec /bin/sh -c \"$0\" x \"$1\"",
                        RESOLVE_SCRIPT, f"{tmp_path}/to-etc/x/.."]).extra["stdout"].split("\0")
        assert walked[2:] == ["sh walk", "/etc"]
    finally:
        t.close()
