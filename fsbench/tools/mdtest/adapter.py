"""mdtest as a workload: its flags from the scenario, launched with mpirun, SUMMARY blocks parsed.

Options are written as mdtest names them, without the dash: `{n: 5000, u: true, z: 2, i: 3}` is
`-n 5000 -u -z 2 -i 3` (the checks are in fsbench.tools.mdtest.options); `tasks` is the number of MPI
processes (mpirun -np).
mdtest comes from IOR (hpc/ior), which install.sh builds and `fsbench deploy` puts on hosts; the
end-to-end tests run the real mdtest under real mpirun, on one host and across SSH hosts.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from fsbench.api.tools import CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.config import schema as s
from fsbench.core.inventory import HostSpec
from fsbench.core.shell import sh
from fsbench.core.tidy import ParseResult
from fsbench.core.units import is_whole_number
from fsbench.tools.mdtest import deploy as mdtest_deploy
from fsbench.tools.mdtest import options as mdtest_options
from fsbench.tools.mdtest import phase_probe
from fsbench.tools.mdtest import placement as mdtest_placement
from fsbench.tools.mdtest.parse import TOOL, parse_path
from fsbench.tools.mdtest.results import read_flags

OWN = {"tasks": "MPI processes (mpirun -np), default 1", "binary": "the mdtest command",
       "mpirun": "the mpirun command", "mpirun_args": "extra mpirun arguments (a list)",
       "map_by": "across hosts: node (default; ranks dealt round-robin over the hosts, mpirun --map-by node) "
                 "or slot (each host's slots filled first)",
       "ppn": "across hosts: ranks per host (mpirun --map-by ppr:N:node), instead of map_by",
       "separate_phases": "run create, stat, read and remove as separate mdtest runs (-C, -T, -E, -r), so that "
                          "`drop_caches: true` empties the cache between them"}
PHASES = (("-C", "create"), ("-T", "stat"), ("-E", "read"), ("-r", "remove"))
#: the SUMMARY rows each phase run measures; mdtest prints the others as 0.000
PHASE_OPERATIONS = {
    "create": {"directory_creation", "file_creation", "tree_creation"},
    "stat": {"directory_stat", "file_stat"},
    "read": {"file_read", "directory_read"},
    "remove": {"directory_removal", "file_removal", "tree_removal"},
}
#: the version probe: mdtest has no --version, so a one-item run in a temporary folder prints
#: `mdtest-X was launched...`; the MPI it was built against comes from mpirun --version
_PROBE = (
    'p=$(command -v {binary}) || exit 1; d=$(mktemp -d) || exit 1; '
    'v=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self "$p" -n 1 -d "$d/probe" '
    '2>/dev/null | sed -n "s/^\\(mdtest-[^ ]*\\) was launched.*/\\1/p" | head -n 1); rm -rf "$d"; '
    '[ -n "$v" ] || exit 1; '
    'm=$(mpirun --version 2>/dev/null | head -n 1 | sed -n "s/^[^(]*(\\([^)]*\\)) *\\(.*\\)$/\\1 \\2/p"); '
    'echo "$v${{m:+ ($m)}}"'
)
ESTIMATE_RATE = 2000.0  # operations per second over all tasks: a plan needs a number, not a promise
START_S = 1.5  # mpirun and MPI start-up per run


class MdtestAdapter:
    """mdtest through mpirun on the local host (several hosts arrive with the SSH transport)."""

    name = TOOL
    bring_your_own = False
    accepts = ("directory",)
    #: engine_requests_per_item: each phase's metadata-engine requests per item, the client's own count read
    #: before each phase (fsbench.tools.mdtest.phase_probe), where the target kind offers one
    metrics: dict[str, str] = {phase_probe.ENGINE_REQUESTS: phase_probe.ENGINE_UNIT}
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("rate", "time", "bandwidth", phase_probe.ENGINE_REQUESTS)
    #: mdtest's own SUMMARY order
    operations = ("directory_creation", "directory_stat", "directory_rename", "directory_removal", "file_creation",
                  "file_stat", "file_read", "file_removal", "tree_creation", "tree_removal")
    primary_metrics = ("rate",)
    #: the report\'s views of its workloads without `report.views` (a sweep adds by_value and chart)
    views = ("table", "stats", "best")
    packages: dict[str, list[str]] = {}  # not packaged: provide() uploads a build or compiles IOR
    deploy_section = s.Struct({
        "method": s.Key(s.one_of(*mdtest_deploy.METHODS), default="auto",
                        doc="auto: this machine's build where OS, arch and MPI match, else IOR built there",
                        flag=s.Flag("--mdtest-method", "auto: this machine's mdtest where OS, arch and MPI match, "
                                                      "else IOR built on the host.")),
        "source": s.Key(s.string, default="", doc="IOR release tarball, a path (relative to the scenario) or URL",
                        flag=s.Flag("--ior-source", "IOR release tarball to build mdtest from.", "PATH|URL")),
    }, what="mdtest deploy settings")

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        """Options mdtest 4.0.0 knows, written without dashes; `d` is fsbench's; files stay in the case folder;
        commands and mpirun arguments beyond placing the ranks need `allow_commands`."""
        out = mdtest_options.check(options, ctx, OWN)
        tasks = options.get("tasks", 1)
        if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
            out.append(OptionIssue("tasks", f"tasks must be a whole number >= 1, got {tasks!r}"))
        if options.get("map_by", "node") not in mdtest_placement.MAP_BY:
            out.append(OptionIssue("map_by", f"map_by is node or slot, got {options.get('map_by')!r}",
                                   "node deals the ranks over the hosts; slot fills each host's slots first"))
        ppn = options.get("ppn")
        if ppn is not None and (isinstance(ppn, bool) or not isinstance(ppn, int) or ppn < 1):
            out.append(OptionIssue("ppn", f"ppn (ranks per host) must be a whole number >= 1, got {ppn!r}"))
        if jobs or job_file_text:
            out.append(OptionIssue("", "mdtest takes options only (no jobs or job_file)"))
        for target in ctx.targets:
            spread = mdtest_placement.ranks_over_own_trees(options, target.name, ctx.host_slots.get(target.name, ()),
                                                           ctx.own_trees.get(target.name, ""))
            if spread is not None:
                out.append(OptionIssue("tasks", *spread))
        return out

    def placement(self, options: dict, hosts: list[tuple[str, int]], own_trees: str = "",
                  ) -> tuple[dict[str, str], list[str]]:
        """Which host runs which MPI ranks, as Open MPI maps them (fsbench.tools.mdtest.placement)."""
        return mdtest_placement.where_ranks_run(options, hosts, own_trees)

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """Items x phases x iterations over a guessed aggregate rate, plus mpirun's start-up.

        Items per task: `-n`, or `-I` per directory of the tree (`-b` branches, `-z` levels deep);
        phases: create, stat, read, remove of files (`-F`) and of directories (`-D`), rename, tree.
        """
        tasks = _int(options.get("tasks"), 1)
        branches, depth = _int(options.get("b"), 1), _int(options.get("z"), 0)
        nodes = sum(branches ** k for k in range(depth + 1)) if branches > 1 else depth + 1
        per_task = _int(options.get("n"), 0) or _int(options.get("I"), 0) * nodes
        files_only, dirs_only = options.get("F") is True, options.get("D") is True
        phases = 4 if files_only else 4 if dirs_only else 9
        iterations = _int(options.get("i"), 1)
        ops = per_task * tasks * phases * iterations
        steps = 4 if options.get("separate_phases") else 1
        return round(ops / ESTIMATE_RATE + START_S * steps * iterations, 1)

    def argv(self, options: dict, test_dir: str, *, multi: bool = False) -> list[str]:
        """The mdtest command line (without mpirun); files it names resolved in the case folder.

        The per-rank CSV lands in the work folder (raw/<case>/<host>/) on one host; across hosts in the case
        folder, because Open MPI starts remote ranks in their home folder where mpirun's folder is missing.
        """
        argv = [str(options.get("binary", "mdtest"))]
        for key, value in options.items():
            if key in OWN or value is False or value is None:
                continue
            name = key.lstrip("-")  # validation refuses dashed keys; a plan of an unvalidated case stays sane
            kind = mdtest_options.OPTIONS.get(name)
            if kind == mdtest_options.PATH or (kind == mdtest_options.OUTPUT and multi):
                value = mdtest_options.resolve(value, test_dir)
            flag = mdtest_options.flag(name)
            argv += [flag] if value is True else [flag, str(value)]
        return argv + ["-d", test_dir]

    def build(self, case, test_dir: str, ctx=None) -> Invocation:
        """`mpirun -np TASKS mdtest FLAGS -d TEST_DIR` (mdtest alone for one task).

        Across hosts mpirun runs here with a hostfile (`ADDRESS slots=N` per host) and Open MPI's ssh
        launch agent given the inventory's port, key and known_hosts, host keys checked.
        """
        o = case.options
        tasks = int(o.get("tasks", 1))
        multi = ctx is not None and ctx.multi()
        cmd = self.argv(o, test_dir, multi=multi)
        outputs = [] if multi else mdtest_options.output_files(o)
        probe = _phase_probe(o, test_dir, ctx)
        if probe:
            cmd[-2:-2] = [phase_probe.argv_flag()]  # before `-d TEST_DIR`
            outputs.append(phase_probe.SNAPSHOTS)
        if tasks == 1 and "mpirun_args" not in o and not multi:
            inv = Invocation(argv=cmd, outputs=outputs, files=probe)
            if o.get("separate_phases"):
                inv.steps = [cmd + [flag] for flag, _ in PHASES]
            return inv
        mpirun = [str(o.get("mpirun", "mpirun")), "-np", str(tasks), "--oversubscribe"]
        # mpirun runs on the controller across hosts, else on the case's host: root there needs the flag
        launcher = (ctx.controller if multi else next(iter(ctx.hosts.values()), None)) if ctx else None
        if (launcher.is_root if launcher is not None and launcher.facts else os.geteuid() == 0):
            mpirun.append("--allow-run-as-root")
        inv = Invocation(argv=[], outputs=outputs, files=probe)
        if multi:
            inv.controller = True
            inv.files["hostfile"] = "".join(f"{h.address} slots={h.slots}\n" for h in ctx.hosts.values())
            mpirun += ["--hostfile", "hostfile", *mdtest_placement.mpirun_flags(str(o.get("map_by", "node")),
                                                                           _int(o.get("ppn"), 0) or None),
                       "--mca", "plm_rsh_agent", "ssh", "--mca", "plm_rsh_args",
                       ssh_agent_args(next(iter(ctx.hosts.values())).spec)]
        inv.argv = mpirun + [str(a) for a in o.get("mpirun_args", [])] + cmd
        if o.get("separate_phases"):
            inv.steps = [inv.argv + [flag] for flag, _ in PHASES]
        return inv

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """SUMMARY blocks of stdout; stderr sharpens the reason when there are none.

        Separate phases (stdout.0 to stdout.3) are parsed one by one, each keeping only the rows of
        its own phase: mdtest prints every row, with 0.000 for the phases it did not run.
        """
        if not (raw_dir / "stdout.0").exists():
            return _with_phase_requests(parse_path(raw_dir / "stdout", raw_dir / "stderr", missing_ok=True),
                                        raw_dir / phase_probe.SNAPSHOTS)
        merged = ParseResult()
        for i, (_flag, phase) in enumerate(PHASES):
            name = f"stdout.{i}"
            if not (raw_dir / name).exists():
                merged.warnings.append(f"the {phase} phase did not run (no {name})")
                continue
            part = parse_path(raw_dir / name, raw_dir / f"stderr.{i}")
            merged.rows += [{**r, "phase": phase} for r in part.rows
                            if r["tool"] != TOOL or r["operation"] in PHASE_OPERATIONS[phase]]
            merged.warnings += [f"{phase}: {w}" for w in part.warnings]
            for k, v in part.meta.items():
                merged.meta.setdefault(k, v)
        return merged

    def parse_file(self, path: Path) -> ParseResult:
        """An existing mdtest output."""
        return parse_path(path)

    def provide(self, t, controller, binary: str, settings) -> str:
        """Put mdtest on a host (fsbench deploy): this machine's build or IOR compiled there."""
        own = settings.tool(self.name)
        return mdtest_deploy.provide(t, controller, binary, method=own.get("method") or "auto",
                                     install=settings.install, source=settings.path(own.get("source") or ""))

    def version_argv(self, options: dict | None = None) -> list[str]:
        """`mdtest-4.0.0 (Open MPI 4.1.4)`: mdtest has no --version, so a one-item run tells (about 1 s)."""
        return sh(_PROBE.format(binary=shlex.quote(str((options or {}).get("binary", "mdtest")))))


_AGENT_WORD = re.compile(r"[\w@%+=:,./~\[\]-]+\Z")


def _with_phase_requests(parsed: ParseResult, snapshots: Path) -> ParseResult:
    """parsed with each probed phase's `engine_requests_per_item` row (fsbench.tools.mdtest.phase_probe) when
    the run left the client's snapshots; their order comes from mdtest's own command line."""
    if not snapshots.exists() or not parsed.rows:
        return parsed
    flags = read_flags(str(parsed.meta.get("command_line", "")))
    if flags is None:
        parsed.warnings.append(f"{phase_probe.SNAPSHOTS}: mdtest's command line was not read: not used")
        return parsed
    rates = [r for r in parsed.rows if r.get("metric") == "rate" and r.get("stat") == "mean"]
    items = {str(r["operation"]): int(r["items"]) for r in rates if is_whole_number(str(r.get("items") or ""))}
    iterations = max((int(r.get("iterations") or 1) for r in rates), default=1)
    try:
        per_rank = int(flags.get("n", "")) if "n" in flags else None
    except ValueError:
        per_rank = None
    rows, warnings = phase_probe.phase_rows(snapshots.read_text(errors="replace"),
                                            phase_probe.sequence(flags, per_rank), iterations, items,
                                            tasks=rates[0].get("tasks") if rates else None)
    parsed.rows += rows
    parsed.warnings += warnings
    return parsed


def _phase_probe(o: dict, test_dir: str, ctx) -> dict[str, str]:
    """The script that counts each phase's engine requests (fsbench.tools.mdtest.phase_probe), by name, where
    it can: a target client that counts them, one host, one mdtest run, an mdtest that runs a command before
    each phase (its version known from the preflight); else none."""
    if ctx is None or ctx.meta_counters is None or ctx.multi() or o.get("separate_phases"):
        return {}
    versions = {str(h.facts.get("mdtest_version", "")) for h in ctx.hosts.values()}
    if not versions or not all(phase_probe.supported(v) for v in versions):
        return {}
    return {phase_probe.SCRIPT: phase_probe.script(test_dir, ctx.meta_counters)}


def ssh_agent_args(spec: HostSpec | None) -> str:
    """ssh options for Open MPI's launch agent, from the inventory: port, key, known_hosts, user; keys checked."""
    args = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"]
    if spec is None:
        return " ".join(args)
    if spec.port:
        args += ["-p", str(spec.port)]
    if spec.key_file:
        args += ["-i", os.path.expanduser(spec.key_file)]
    if spec.known_hosts:
        args += ["-o", f"UserKnownHostsFile={os.path.expanduser(spec.known_hosts)}"]
    if spec.user:
        args += ["-l", spec.user]
    # Open MPI splits plm_rsh_args at spaces, ignores quotes and forwards it to remote orteds in "..."
    # on a shell line: the inventory takes plain paths only, and a ~ that expands here to a folder with
    # odd characters must not turn into ssh options or remote shell code either
    bad = [a for a in args if not _AGENT_WORD.match(a)]
    if bad:
        raise ValueError(f"{bad[0]!r} cannot go into Open MPI's plm_rsh_args (split at spaces, expanded by "
                         "the remote shell): give a key_file/known_hosts path of plain characters (a symlink)")
    return " ".join(args)


PLUGIN: ToolAdapter = MdtestAdapter()


def _int(value: object, default: int) -> int:
    """A whole number from a YAML value (default when absent or not a number)."""
    if isinstance(value, bool):
        return default
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default
