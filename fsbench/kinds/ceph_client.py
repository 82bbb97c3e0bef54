"""What the Ceph target kinds share: how a client reaches the cluster (conf, keyring, user), their state.

fsbench never reads, copies or prints the conf or the keyring: they are paths on the client hosts,
passed to Ceph's own tools (`-c`, `--id`, `--keyring`). A lab cluster (the ceph-lab service) gives
its conf as ${services.NAME.conf}.
"""

from __future__ import annotations

import posixpath
import shlex

from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.shell import render
from fsbench.validity import ceph as ceph_counters
from fsbench.validity.backends import Counters

DEFAULT_CONF = "/etc/ceph/ceph.conf"
#: an image per run and target, created and removed by fsbench
DEFAULT_IMAGE = "fsbench-${run.id}-${target.name}"
MIB = 2**20

# the fields every Ceph kind's settings have (each call makes a new field: a dataclass owns its fields)

def conf_option() -> str:
    """`conf`: ceph.conf on the client hosts."""
    return option(s.line_text, DEFAULT_CONF, doc="ceph.conf on the client hosts (or ${services.NAME.conf})")


def keyring_option() -> str:
    """`keyring`: the keyring's path on the client hosts."""
    return option(s.line_text, "", doc="the keyring's path on the client hosts; default: Ceph's search")


def user_option() -> str:
    """`user`: the cephx user."""
    return option(s.line_text, "admin", doc="the cephx user without `client.` (--id)")


# the image fields of both RBD kinds (mounted, or addressed by fio's rbd engine)

def pool_option() -> str:
    """`pool`: the RBD pool."""
    return option(s.line_text, "rbd", required=True, doc="the RBD pool")


def image_option(default: str = DEFAULT_IMAGE,
                 doc: str = "the image; the default one is made and removed") -> str:
    """`image`: the image's name."""
    return option(s.line_text, default, doc=doc)


def size_option() -> int:
    """`size`: the size of an image fsbench creates (checked as a float: a whole number of bytes)."""
    return option(s.size, 10 * 2**30, convert=int, doc="the size of an image fsbench creates")


def features_option() -> str:
    """`features`: --image-feature of an image fsbench creates."""
    # exclusive-lock would ping-pong between the jobs of one image
    return option(s.line_text, "layering", doc="--image-feature of an image fsbench creates")


def client_args(conf: str, user: str, keyring: str, values: dict[str, str]) -> list[str]:
    """`-c CONF --id USER [--keyring PATH]` with run-time placeholders filled."""
    out = ["-c", render(conf, values, quote=False), "--id", render(user, values, quote=False)]
    return out + (["--keyring", render(keyring, values, quote=False)] if keyring else [])


def counters(name: str, ceph: list[str], *, fs: str | None = None, pools: tuple[str, ...] = ()) -> Counters:
    """The client reads and writes of the OSDs serving the target (fsbench.validity.ceph), read with
    `ceph CLIENT-ARGS` on the case's first host: read-only commands (tell ... perf dump, fs ls, pg dump), or
    the OSDs' admin sockets where they run on that host (fsbench.validity.ceph_asok)."""
    return Counters(name, ceph_counters.perf_argv(ceph), ceph_counters.parse_perf,
                    scope_argv=ceph_counters.scope_argv(ceph, fs=fs, pools=pools, ceph_conf=ceph_conf(ceph)),
                    scope=ceph_counters.scoped_parser(fs=fs, pools=pools),
                    fast=ceph_counters.scoped_fast(fs=fs, pools=pools),
                    what=f"the OSDs of {'CephFS ' + (fs or '(default)') if fs is not None else ', '.join(pools)}")


def ceph_conf(ceph: list[str]) -> list[str]:
    """`ceph-conf -c CONF` for the conf a `ceph CLIENT-ARGS` command names (the daemons' settings, such as their
    admin sockets)."""
    conf = ceph[ceph.index("-c") + 1] if "-c" in ceph[:-1] else ""
    return ["ceph-conf", *(["-c", conf] if conf else [])]


def state_dir(scratch: str, target: str) -> str:
    """Where a target keeps its per-host state (which client, which device, pid files, logs)."""
    return posixpath.join(scratch, "ceph", target)


def q(*words: str) -> str:
    """Words as one shell command line, each quoted."""
    return shlex.join(words)


def create_image(rbd: list[str], spec: str, size: int, features: str, state: str, destructive: bool) -> str:
    """Create the image unless it exists; an image that exists is used only on a destructive target."""
    refuse = q("echo", f"the RBD image {spec} exists already and its data would be overwritten: name another "
                       "image, or set `destructive: true` on the target") + " >&2; exit 1"
    return "\n".join([
        f"# create the RBD image {spec} unless it exists",
        f"if {q(*rbd, 'info', spec)} > /dev/null 2>&1; then",
        "  true" if destructive else f"  {refuse}",
        "else",
        f"  {q(*rbd, 'create', '--size', f'{max(1, int(size) // MIB)}M', '--image-feature', features, spec)}",
        f"  touch {shlex.quote(posixpath.join(state, 'created'))}",
        "fi",
    ])


def unused_image(rbd: list[str], spec: str) -> str:
    """Fail when any client has the image open: two writers (a mount and fio's rbd engine) corrupt it."""
    return (f"{q(*rbd, 'status', '--format', 'json', spec)} | grep -Eq '\"watchers\": ?\\[\\]' || "
            f"{{ {q('echo', f'the RBD image {spec} is open by another client (rbd status {spec})')} >&2; exit 1; }}")


def remove_image(rbd: list[str], spec: str, state: str) -> str:
    """Remove the image if this run created it (bounded: a cluster that is gone must not hang a clean-up)."""
    marker = shlex.quote(posixpath.join(state, "created"))
    return "\n".join([
        f"# remove the RBD image {spec} if fsbench created it",
        f"if [ -e {marker} ]; then",
        f"  timeout 60 {q(*rbd, '--client_mount_timeout', '10', 'rm', '--no-progress', spec)}",
        f"  rm -f {marker}",
        "fi",
    ])
