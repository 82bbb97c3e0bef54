"""CephFS as a target kind: mounted with the kernel client where the host has one, else with ceph-fuse.

`client: auto` tries the kernel client when the host's kernel knows the `ceph` file system (or
`modprobe ceph` loads it) and falls back to ceph-fuse when it does not, or when the kernel mount
itself fails (a container may see modules it cannot use); which one was used, and why auto did not
use the kernel, is kept in the target's state and shown in hosts.csv beside findmnt's facts.
ceph-fuse runs with its pid file and log in the run's scratch space; its log is kept in targets/<name>/.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.shell import render, sh
from fsbench.kinds.ceph_client import (
    ceph_conf,
    client_args,
    conf_option,
    counters,
    keyring_option,
    q,
    state_dir,
    user_option,
)
from fsbench.validity import ceph_mds as mds
from fsbench.validity.backends import Counters
from fsbench.validity.engine import CHANGES_AT_MDS
from fsbench.validity.watch import METADATA

CLIENTS = ("auto", "kernel", "fuse")
#: how a host says it has the kernel client: the file system registered, or its module loaded now (a
#: module merely on disk, as modinfo would find it, may be one the kernel cannot load, e.g. in a container)
KERNEL_PROBE = "grep -qw ceph /proc/filesystems || modprobe -q ceph 2> /dev/null"
#: how much of the kernel mount's error the `via` fact keeps
REASON_CHARS = 160


@dataclass(frozen=True)
class CephFS:
    """A CephFS file system (or a folder of it) mounted at the target's path."""

    fs: str = option(s.line_text, "", doc="the file system's name (ceph fs ls); default: the cluster's default")
    root: str = option(s.line_text, "/", doc="the folder of the file system to mount")
    client: str = option(s.one_of(*CLIENTS), "auto",
                         doc="auto: the kernel client where the host has it and it mounts, else ceph-fuse")
    conf: str = conf_option()
    keyring: str = keyring_option()
    user: str = user_option()
    fuse_options: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple, doc="more ceph-fuse arguments")
    kernel_options: tuple[str, ...] = option(s.list_of(s.line_text), (), convert=tuple,
                                             doc="more `mount -t ceph -o` options")


SECTION = Section(CephFS, "cephfs settings")


class CephFSKind:
    """CephFS through the kernel client or ceph-fuse."""

    name = "cephfs"
    address = "directory"
    section = SECTION
    client_process = "ceph-fuse"  # the kernel client has none: its samples are then empty
    validity_checks = (CHANGES_AT_MDS,)

    def settings(self, checked: dict | None) -> CephFS:
        return SECTION.build(checked) or SECTION.default()  # every key has a default: the section may be left out

    def texts(self, settings: CephFS | None) -> list[tuple[str, str]]:
        spec = settings or SECTION.default()
        return [("fs", spec.fs), ("root", spec.root), ("conf", spec.conf), ("keyring", spec.keyring),
                ("user", spec.user)]

    def check(self, target: KindTarget[CephFS]) -> list[KindIssue]:
        spec = target.settings or SECTION.default()
        if not spec.root.startswith("/"):
            return [(("cephfs", "root"), f"root {spec.root!r} is not an absolute folder of the file system",
                     "for example / or /benchmarks")]
        if spec.keyring and spec.client != "fuse":
            return [(("cephfs", "keyring"), "the kernel client finds its key through the conf, not a keyring path",
                     "set `client: fuse`, or put `keyring = PATH` in the conf and drop this key")]
        return []

    def counters(self, target: KindTarget[CephFS], values: dict[str, str]) -> list[Counters]:
        """What the OSDs of the file system's data pools served (fsbench.validity.ceph), and the requests of
        each kind its MDSs served (fsbench.validity.ceph_mds)."""
        spec = target.settings or SECTION.default()
        ceph = ["ceph", *client_args(spec.conf, spec.user, spec.keyring, values)]
        fs, name = render(spec.fs, values, quote=False), target.name or "cephfs"
        return [counters(name, ceph, fs=fs),
                Counters(f"{name}-mds", mds.perf_argv(ceph), mds.parse_perf,
                         scope_argv=mds.scope_argv(ceph, fs, ceph_conf(ceph)), scope=mds.scoped_parser(fs),
                         fast=mds.scoped_fast(fs), what=f"the MDSs of CephFS {fs or '(default)'}", role=METADATA)]

    def plan(self, target: KindTarget[CephFS], values: dict[str, str], scratch: str) -> KindPlan:
        """Mount with the client the host has; unmount; kill a stuck ceph-fuse after a crash."""
        spec = target.settings or SECTION.default()
        path, name = target.path, target.name
        state = state_dir(scratch, name)
        fs, root = render(spec.fs, values, quote=False), render(spec.root, values, quote=False)
        args = client_args(spec.conf, spec.user, spec.keyring, values)
        pid, log = posixpath.join(state, "ceph-fuse.pid"), posixpath.join(state, "ceph-fuse.log")
        fuse = ["ceph-fuse", *args, *(["--client_fs", fs] if fs else []), *(["-r", root] if root != "/" else []),
                "--pid-file", pid, "--log-file", log, *spec.fuse_options, path]
        opts = [f"name={render(spec.user, values, quote=False)}", f"conf={args[1]}",
                *([f"mds_namespace={fs}"] if fs else []), *spec.kernel_options]
        kernel = ["mount", "-t", "ceph", f":{root}", path, "-o", ",".join(opts)]
        via, out, err = (shlex.quote(posixpath.join(state, f)) for f in ("via", "ceph-fuse.out", "kernel.err"))
        mount = "\n".join([
            f"# mount CephFS {fs or '(default)'}{root if root != '/' else ''}: kernel client or ceph-fuse",
            f"mount_kernel() {{ {q(*kernel)} 2> {err}; }}",
            f"mount_fuse() {{ {q(*fuse)} >> {out} 2>&1 || {{ cat {out} >&2; return 1; }}; }}",
            f"case {spec.client} in",
            f"  kernel) mount_kernel || {{ cat {err} >&2; exit 1; }}; echo kernel > {via} ;;",
            f"  fuse) mount_fuse; echo ceph-fuse > {via} ;;",
            # auto: the kernel client where it works, else ceph-fuse, saying why
            "  auto)",
            f"    if ! {{ {KERNEL_PROBE}; }}; then",
            f'      mount_fuse; echo "ceph-fuse (auto: no ceph kernel client: not in /proc/filesystems, modprobe ceph '
            f'failed)" > {via}',
            f"    elif mount_kernel; then echo kernel > {via}",
            "    else",
            f"      why=$(tr '\\n' ' ' < {err} | cut -c1-{REASON_CHARS})",
            f'      mount_fuse; echo "ceph-fuse (auto: the kernel mount failed: $why)" > {via}',
            "    fi ;;",
            "esac",
        ])
        force = "\n".join([
            f"# unmount {path} lazily and stop its ceph-fuse",
            f"umount -l {shlex.quote(path)} 2> /dev/null || true",
            f"[ -s {shlex.quote(pid)} ] && kill -KILL \"$(cat {shlex.quote(pid)})\" 2> /dev/null || true",
        ])
        return KindPlan(prepare=[["mkdir", "-p", path, state]], mount=[sh(mount)], unmount=[["umount", path]],
                        force_unmount=[sh(force)], after=[["rmdir", path]], logs={log: "ceph-fuse-{host}.log"},
                        via=["cat", posixpath.join(state, "via")])


PLUGIN: TargetKind[CephFS] = CephFSKind()
