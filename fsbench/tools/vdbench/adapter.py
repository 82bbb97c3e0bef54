"""vdbench as a workload: a parameter file generated from the scenario, its output folder parsed.

Definitions are written under `jobs`, named as in vdbench with their type as prefix:

    jobs:
      fsd1: {depth: 2, width: 10, files: 100, size: 128k}   # anchor: the case's test directory
      fwd1: {fsd: fsd1, operation: read, xfersize: 128k, fileio: random, fileselect: random, threads: 8}
      rd1: {fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}

`options` holds `binary` (the vdbench script), `format_pass` (`prepare`, the default: a first run definition's
format runs untimed before the case; `measured`: inside the measured run, its file creations a result, as
seed 003's FILE_CREATES) and general parameters (e.g. `data_errors: 1`).
vdbench is bring-your-own (Oracle's licence forbids passing it on): the parameter files and the
launch are tested with a stand-in program, the parser with genuine public outputs.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from fsbench.api.tools import BuildContext, CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.config import schema as s
from fsbench.core.shell import sh
from fsbench.core.tidy import ParseResult
from fsbench.tools.vdbench import deploy as vdbench_deploy
from fsbench.tools.vdbench import formatpass, parmcheck, parmfile
from fsbench.tools.vdbench.parse import parse_path

TOOL = "vdbench"
PARMFILE, OUTPUT = "parmfile", "output"


class VdbenchAdapter:
    """vdbench on the local host (hd= lines for several hosts arrive with the SSH transport)."""

    name = TOOL
    bring_your_own = True
    accepts = ("directory", "device")
    metrics: dict[str, str] = {}
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("bandwidth", "cpu_usage", "latency_mean", "rate")
    operations = ("all", "read", "write", "mkdir", "rmdir", "create", "open", "close", "delete", "getattr",
                  "setattr", "access", "copy", "move")
    primary_metrics = ("rate", "bandwidth", "latency_mean")
    #: the report\'s views of its workloads without `report.views` (a sweep adds by_value and chart)
    views = ("table",)
    packages: dict[str, list[str]] = {}  # Oracle's licence: provide() takes the user's zip
    deploy_section = s.Struct({
        "zip": s.Key(s.string, default="", doc="the vdbench zip downloaded from Oracle (relative to the scenario)",
                     flag=s.Flag("--vdbench-zip", "The vdbench zip you downloaded from Oracle (vdbench is "
                                                  "bring-your-own).", existing_file=True)),
        "home": s.Key(s.string, default="/opt/vdbench", doc="where it is unpacked when `binary` is not a path"),
    }, what="vdbench deploy settings")

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        """Definitions named fsd*/fwd*/rd*/sd*/wd*/hd*; an rd to run; fsbench owns anchors; nothing that would
        change the parameter file's meaning; commands only with `allow_commands`; keys read as vdbench reads them
        (fsbench.tools.vdbench.parmcheck)."""
        out = parmcheck.check(options, jobs, ctx)
        if job_file_text:
            out.append(OptionIssue("", "vdbench parameter files are generated from `jobs`; job_file is for fio"))
        return out

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """The elapsed time of every run definition (times its loops), plus start-up of the JVMs."""
        return round(parmfile.run_seconds(jobs) + 5, 1)

    def reads(self, options: dict, job_file_text: str | None, jobs: dict, job_file: str | None = None) -> bool:
        """Whether the first run definition works on files its format lays out (they are then prepared)."""
        return formatpass.layout_rd(options, jobs) is not None

    def parameter_file(self, case, test_dir: str) -> str:
        """The parameter file of a case: general settings first, then hd, sd/fsd, wd/fwd, rd."""
        return parmfile.render(case.case_id, case.options, case.jobs, test_dir)

    def prepare(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation | None:
        """The untimed format pass before a case whose first run definition formats: the same fsd, fwd and hd
        definitions, that run definition with format=only; None when there is none (or on a device)."""
        rd = self._layout_rd(case, ctx)
        if rd is None:
            return None
        options, jobs = formatpass.prepare_parts(case.options, case.jobs, rd)
        note = f" (prepare: the format pass of {rd}, not measured)"
        return self._invocation(case, options, jobs, test_dir, ctx, note)

    def build(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """`vdbench -f parmfile -o output`; across hosts, from here with one hd= line per host (shell=ssh).

        After a format pass (prepare) the run definition it formatted runs with format=no.
        """
        rd = self._layout_rd(case, ctx) if case.prepare else None
        jobs = formatpass.measured_jobs(case.jobs, rd) if rd else case.jobs
        return self._invocation(case, case.options, jobs, test_dir, ctx)

    @staticmethod
    def _layout_rd(case, ctx: BuildContext | None) -> str | None:
        if ctx is not None and ctx.address != "directory":
            return None
        return formatpass.layout_rd(case.options, case.jobs)

    @staticmethod
    def _invocation(case, options: dict, jobs: dict, test_dir: str, ctx: BuildContext | None,
                    note: str = "") -> Invocation:
        binary = str(case.options.get("binary", "vdbench"))
        multi = ctx is not None and ctx.multi()
        hd: list[str] = []
        if ctx is not None and multi:
            user = next((h.spec.user for h in ctx.hosts.values() if h.spec is not None), None)
            login = f",user={user}" if user else ""
            # the vdbench folder on the hosts: where `fsbench deploy` puts it (vdbench refuses '.', no '/' in it)
            home, _wrapper = vdbench_deploy.home_for(binary)
            hd = [f"hd=default,vdbench={home},shell=ssh{login}"]
            hd += [f"hd={name},system={h.address}" for name, h in ctx.hosts.items()]
        text = parmfile.render(case.case_id, options, jobs, test_dir, note, hd)
        # the output folder is fetched back into raw/ whichever host ran vdbench
        return Invocation(argv=[binary, "-f", PARMFILE, "-o", OUTPUT], files={PARMFILE: text}, outputs=[OUTPUT],
                          controller=multi)

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """The output folder vdbench wrote into the work directory."""
        return parse_path(raw_dir / OUTPUT)

    def parse_file(self, path: Path) -> ParseResult:
        """An existing output folder or flatfile.html."""
        return parse_path(path)

    def provide(self, t, controller, binary: str, settings) -> str:
        """Put vdbench on a host (fsbench deploy) from the zip its user downloaded, with Java."""
        own = settings.tool(self.name)
        return vdbench_deploy.provide(t, binary, settings.path(own.get("zip") or ""), install=settings.install,
                                      default_home=own.get("home") or vdbench_deploy.DEFAULT_HOME)

    def version_argv(self, options: dict | None = None) -> list[str]:
        """vdbench prints its version only inside a run: its presence is checked."""
        return sh(f"command -v {shlex.quote(str((options or {}).get('binary', 'vdbench')))}")


PLUGIN: ToolAdapter = VdbenchAdapter()

