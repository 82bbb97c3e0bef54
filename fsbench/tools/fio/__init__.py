"""The fio adapter: job files from the scenario, JSON to its own file, every output format parsed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fsbench.api.case import Case
from fsbench.api.tools import BuildContext, CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.core.errors import ParseError
from fsbench.core.tidy import ParseResult
from fsbench.tools.fio import layout, parse_json
from fsbench.tools.fio.containment import RBD_KIND, TargetPlace, find_escapes
from fsbench.tools.fio.estimate import file_bytes, job_file_seconds, option_int
from fsbench.tools.fio.jobfile import JobFile, Origin, included_files, parse_jobfile
from fsbench.tools.fio.options import RESERVED, RbdImage, option_issues, rbd_values, written_value_issues
from fsbench.tools.fio.render import image_fill, in_folder, job_reads, job_writes, on_image
from fsbench.tools.fio.sniff import parse_any
from fsbench.validity.checks import PAGE_CACHE_FIT, READ_FROM_CACHE, WRITE_NOT_DURABLE

OUTPUT = "fio.json"
JOBFILE = "job.fio"


class FioAdapter:
    """fio on one host, or across hosts with fio's own client/server mode."""

    name = "fio"
    bring_your_own = False
    #: what it works on, what it measures and how reports order and pick its numbers
    #: target addresses, and kinds it reaches with an engine of its own (rbd-image: ioengine=rbd)
    accepts = ("directory", "device", RBD_KIND)
    #: where a case that reads gets what it reads written first: files in a folder, or the image's extent
    prepares = ("directory", RBD_KIND)
    metrics: dict[str, str] = {}  # only the tidy table's own vocabulary
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("bandwidth", "iops", "file_rate", "io_bytes", "ops", "runtime", "clat_mean", "clat_min",
                "clat_max", "clat_stddev", "clat_p50", "clat_p90", "clat_p95", "clat_p99", "clat_p99.9",
                "lat_mean", "slat_mean", "rate")
    operations = ("read", "write", "trim")
    primary_metrics = ("bandwidth", "iops", "clat_mean", "clat_p99")
    #: the report\'s views of its workloads without `report.views` (a sweep adds by_value and chart)
    views = ("table",)
    packages = {"apt-get": ["fio"], "dnf": ["fio"], "zypper": ["fio"]}
    #: what fsbench checks of its numbers (fsbench.validity): where it sees the backend, a read the store did
    #: not serve and a write timed before the store had it; where no backend counts, a working set the page
    #: cache could hold, read without a drop before it
    validity_checks = (READ_FROM_CACHE, WRITE_NOT_DURABLE, PAGE_CACHE_FIT)

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        """Unknown names (with a suggestion), options fsbench owns, values fio would misread, and any
        place a job would do I/O outside the case folder (file:line of the job file where it came from)."""
        issues = option_issues(options)
        for job, opts in jobs.items():
            issues += option_issues(opts, f"{job}.")
        source = ctx.job_file or "job_file"
        if job_file_text is not None and not parse_jobfile(job_file_text, source).job_names():
            issues.append(OptionIssue("", "the job file has no job section", "add a [jobname] section"))
        jf = self._jobfile(options, job_file_text, jobs, "job", ctx.job_file)
        for origin, problem in jf.problems:
            issues.append(OptionIssue("", problem, "", origin=origin))
        targets = [TargetPlace(t.name, t.path, t.destructive, t.kind, rbd_values(t.kind, ctx.settings.get(t.name)))
                   for t in ctx.targets]
        issues += written_value_issues(targets)
        for e in find_escapes(jf, targets, allow_commands=ctx.allow_commands):
            if e.option in RESERVED and (e.origin is None or e.origin.line is None):
                continue  # already refused above as an option fsbench owns
            where = e.option if e.section == "global" else f"{e.section}.{e.option}"
            issues.append(OptionIssue(where if e.origin is None or e.origin.line is None else "",
                                      e.message, e.hint, origin=e.origin if e.origin and e.origin.line else None,
                                      option=f"[{e.section}] {e.option}"))
        return issues

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """Groups one after the other (stonewall), the longest job of each, from every option that sets
        how long a job runs (fsbench.tools.fio.estimate); plus start-up."""
        return job_file_seconds(self._jobfile(options, job_file_text, jobs, "job", job_file))[0]

    def longest_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                        job_file: str | None = None) -> float:
        """The longest the jobs may run as fio allows them (at rate_min), for the case timeout."""
        return job_file_seconds(self._jobfile(options, job_file_text, jobs, "job", job_file))[1]

    def layout_bytes(self, options: dict, job_file_text: str | None, jobs: dict, job_file: str | None = None) -> float:
        """Bytes a prepare step lays out: every job's size x numjobs (its files)."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        return sum(file_bytes(opts) * option_int(opts.get("numjobs"), 1) for _name, opts in jf.jobs())

    def reads(self, options: dict, job_file_text: str | None, jobs: dict, job_file: str | None = None) -> bool:
        """Whether some job reads (or trims) files it needs laid out first: fio's default rw is read."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        return any(job_reads(opts) for _n, opts in jf.jobs())

    def writes(self, options: dict, job_file_text: str | None, jobs: dict, job_file: str | None = None) -> bool:
        """Whether some job makes its files from scratch (only writes, or creates them): with a dataset, the
        files an earlier case left are removed first, so that it measures writing new files."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        return any(job_writes(opts) for _n, opts in jf.jobs())

    def prepare_bytes(self, options: dict, job_file_text: str | None, jobs: dict,
                      job_file: str | None = None) -> float:
        """Bytes the prepare step lays out: the files of the jobs that read."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        return sum(file_bytes(opts) * option_int(opts.get("numjobs"), 1)
                   for _name, opts in jf.jobs() if job_reads(opts))

    def read_working_set(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """The distinct bytes of the jobs' reads through the page cache: direct=1 and librbd bypass it."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        return sum(file_bytes(opts) * option_int(opts.get("numjobs"), 1) for _name, opts in jf.jobs()
                   if job_reads(opts) and option_int(opts.get("direct"), 0) != 1 and opts.get("ioengine") != "rbd")

    def _jobfile(self, options: dict, job_file_text: str | None, jobs: dict, default_job: str,
                 job_file: str | None = None) -> JobFile:
        jf = parse_jobfile(job_file_text, job_file or "job_file") if job_file_text is not None else JobFile()
        if job_file_text is None:
            for k, v in options.items():
                jf.set("global", k, v, Origin("options"))
        else:
            jf.override(options, Origin("options"))
        for job, opts in jobs.items():
            for k, v in opts.items():
                jf.set(job, k, v, Origin(f"jobs.{job}"))
        if not jf.job_names():
            jf.section(default_job)
        return jf

    def render_jobfile(self, case: Case, test_dir: str, *, prepare: bool = False, rbd: dict | None = None) -> str:
        """The job file of a case: scenario options, every job pointed at test_dir, one result per section
        (fsbench.tools.fio.render); `rbd` (an rbd-image target): every job on that image through librbd."""
        jf = self._jobfile(case.options, case.job_file_text, case.jobs, case.workload, case.job_file)
        grouped = case.options.get("group_reporting") is not False
        if rbd is not None:
            head = f"# generated by fsbench for case {case.case_id} (librbd)\n"
            return head + on_image(jf, rbd, grouped=grouped).render()
        in_folder(jf, test_dir, grouped=grouped, dataset=case.dataset, prepare=prepare)
        note = " (prepare: lay out the files)" if prepare else ""
        return f"# generated by fsbench for case {case.case_id}{note}\n" + jf.render()

    @staticmethod
    def rbd_options(ctx: BuildContext | None) -> dict | None:
        """pool, rbdname and clientname of an rbd-image target (its settings, placeholders filled), else None."""
        if ctx is None or ctx.target_kind != RBD_KIND or ctx.target_settings is None:
            return None
        return dict(rbd_values(RBD_KIND, ctx.target_settings) or ())

    def _device_case(self, case: Case, test_dir: str, ctx: BuildContext | None) -> Case:
        """On a device target every job addresses the device (test_dir), unless it names a file itself."""
        if ctx is None or ctx.address != "device":
            return case
        # fio splits filename lists on ':' (a by-path device name has several); `\:` keeps one
        return dataclasses.replace(case, options={"filename": test_dir.replace(":", "\\:"), **case.options})

    def build(self, case: Case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """fio with its JSON going to its own file; across hosts, fio's own client/server mode.

        Across hosts every host gets `fio --server` bound to its address and its own job file whose
        directory is `<test_dir>/<host>`; the client runs here with one `--client=HOST JOBFILE` pair
        per host (`--client=A --client=B job` would run on B only).
        """
        return self._invocation(case, test_dir, ctx, prepare=False)

    def included_files(self, job_file_text: str, job_file: str) -> dict[Path, str]:
        """Every file the job file includes (nested `include`s too) with its text, for a resume's input check."""
        return included_files(job_file_text, job_file)

    def layout_key(self, prep: Invocation) -> str:
        """What decides the files a prepare step lays out (fsbench.tools.fio.layout)."""
        return layout.layout_key(prep)

    def cover_layout(self, preps: list[Invocation]) -> Invocation | None:
        """The step that lays out the files of all of preps: theirs with the most clones (fsbench.tools.fio.layout)."""
        return layout.cover(preps)

    def prepare(self, case: Case, test_dir: str, ctx: BuildContext | None = None) -> Invocation | None:
        """The untimed layout pass before a case that reads: same jobs, `create_only`; on an RBD image, the
        extents the jobs read written once; None when nothing reads (or on a device, which holds whatever it holds).

        The image fill names no case, so the runner can tell two cases' fills are the same and write it once
        per target (as cases of one dataset share its files)."""
        reads = self.reads(case.options, case.job_file_text, case.jobs, case.job_file)
        rbd = self.rbd_options(ctx)
        if reads and rbd is not None:
            jf = self._jobfile(case.options, case.job_file_text, case.jobs, case.workload,
                               case.job_file)
            text = "# generated by fsbench: the image's extent this case reads, written before it (librbd)\n" + \
                on_image(image_fill(jf), rbd, grouped=False).render()
            if ctx is not None and ctx.multi():  # one host writes it: the image is the same for all of them
                first = next(iter(ctx.hosts))
                return self._wrap({first: text}, test_dir, dataclasses.replace(ctx, hosts={first: ctx.hosts[first]}),
                                  rbd, client=True)
            return self._wrap(text, test_dir, ctx, rbd)
        if ctx is not None and ctx.address != "directory":
            return None
        if not reads:
            return None
        return self._invocation(case, test_dir, ctx, prepare=True)

    def _invocation(self, case: Case, test_dir: str, ctx: BuildContext | None, *, prepare: bool) -> Invocation:
        case = self._device_case(case, test_dir, ctx)
        rbd = self.rbd_options(ctx)
        if ctx is None or not ctx.multi():
            return self._wrap(self.render_jobfile(case, test_dir, prepare=prepare, rbd=rbd), test_dir, ctx, rbd)
        texts = {name: self.render_jobfile(case, f"{test_dir}/{name}", prepare=prepare, rbd=rbd) for name in ctx.hosts}
        return self._wrap(texts, test_dir, ctx, rbd)

    def _wrap(self, text: str | dict[str, str], test_dir: str, ctx: BuildContext | None, rbd: dict | None,
              *, client: bool = False) -> Invocation:
        """fio reading a job file; across hosts (or with `client`) fio's client/server mode, `text` then
        mapping each host to its own job file."""
        # librbd reads the cluster's address from the conf CEPH_CONF names (the engine has no option for it)
        conf = ctx.target_settings.conf if ctx is not None and isinstance(ctx.target_settings, RbdImage) else ""
        env = {"CEPH_CONF": str(conf)} if rbd is not None and ctx else {}
        argv = ["fio", "--output-format=json", f"--output={OUTPUT}"]
        if ctx is None or not (ctx.multi() or client):
            single = text if isinstance(text, str) else next(iter(text.values()))
            return Invocation(argv=argv + [JOBFILE], files={JOBFILE: single}, outputs=[OUTPUT], env=env)
        inv = Invocation(argv=argv, outputs=[OUTPUT], controller=True)
        for name, h in ctx.hosts.items():
            job = f"job-{name}.fio"
            inv.files[job] = text if isinstance(text, str) else text[name]
            inv.argv += [f"--client=ip:{h.address},{ctx.port}", job]
            # the jobs run in each host's server: that is where librbd needs the conf
            inv.servers[name] = [*(["env", f"CEPH_CONF={env['CEPH_CONF']}"] if env else []), "fio",
                                 f"--server=ip:{h.address},{ctx.port}"]
            inv.wait_ports.append((h.address, ctx.port))
            inv.host_dirs[name] = f"{test_dir}/{name}"
        return inv

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """fio.json, or fio's stdout when the output file is missing."""
        out = raw_dir / OUTPUT
        if not out.exists() or out.stat().st_size == 0:
            stdout = raw_dir / "stdout"
            if stdout.exists() and stdout.stat().st_size:
                return self.parse_file(stdout)
            raise ParseError("fio", str(out), "fio wrote no output file: it failed before any job ran "
                                              "(see stderr in the same folder)")
        return parse_json.parse_path(out)  # the same stream as parse_file's JSON

    def parse_file(self, path: Path) -> ParseResult:
        """Any fio output: JSON (also mixed with text), normal text or terse; read as a stream."""
        return parse_any(path if isinstance(path, Path) else Path(path))

    def version_argv(self, options: dict | None = None) -> list[str]:
        """`fio --version` prints e.g. fio-3.33."""
        return ["fio", "--version"]


PLUGIN: ToolAdapter = FioAdapter()

__all__ = ["JOBFILE", "OUTPUT", "PLUGIN", "FioAdapter", "parse_any"]
