"""vdbench as a workload: a parameter file generated from the scenario, its output folder parsed.

Definitions are written under `jobs`, named as in vdbench with their type as prefix:

    jobs:
      fsd1: {depth: 2, width: 10, files: 100, size: 128k}   # anchor: the case's test directory
      fwd1: {fsd: fsd1, operation: read, xfersize: 128k, fileio: random, fileselect: random, threads: 8}
      rd1: {fwd: fwd1, fwdrate: max, format: restart, elapsed: 60, interval: 1}

`options` holds `binary` (the vdbench script) and general parameters (e.g. `data_errors: 1`).
vdbench is bring-your-own (Oracle's licence forbids passing it on): the parameter files and the
launch are tested with a stand-in program, the parser with genuine public outputs.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path

from fsbench.config import schema as s
from fsbench.shell import sh
from fsbench.tidy import ParseResult
from fsbench.tools.base import Invocation, OptionIssue
from fsbench.tools.vdbench import deploy as vdbench_deploy
from fsbench.tools.vdbench.parse import parse_path

TOOL = "vdbench"
PARMFILE, OUTPUT = "parmfile", "output"
KINDS = ("hd", "sd", "wd", "fsd", "fwd", "rd")
GENERAL = {"binary": "the vdbench script", "data_errors": "stop after this many data errors",
           "validate": "data validation (yes/no)", "journal": "journal file"}


def _kind(name: str) -> str | None:
    m = re.match(r"(fsd|fwd|hd|sd|wd|rd)", name)
    return m.group(1) if m else None


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return "(" + ",".join(str(x) for x in v) + ")"
    return str(v)


class VdbenchAdapter:
    """vdbench on the local host (hd= lines for several hosts arrive with the SSH transport)."""

    name = TOOL
    bring_your_own = True
    accepts = ("directory", "device")
    metrics: dict[str, str] = {}
    operations = ("all", "read", "write", "mkdir", "rmdir", "create", "open", "close", "delete", "getattr",
                  "setattr", "access", "copy", "move")
    primary_metrics = ("rate", "bandwidth", "latency_mean")
    #: the report\'s views of its workloads without `report.views` (a sweep adds by_value and chart)
    views = ("table",)
    packages: dict[str, list[str]] = {}  # Oracle's licence: provide() takes the user's zip
    deploy_section = s.Struct({
        "zip": s.Key(s.string, default="", doc="the vdbench zip downloaded from Oracle (relative to the scenario)"),
        "home": s.Key(s.string, default="/opt/vdbench", doc="where it is unpacked when `binary` is not a path"),
    }, what="vdbench deploy settings")

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict, ctx: dict) -> list[OptionIssue]:
        """Definitions named fsd*/fwd*/rd*/sd*/wd*; an rd to run; fsbench owns anchors."""
        out = [OptionIssue(k, f"unknown vdbench option {k!r}", f"known: {', '.join(GENERAL)}; definitions go "
                           "under jobs (fsd1, fwd1, rd1...)") for k in options if k not in GENERAL]
        for name, spec in jobs.items():
            for key, value in spec.items():
                if isinstance(value, str) and any(c in value for c in ",()*"):
                    out.append(OptionIssue(f"{name}.{key}", f"{key}={value!r}: ',', '(', ')' and '*' would change "
                                           "the parameter file's meaning", "give several values as a YAML list"))
            if _kind(name) is None:
                out.append(OptionIssue(name, f"{name!r} is not a vdbench definition name",
                                       "start it with its type: fsd, fwd, rd, sd, wd or hd"))
            for key, what in (("anchor", "an fsd anchor"), ("lun", "an sd lun (a raw device or file)")):
                if key in spec and not _is_target_itself(str(spec[key]), ctx):
                    out.append(OptionIssue(f"{name}.{key}", f"{what} at {spec[key]} is outside the case folder",
                                           "leave it out (fsbench anchors every fsd in the case's folder), or make "
                                           "it the path of a target with `destructive: true`"))
        if not any(_kind(n) == "rd" for n in jobs):
            out.append(OptionIssue("", "a vdbench workload needs a run definition", "add e.g. rd1: {fwd: fwd1, "
                                   "fwdrate: max, format: restart, elapsed: 60, interval: 1}"))
        if job_file_text:
            out.append(OptionIssue("", "vdbench parameter files are generated from `jobs`; job_file is for fio"))
        return out

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """The elapsed time of every run definition, plus start-up of the JVMs."""
        total = 0.0
        for name, spec in jobs.items():
            if _kind(name) == "rd":
                total += float(spec.get("elapsed", 30)) + float(spec.get("warmup", 0))
        return round(total + 5, 1)

    def parameter_file(self, case, test_dir: str) -> str:
        """The parameter file of a case: general settings first, then hd, sd/fsd, wd/fwd, rd."""
        lines = [f"* generated by fsbench for case {case.case_id}"]
        lines += [f"{k}={_value(v)}" for k, v in case.options.items() if k not in ("binary",)]
        fsds = [n for n in case.jobs if _kind(n) == "fsd"]
        for kind in KINDS:
            for name, spec in case.jobs.items():
                if _kind(name) != kind:
                    continue
                spec = dict(spec)
                if kind == "fsd" and "anchor" not in spec:
                    spec["anchor"] = test_dir if len(fsds) == 1 else posixpath.join(test_dir, name)
                params = ",".join(f"{k}={_value(v)}" for k, v in spec.items())
                lines.append(f"{kind}={name}{',' + params if params else ''}")
        return "\n".join(lines) + "\n"

    def build(self, case, test_dir: str, ctx=None) -> Invocation:
        """`vdbench -f parmfile -o output`; across hosts, from here with one hd= line per host (shell=ssh)."""
        binary = str(case.options.get("binary", "vdbench"))
        text = self.parameter_file(case, test_dir)
        multi = ctx is not None and ctx.multi()
        if multi:
            user = next((getattr(h.spec, "user", None) for h in ctx.hosts.values() if h.spec is not None), None)
            login = f",user={user}" if user else ""
            hd = [f"hd=default,vdbench={posixpath.dirname(binary) or '.'},shell=ssh{login}"]
            hd += [f"hd={name},system={h.address}" for name, h in ctx.hosts.items()]
            head, _, rest = text.partition("\n")
            text = "\n".join([head, *hd, rest])
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


PLUGIN = VdbenchAdapter()


def _is_target_itself(path: str, ctx: dict) -> bool:
    """Whether path is, on every target of the workload, that destructive target's own path."""
    targets = ctx.get("targets") or []
    return bool(targets) and all(destructive and posixpath.normpath(path) == posixpath.normpath(tpath)
                                 for _name, tpath, destructive, *_rest in targets)
