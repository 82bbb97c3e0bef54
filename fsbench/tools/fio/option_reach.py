"""What fio's engines and options reach beyond the job's folder: engine families, and the options that
name paths on the host, run commands or change the host (containment's rules refer to these lists)."""

from __future__ import annotations

import re

#: engines that do their I/O on files (or nothing) inside the job's directory
FILE_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "io_uring", "libaio", "posixaio", "solarisaio",
                "windowsaio", "mmap", "splice", "null", "cpuio", "falloc", "ftruncate", "e4defrag", "filecreate",
                "filestat", "filedelete", "dircreate", "dirstat", "dirdelete", "libpmem", "pmemblk", "libcufile")
#: engines that address the device their filename (libblkio: libblkio_path) names
DEVICE_ENGINES = ("sg", "mtd", "dev-dax", "io_uring_cmd", "xnvme", "libzbc", "libblkio")
#: engines that do I/O on another system (a cluster, a server, the network), which fsbench does not set up
REMOTE_ENGINES = ("rados", "nbd", "libhdfs", "http", "nfs", "dfs", "libiscsi", "rdma", "net", "netsplice",
                  "gfapi", "gfapi_async", "spdk", "ime_psync", "ime_psyncv", "ime_aio")
#: fio's librbd engine, and the target kind made for it
RBD_ENGINE, RBD_KIND = "rbd", "rbd-image"
#: the rbd engine's options that name a cluster, a pool, an image or a client: the target's own only
RBD_OPTIONS = ("clustername", "pool", "rbdname", "clientname")
#: options whose value runs a command on the host
COMMAND_OPTIONS = {"exec_prerun", "exec_postrun", "trigger", "trigger_cmd", "trigger-file", "trigger_file",
                   "program", "arguments"}
#: options that change the host for everyone, not only for fio's own processes
HOST_OPTIONS = {"cgroup": "creates a cgroup on the host and moves fio's jobs into it",
                "cgroup_weight": "sets a cgroup's I/O weight on the host",
                "cgroup_nodelete": "leaves fio's cgroup on the host after the run",
                "ioscheduler": "changes the I/O scheduler of the host's device"}
#: options that write a file next to fio (relative names land in the case's raw folder, where fio runs)
LOG_OPTIONS = {"write_iolog", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log",
               "merge_blktrace_file"}
#: options whose value is (or holds) a path on the host: `${NAME}` there is refused
PATH_OPTIONS = LOG_OPTIONS | {"filename", "directory", "filename_format", "opendir", "read_iolog", "iolog",
                              "replay_redirect", "mem", "donorname", "libblkio_path", "ioengine", "cgroup"} \
    | COMMAND_OPTIONS
#: every option _problems looks at
WATCHED = PATH_OPTIONS | set(HOST_OPTIONS) | set(RBD_OPTIONS) | {"ioengine"}
_UNESCAPED_COLON = re.compile(r"(?<!\\):")


def split_paths(value: str) -> list[str]:
    """fio's `a:b` lists (`\\:` escapes a colon inside a name)."""
    return [p.replace("\\:", ":") for p in _UNESCAPED_COLON.split(value) if p]


def engine_kind(value: str) -> str:
    """What an ioengine value is: file, device, rbd, remote, code (runs or loads code) or unknown."""
    if value == "exec" or value.startswith("external") or "/" in value or value.endswith(".so"):
        return "code"  # fio dlopens an engine given as a path (checked: `func=dlopen` when it is missing)
    for kind, names in (("file", FILE_ENGINES), ("device", DEVICE_ENGINES), ("remote", REMOTE_ENGINES),
                        ("rbd", (RBD_ENGINE,))):
        if value in names:
            return kind
    return "unknown"
