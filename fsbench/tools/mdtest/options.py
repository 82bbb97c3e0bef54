"""mdtest's own options (IOR 4.0.0) and the mpirun arguments a workload may add, checked before a run.

An option is written without its dash, as mdtest names it: `n: 5000` is `-n 5000`, `verify-write:
true` is `--verify-write`, `posix.odirect: true` is `--posix.odirect`. The table below is mdtest
4.0.0's `--help` (with the POSIX, DUMMY, MPIIO and MMAP modules install.sh builds): a name it does not
list is refused, because mdtest would stop on it with "Invalid options". Options that name a file
stay inside the case folder (they are resolved there, like -d); options that run a command, and
mpirun arguments beyond placing and connecting the ranks, need the workload's `allow_commands: true`.
"""

from __future__ import annotations

import difflib
import posixpath
import re

from fsbench.api.tools import CheckContext, OptionIssue
from fsbench.tools.common import leaves_folder

SWITCH, VALUE, PATH, OUTPUT, COMMAND, OWN_DIR = "switch", "value", "path", "output", "command", "own-dir"

#: name -> what follows it on the command line
OPTIONS: dict[str, str] = {
    **dict.fromkeys("CTErDFkLPRSctuvXyYZ", SWITCH),
    **dict.fromkeys("abBefGiIlnNpsVwWz", VALUE),
    "d": OWN_DIR, "x": PATH,
    **dict.fromkeys(("print-all-procs", "verify-read", "verify-write", "allocateBufferOnGPU", "warningAsErrors",
                     "showRankStatistics", "posix.odirect", "posix.rangelocks", "dummy.delay-only-rank0",
                     "mpiio.showHints", "mpiio.preallocate", "mpiio.useStridedDatatype", "mpiio.useFileView",
                     "mmap.madv_dont_need", "mmap.madv_pattern"), SWITCH),
    **dict.fromkeys(("random-seed", "dataPacketType", "dummy.delay-create", "dummy.delay-close",
                     "dummy.delay-sync", "dummy.delay-xfer"), VALUE),
    "mpiio.hintsFileName": PATH,
    "saveRankPerformanceDetails": OUTPUT,
    "run-cmd-before-phase": COMMAND, "run-cmd-after-phase": COMMAND,
}

#: mpirun options (Open MPI 4) that only place, bind, connect or label the ranks -> how many values follow
MPIRUN_SAFE: dict[str, int] = {
    "bind-to": 1, "map-by": 1, "rank-by": 1, "npernode": 1, "cpus-per-proc": 1, "cpus-per-rank": 1,
    "report-bindings": 0, "display-map": 0, "display-devel-map": 0, "display-allocation": 0, "oversubscribe": 0,
    "use-hwthread-cpus": 0, "tag-output": 0, "timestamp-output": 0, "merge-stderr-to-stdout": 0, "quiet": 0,
    "q": 0, "verbose": 0, "v": 0, "allow-run-as-root": 0, "mca": 2, "gmca": 2, "x": 1,
}
#: MCA parameters of the transports and collectives (btl, pml, mtl, coll, osc) and a few placement ones;
#: a name that mentions an agent, a path, a file, a prefix or a command is not among them
_MCA_FRAMEWORKS = re.compile(r"(btl|pml|mtl|coll|osc)(_[a-z0-9_]+)?\Z")
_MCA_RISKY = ("agent", "path", "file", "prefix", "cmd", "exec", "dir", "launch", "fork")
MCA_SAFE = {"oob_tcp_if_include", "oob_tcp_if_exclude", "hwloc_base_binding_policy", "rmaps_base_mapping_policy",
            "rmaps_base_ranking_policy", "rmaps_base_oversubscribe", "mpi_yield_when_idle", "orte_base_help_aggregate"}
#: environment variables `-x` may not set: they load code or reconfigure MPI and the loader in every rank
_ENV_RISKY = re.compile(r"(LD_|OMPI_|OPAL_|PMIX_|PRTE_|ORTE_).*|PATH|BASH_ENV|ENV|IFS|GCONV_PATH|PYTHON.*")
_ENV_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")

HINT_DASHES = "write options without their dashes: n, u, z, F, verify-write, posix.odirect (fsbench adds them)"


def flag(name: str) -> str:
    """The command-line spelling of an option: `-n` for one letter, `--verify-write` for a long name."""
    return f"-{name}" if len(name) == 1 else f"--{name}"


def check(options: dict, ctx: CheckContext, own: dict) -> list[OptionIssue]:
    """Issues with mdtest options (own keys skipped): names, switch or value, files, commands, mpirun_args."""
    out: list[OptionIssue] = []
    commands = ctx.allow_commands
    targets = ", ".join(t.name for t in ctx.targets) or "the target"
    for key, value in options.items():
        if key in own:
            continue
        kind = OPTIONS.get(key)
        if key.startswith("-"):
            bare = key.lstrip("-")
            out.append(OptionIssue(key, f"option {key!r} is written with dashes: fsbench would pass it on unchecked",
                                   f"write it as `{bare}:`; {HINT_DASHES}"))
        elif kind is None:
            close = difflib.get_close_matches(key, OPTIONS, n=3)
            out.append(OptionIssue(key, f"unknown mdtest option {key!r} (mdtest 4.0.0 has no {_spell(key)})",
                                   (f"did you mean {' or '.join(map(repr, close))}? " if close else "")
                                   + f"see `mdtest --help`; {HINT_DASHES}"))
        elif kind == OWN_DIR:
            out.append(OptionIssue(key, "fsbench sets -d to the case's own test directory"))
        elif kind == SWITCH:
            if not isinstance(value, bool):
                out.append(OptionIssue(key, f"{flag(key)} is a switch: write `{key}: true`"))
        elif isinstance(value, bool) or value is None:
            if value is True:
                out.append(OptionIssue(key, f"{flag(key)} takes a value (mdtest would take the next argument "
                                            "as its value)", f"write e.g. `{key}: 1`"))
        elif kind == COMMAND and not commands:
            out.append(OptionIssue(key, f"{flag(key)} runs a command on every host",
                                   "if you mean it, set `allow_commands: true` on this workload"))
        elif kind in (PATH, OUTPUT):
            problem = leaves_folder(str(value))
            if problem:
                where = "the case's raw folder" if kind == OUTPUT else f"the case folder on {targets}"
                out.append(OptionIssue(key, f"{flag(key)}={value} names a file outside {where}: {problem}",
                                       "use a relative name: fsbench resolves it in the case folder (like -d)"
                                       if kind == PATH else
                                       "use a relative name: it then lands in raw/<case>/<host>/"))
    for name, path, *_rest in ctx.targets:
        if "@" in str(path):
            out.append(OptionIssue("", f"target {name}'s path {path} contains '@': mdtest splits -d on '@' into "
                                       "several directories, so ranks would work outside the target",
                                   "give the target a path without '@' (mdtest has no way to escape it)"))
    out += check_mpirun_args(options.get("mpirun_args", []), commands)
    return out




def resolve(value: object, folder: str) -> str:
    """A checked relative file name inside folder."""
    return posixpath.join(folder, str(value))


def output_files(options: dict) -> list[str]:
    """Files mdtest writes in its work folder (collected into raw/ with the case's output)."""
    return [str(v) for k, v in options.items() if OPTIONS.get(k) == OUTPUT and v not in (None, False)]


def check_mpirun_args(args: object, commands: bool) -> list[OptionIssue]:
    """mpirun_args: a list; without allow_commands only options that place and connect ranks."""
    if not isinstance(args, list):
        return [OptionIssue("mpirun_args", f"mpirun_args must be a list, got {args!r}",
                            'for example [--bind-to, core, --mca, btl, "self,tcp"]')]
    if commands:
        return []
    tokens = [str(a) for a in args]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name = tok.lstrip("-")
        count = MPIRUN_SAFE.get(name) if tok.startswith("-") and "=" not in tok else None
        values = tokens[i + 1:i + 1 + (count or 0)]
        problem = _mpirun_problem(tok, name, count, values)
        if problem:
            return [OptionIssue("mpirun_args", f"mpirun argument {tok!r} {problem}",
                                "without `allow_commands: true` on the workload, mpirun_args may only place, bind and "
                                "connect the ranks: --bind-to, --map-by, --oversubscribe, --display-map, --mca of "
                                "btl/pml/mtl/coll/osc, -x NAME=VALUE... (the list is in docs/scenario.md)")]
        i += 1 + (count or 0)
    return []


def _mpirun_problem(tok: str, name: str, count: int | None, values: list[str]) -> str:
    if tok == ":":
        return "starts another program (MPMD)"
    if count is None:
        return "is not one of the options allowed without an opt-in (it may run programs, read files or " \
               "change where ranks run)"
    if len(values) < count or any(v.startswith("-") or v == ":" for v in values):
        return f"needs {count} value(s) after it"
    if name in ("mca", "gmca") and not _mca_ok(values[0]):
        return f"sets the MCA parameter {values[0]!r}, which is not a transport or placement one"
    if name == "x":
        m = _ENV_ASSIGN.match(values[0])
        if not m:
            return f"exports {values[0]!r} from this machine's environment: write NAME=VALUE"
        if _ENV_RISKY.fullmatch(m.group(1)):
            return f"sets {m.group(1)}, which changes what every rank loads or how MPI starts"
    return ""


def _mca_ok(param: str) -> bool:
    if param in MCA_SAFE:
        return True
    return bool(_MCA_FRAMEWORKS.match(param)) and not any(w in param for w in _MCA_RISKY)


def _spell(key: str) -> str:
    return flag(key) if re.fullmatch(r"[\w.-]+", key) else repr(key)
