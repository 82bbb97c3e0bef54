"""An RBD image as a target kind: created if missing, mapped, formatted and mounted; all undone afterwards.

`map: auto` tries krbd where the host has the rbd module (loaded, or loaded now by modprobe), then
rbd-nbd where it has nbd, and falls back to rbd-fuse (the image as a file) under a loop device with
direct I/O, so that no second page cache sits under the file system; a map that fails (a container
may see modules it cannot use) moves on to the next way. Which one was used, its device, and why auto
passed over the others are kept in the target's state and shown in hosts.csv. An image that exists
already is formatted only on a `destructive: true` target; an image fsbench created is removed at
teardown. One client per image: mapping refuses an image another client has open (a second mount, or
fio's rbd engine, would corrupt the file system), so on several hosts each maps an image of its own
(the default name holds ${host.name}); a target naming one image for all runs on its first host only.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, replace

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.shell import render, sh
from fsbench.kinds.ceph_client import (
    DEFAULT_IMAGE,
    client_args,
    conf_option,
    counters,
    create_image,
    features_option,
    image_option,
    keyring_option,
    pool_option,
    q,
    remove_image,
    size_option,
    state_dir,
    unused_image,
    user_option,
)
from fsbench.validity.backends import Counters
from fsbench.validity.ceph import METADATA_IN_CLIENT_CACHE

MAPS = ("auto", "krbd", "nbd", "fuse")
#: no lazy inode-table or journal initialisation: it would write in the background during the tests
EXT4_OPTIONS = ("-q", "-F", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0")
#: a module the kernel has loaded, or loads now (one merely on disk, as modinfo finds it, may not load)
KRBD_PROBE = "[ -e /sys/bus/rbd ] || modprobe -q rbd 2> /dev/null"
NBD_PROBE = "command -v rbd-nbd > /dev/null && { [ -e /sys/module/nbd ] || modprobe -q nbd 2> /dev/null; }"
#: how much of a failed map's error the `via` fact keeps
REASON_CHARS = 120
#: an image per run, target and client host: each host's ext4 on an image of its own
PER_HOST_IMAGE = DEFAULT_IMAGE + "-${host.name}"


@dataclass(frozen=True)
class Rbd:
    """An RBD image with a local file system on it."""

    pool: str = pool_option()
    image: str = image_option(PER_HOST_IMAGE, "the image; the default one (one per host) is made and removed; one "
                                              "name for all: first host only")
    size: int = size_option()
    features: str = features_option()
    map: str = option(s.one_of(*MAPS), "auto",
                      doc="auto: krbd, else rbd-nbd, else rbd-fuse + a loop device (the first that maps)")
    fstype: str = option(s.one_of("ext4", "xfs"), "ext4")
    mkfs_options: tuple[str, ...] = option(s.list_of(s.line_text), EXT4_OPTIONS, convert=tuple,
                                           doc="default for ext4: -q -F -E nodiscard,lazy_itable_init=0,"
                                               "lazy_journal_init=0; for xfs: -q -f -K")
    mount_options: str = option(s.line_text, "", doc="mount -o OPTIONS")
    conf: str = conf_option()
    keyring: str = keyring_option()
    user: str = user_option()


SECTION = Section(Rbd, "rbd settings")
#: mkfs options of an xfs image when the section gives none
XFS_OPTIONS = ("-q", "-f", "-K")


class RbdKind:
    """A mapped, formatted and mounted RBD image."""

    name = "rbd"
    address = "directory"
    section = SECTION
    #: ext4 on the image keeps metadata changes in memory for seconds: mdtest's rates are checked against the pool
    validity_checks = (METADATA_IN_CLIENT_CACHE,)
    client_process = "rbd-fuse"  # krbd and rbd-nbd: the kernel, or rbd-nbd, serve it instead

    def settings(self, checked: dict | None) -> Rbd | None:
        spec = SECTION.build(checked)
        if spec is not None and spec.fstype == "xfs" and (checked or {}).get("mkfs_options") is None:
            return replace(spec, mkfs_options=XFS_OPTIONS)  # the default options are ext4's
        return spec

    def texts(self, settings: Rbd | None) -> list[tuple[str, str]]:
        spec = settings
        if spec is None:
            return []
        return [("pool", spec.pool), ("image", spec.image), ("conf", spec.conf), ("keyring", spec.keyring),
                ("user", spec.user)]

    def check(self, target: KindTarget[Rbd]) -> list[KindIssue]:
        if target.settings is None:
            return [(("kind",), "an rbd target needs an `rbd:` section", "at least `rbd: {pool: NAME}`")]
        return []

    def one_host(self, target: KindTarget[Rbd]) -> str:
        """Why the target can live on one host only: an image named alike on every host ('' when per host)."""
        spec = target.settings
        if spec is None or "${host.name}" in spec.image:
            return ""
        return (f"its image {spec.image!r} is the same on every host, and one ext4 on one image is mounted by one "
                "client at a time (put ${host.name} in `image:` for an image per host)")

    def tree_per_host(self, target: KindTarget[Rbd]) -> str:
        """Why each host has a tree of its own: an image per host, each with its own ext4 ('' with one image)."""
        spec = target.settings
        if spec is None or "${host.name}" not in spec.image:
            return ""
        return "each host mounts an ext4 of its own RBD image, not one tree all hosts see"

    def counters(self, target: KindTarget[Rbd], values: dict[str, str]) -> list[Counters]:
        """What the OSDs of the image's pool served (fsbench.validity.ceph): below the file system and its
        page cache, so a read the cache served shows as one the pool did not."""
        spec = target.settings
        if spec is None:
            return []
        ceph = ["ceph", *client_args(spec.conf, spec.user, spec.keyring, values)]
        return [counters(target.name or "rbd", ceph, pools=(render(spec.pool, values, quote=False),))]

    def plan(self, target: KindTarget[Rbd], values: dict[str, str], scratch: str) -> KindPlan:
        """Create, map and mount (every host its own image), undo all."""
        spec = settings_of(target, self.name)
        path, name = target.path, target.name
        state = state_dir(scratch, name)
        image = render(spec.image, values, quote=False)
        spec_text = f"{render(spec.pool, values, quote=False)}/{image}"
        rbd = ["rbd", *client_args(spec.conf, spec.user, spec.keyring, values)]
        fuse_dir = posixpath.join(state, "rbd-fuse")
        file = posixpath.join(fuse_dir, image)
        files = {k: shlex.quote(posixpath.join(state, k))
                 for k in ("via", "device", "rbd-fuse.pid", "rbd-fuse.log", "map.err")}
        err = files["map.err"]
        create = create_image(rbd, spec_text, spec.size, spec.features, state,
                              target.destructive)
        why = f"$(tr '\\n' ' ' < {err} | cut -c1-{REASON_CHARS})"
        mount = "\n".join([
            f"# map {spec_text} (krbd, rbd-nbd, else rbd-fuse + loop), make {spec.fstype} and mount it",
            unused_image(rbd, spec_text),
            f"map_krbd() {{ dev=$({q(*rbd, 'map', spec_text)} 2> {err}); }}",
            f"map_nbd() {{ dev=$({q('rbd-nbd', *rbd[1:], 'map', spec_text)} 2> {err}); }}",
            "map_fuse() {",
            f"  mkdir -p {shlex.quote(fuse_dir)}",
            # its own session: it must outlive this command (and an SSH session's process group)
            f"  setsid {q('rbd-fuse', *rbd[1:], '-p', spec_text.split('/')[0], '-r', image, '-f', fuse_dir)} "
            f"> {files['rbd-fuse.log']} 2>&1 &",
            f"  echo $! > {files['rbd-fuse.pid']}",
            f"  i=0; while [ ! -e {shlex.quote(file)} ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done",
            f"  [ -e {shlex.quote(file)} ] || {{ echo 'rbd-fuse did not show {spec_text}' >&2; "
            f"cat {files['rbd-fuse.log']} >&2; return 1; }}",
            # direct I/O: no page cache under the file system's own (reads would come from RAM)
            f"  dev=$(losetup --find --show --direct-io=on {shlex.quote(file)})",
            "}",
            f"via={spec.map}; why=''",
            'case "$via" in',
            f"  krbd) map_krbd || {{ cat {err} >&2; exit 1; }} ;;",
            f"  nbd) map_nbd || {{ cat {err} >&2; exit 1; }} ;;",
            "  fuse) map_fuse ;;",
            # auto: the first way that maps, each one passed over with its reason
            "  auto)",
            f"    if ! {{ {KRBD_PROBE}; }}; then why='krbd: no rbd module'",
            "    elif map_krbd; then via=krbd",
            f'    else why="krbd: {why}"; fi',
            '    if [ "$via" = auto ]; then',
            f"      if ! {{ {NBD_PROBE}; }}; then why=\"$why; nbd: no rbd-nbd or nbd module\"",
            "      elif map_nbd; then via=nbd",
            f'      else why="$why; nbd: {why}"; fi',
            "    fi",
            '    if [ "$via" = auto ]; then map_fuse; via=fuse; fi ;;',
            "esac",
            f'echo "$dev" > {files["device"]}',
            'if [ "$via" = fuse ]; then name="rbd-fuse+loop $dev"; else name="$via $dev"; fi',
            '[ -z "$why" ] || name="$name (auto: $why)"',
            f'echo "$name" > {files["via"]}',
            f'{q("mkfs", "-t", spec.fstype, *spec.mkfs_options)} "$dev"',
            f'{q("mount", "-t", spec.fstype, *(["-o", spec.mount_options] if spec.mount_options else []))} '
            f'"$dev" {shlex.quote(path)}',
        ])
        return KindPlan(prepare=[["mkdir", "-p", path, state], sh(create)], mount=[sh(mount)],
                        unmount=[sh(self._unmap(rbd, spec_text, path, state, file, lazy=False))],
                        force_unmount=[sh(self._unmap(rbd, spec_text, path, state, file, lazy=True))],
                        after=[sh(remove_image(rbd, spec_text, state)), ["rmdir", path]],
                        logs={posixpath.join(state, "rbd-fuse.log"): "rbd-fuse-{host}.log"},
                        via=["cat", posixpath.join(state, "via")],
                        client_args=(fuse_dir,))  # rbd-fuse serves its own folder; the target is the loop's

    @staticmethod
    def _unmap(rbd: list[str], spec_text: str, path: str, state: str, file: str, *, lazy: bool) -> str:
        """Unmount, then undo the mapping the state names; `lazy` (after a crash): detach, ignore errors."""
        image = posixpath.basename(file)
        dev, via, pid = (shlex.quote(posixpath.join(state, k)) for k in ("device", "via", "rbd-fuse.pid"))
        fuse_dir = shlex.quote(posixpath.dirname(file))
        ok = " 2> /dev/null || true" if lazy else ""
        quick = ["timeout", "30"] if lazy else []
        lines = [
            f"# unmount {path} and unmap {spec_text}" + (" (forced)" if lazy else ""),
            f"if mountpoint -q {shlex.quote(path)}; then umount {'-l ' if lazy else ''}{shlex.quote(path)}{ok}; fi",
            f'd=$(cat {dev} 2> /dev/null || true); v=$(cat {via} 2> /dev/null || true)',
            'case "$v" in',
            f'  krbd*) [ -z "$d" ] || {q(*quick, *rbd, "unmap", *(["-o", "force"] if lazy else []))} "$d"{ok} ;;',
            f'  nbd*) [ -z "$d" ] || {q(*quick, "rbd-nbd", "unmap")} "$d"{ok} ;;',
            "esac",
            # loop devices on our rbd-fuse file, listed from sysfs (a dead rbd-fuse does not stop it); once
            # rbd-fuse is gone the kernel names the file from its detached mount (/IMAGE): then the device
            # the state recorded is ours if its file still has that name
            f"for l in $(losetup -l -n -O NAME,BACK-FILE | awk -v f={shlex.quote(file)} "
            f"""-v g={shlex.quote('/' + image)} -v d="$d" '$2 == f || ($1 == d && $2 == g) {{print $1}}'); do """
            f'losetup -d "$l"{ok}; done',
            f'if [ -s {pid} ]; then p=$(cat {pid}); kill -{"KILL" if lazy else "TERM"} "$p" 2> /dev/null || true; '
            'i=0; while kill -0 "$p" 2> /dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; fi',
            f"if mountpoint -q {fuse_dir}; then umount -l {fuse_dir}{ok}; fi",
            f"rm -f {dev} {via} {pid}",
        ]
        return "\n".join(lines)


PLUGIN: TargetKind[Rbd] = RbdKind()
