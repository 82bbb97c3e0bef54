"""The fio adapter: job files from the scenario, JSON to its own file, every output format parsed."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import posixpath
import re
from pathlib import Path

from fsbench.errors import ParseError
from fsbench.tidy import ParseResult
from fsbench.tools.base import BuildContext, Invocation, OptionIssue
from fsbench.tools.fio import parse_json
from fsbench.tools.fio.containment import TargetPlace, find_escapes, split_paths
from fsbench.tools.fio.jobfile import JobFile, Origin, parse_jobfile
from fsbench.units import parse_duration, parse_size

OUTPUT = "fio.json"
JOBFILE = "job.fio"
#: options fsbench owns: it points every job at the case's own test directory and collects JSON
RESERVED = {"directory": "fsbench sets directory to a unique subdirectory of the target",
            "output": "fsbench writes fio's JSON to the case's raw directory",
            "output-format": "fsbench reads fio's JSON output"}
RW = {"read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "readwrite", "randrw",
      "trimwrite", "randtrimwrite"}
#: rough throughput used to estimate runs that have no runtime (a plan needs a number, not a promise)
ASSUMED_BW = 400 * 2**20
#: the target kind fio reaches through its own rbd engine (librbd), and the options that name files,
#: which mean nothing there (the engine addresses the image)
RBD_KIND = "rbd-image"
FILE_OPTIONS = ("directory", "filename", "filename_format", "nrfiles", "opendir", "unique_filename",
                "fallocate", "create_on_open", "unlink", "unlink_each_loop")


@functools.cache
def known_options() -> frozenset[str]:
    """fio 3.33's option names and aliases."""
    text = (Path(__file__).parent / "options.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


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
    operations = ("read", "write", "trim")
    primary_metrics = ("bandwidth", "iops", "clat_mean", "clat_p99")
    #: the report\'s views of its workloads without `report.views` (a sweep adds by_value and chart)
    views = ("table",)
    packages = {"apt-get": ["fio"], "dnf": ["fio"], "zypper": ["fio"]}

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict, ctx: dict) -> list[OptionIssue]:
        """Unknown names (with a suggestion), options fsbench owns, values fio would misread, and any
        place a job would do I/O outside the case folder (file:line of the job file where it came from)."""
        issues = self._check(options, "", ctx)
        for job, opts in jobs.items():
            issues += self._check(opts, f"{job}.", ctx)
        if job_file_text is not None and not parse_jobfile(job_file_text, env={}).job_names():
            issues.append(OptionIssue("", "the job file has no job section", "add a [jobname] section"))
        jf = self._jobfile(options, job_file_text, jobs, "job", ctx.get("job_file"))
        for origin, problem in jf.problems:
            issues.append(OptionIssue("", problem, "", origin=origin))
        targets = [TargetPlace(*t) for t in ctx.get("targets", [])]
        for e in find_escapes(jf, targets, allow_commands=bool(ctx.get("allow_commands"))):
            if e.option in RESERVED and (e.origin is None or e.origin.line is None):
                continue  # already refused above as an option fsbench owns
            where = f"{e.section}.{e.option}" if e.section != "global" else e.option
            issues.append(OptionIssue(where if e.origin is None or e.origin.line is None else "",
                                      e.message, e.hint, origin=e.origin if e.origin and e.origin.line else None,
                                      option=f"[{e.section}] {e.option}"))
        return issues

    def _check(self, options: dict, prefix: str, ctx: dict) -> list[OptionIssue]:
        out = []
        for key, value in options.items():
            path = prefix + key
            if isinstance(value, list):
                out.append(OptionIssue(path, "a list in options is not a sweep",
                                       f"to run each value, move it to `sweep: {{product: {{{key}: [...]}}}}`; "
                                       "for one fio value with separators, write it as text, e.g. '4k/50:64k/50'"))
            elif key in RESERVED:
                out.append(OptionIssue(path, f"{key!r} cannot be set here: {RESERVED[key]}"))
            elif key not in known_options():
                close = difflib.get_close_matches(key, known_options(), n=3)
                out.append(OptionIssue(path, f"unknown fio option {key!r}",
                                       (f"did you mean {' or '.join(map(repr, close))}? " if close else "")
                                       + "(checked against fio 3.33; options of newer fio go in a job_file)"))
            elif key in ("rw", "readwrite") and str(value) not in RW:
                out.append(OptionIssue(path, f"rw={value!r} is not an I/O pattern fio knows",
                                       f"one of {', '.join(sorted(RW))}"))
            elif key in ("numjobs", "iodepth") and not (isinstance(value, int) and not isinstance(value, bool)
                                                          and value >= 1):
                out.append(OptionIssue(path, f"{key} must be a whole number >= 1, got {value!r}"))
            elif key in ("bs", "blocksize", "size", "filesize", "io_size") and not _size_ok(value):
                out.append(OptionIssue(path, f"{key}={value!r} is not a size",
                                       "for example 4k, 1m, 128KiB, 10g (or a range such as 4k-64k)"))
            elif key in ("runtime", "ramp_time") and not _duration_ok(value):
                out.append(OptionIssue(path, f"{key}={value!r} is not a duration", "for example 30, 30s, 2m"))
        return out

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        """Sum over stonewalled groups of the longest job, from runtime or size; plus start-up."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        groups: list[float] = []
        for name, merged in jf.jobs():
            seconds = _job_seconds(merged)
            opts = jf.section(name)
            if not groups or "stonewall" in opts or "new_group" in opts or "wait_for_previous" in opts:
                groups.append(seconds)
            else:
                groups[-1] = max(groups[-1], seconds)
        return round(sum(groups) + 1.0, 1)

    def layout_bytes(self, options: dict, job_file_text: str | None, jobs: dict, job_file: str | None = None) -> float:
        """Bytes a prepare step lays out: every job's size x numjobs (its files)."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        total = 0.0
        for _name, merged in jf.jobs():
            total += _size_bytes(merged) * _int(merged.get("numjobs"), 1)
        return total

    def reads(self, options: dict, job_file_text: str | None, jobs: dict, job_file: str | None = None) -> bool:
        """Whether some job reads (or trims) files it needs laid out first: fio's default rw is read."""
        jf = self._jobfile(options, job_file_text, jobs, "job", job_file)
        return any(str(m.get("rw") or m.get("readwrite") or "read") not in ("write", "randwrite")
                   and m.get("ioengine") not in ("filecreate", "filedelete", "filestat", "dircreate", "dirdelete",
                                                 "dirstat", "null", "cpuio")
                   for _n, m in jf.jobs())

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

    def render_jobfile(self, case, test_dir: str, *, prepare: bool = False, rbd: dict | None = None) -> str:
        """The job file of a case: scenario options, every job pointed at test_dir, one result per section.

        `directory` goes into each job section (a relative one from the job file is joined under test_dir);
        a job whose `filename` is a destructive target's own device or file gets none. With group_reporting
        (the default) each job section is its own reporting group (`new_group`), so parallel sections keep
        their own results while the numjobs clones of one section are merged. `prepare` renders the layout
        pass: the same jobs with `create_only`, which only writes the files the measured run will read.
        `rbd` (an rbd-image target): every job uses fio's rbd engine on that image, no files or folders.
        """
        jf = self._jobfile(case.options, case.job_file_text, case.jobs, case.workload, getattr(case, "job_file", None))
        grouped = case.options.get("group_reporting") is not False
        if rbd is not None:
            return f"# generated by fsbench for case {case.case_id} (librbd)\n" + \
                self._rbd_jobfile(jf, rbd, grouped).render()
        glob = jf.section("global")
        if grouped:
            glob.setdefault("group_reporting", None)
        glob_dir = glob.pop("directory", None)
        # fio prefixes a filename with the directory set *before* it, so each job gets its directory
        # first and then its filename (moved down from [global], where it would be added too early)
        glob_file = glob.pop("filename", None)
        dataset = getattr(case, "dataset", "")
        sections = 0
        for name, opts in jf.sections:
            if name == "global":
                continue
            if dataset and "filename_format" not in opts and "filename_format" not in glob \
                    and "filename" not in opts and glob_file is None:
                # cases sharing a dataset share file names, whatever their job names: a read workload
                # finds the files a write workload of the same dataset left (n-th section <-> n-th section)
                opts["filename_format"] = f"{dataset}.{sections}.$jobnum.$filenum"
            sections += 1
            own = opts.pop("directory", None) or glob_dir
            filename = opts.pop("filename", glob_file)
            head: dict[str, str | None] = {}
            if not any(p.startswith("/") for p in split_paths(filename or "")):
                parts = split_paths(own) if own else [""]
                # fio splits directory lists on ':'; a ':' inside the target's path is escaped
                head["directory"] = ":".join(posixpath.join(test_dir, p).rstrip("/").replace(":", "\\:")
                                             for p in parts)
            if filename is not None:
                head["filename"] = filename
            opts_new = {**head, **opts}
            if grouped:
                opts_new.setdefault("new_group", None)
            opts.clear()
            opts.update(opts_new)
        if prepare:
            glob["create_only"] = "1"
            for opt in ("time_based", "runtime", "ramp_time", "startdelay"):
                glob.pop(opt, None)
        note = " (prepare: lay out the files)" if prepare else ""
        return f"# generated by fsbench for case {case.case_id}{note}\n" + jf.render()

    @staticmethod
    def _rbd_jobfile(jf: JobFile, rbd: dict, grouped: bool) -> JobFile:
        """Every section on the rbd engine and the target's image; file and folder options dropped."""
        for name, opts in jf.sections:
            for opt in FILE_OPTIONS:
                opts.pop(opt, None)
            if name == "global":
                opts.update({**rbd, "ioengine": "rbd"})
                if grouped:
                    opts.setdefault("group_reporting", None)
            else:
                if "ioengine" in opts:
                    opts["ioengine"] = "rbd"
                if grouped:
                    opts.setdefault("new_group", None)
        return jf

    @staticmethod
    def rbd_options(ctx: BuildContext | None) -> dict | None:
        """pool, rbdname and clientname of an rbd-image target (its settings, placeholders filled), else None."""
        if ctx is None or ctx.target_kind != RBD_KIND or ctx.target_settings is None:
            return None
        spec = ctx.target_settings
        return {"pool": str(spec.pool), "rbdname": str(spec.image),  # type: ignore[attr-defined]
                "clientname": str(spec.user)}  # type: ignore[attr-defined]

    def _device_case(self, case, test_dir: str, ctx: BuildContext | None):
        """On a device target every job addresses the device (test_dir), unless it names a file itself."""
        if ctx is None or ctx.address != "device":
            return case
        return dataclasses.replace(case, options={"filename": test_dir, **case.options})

    def build(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """fio with its JSON going to its own file; across hosts, fio's own client/server mode.

        Across hosts every host gets `fio --server` bound to its address and its own job file whose
        directory is `<test_dir>/<host>`; the client runs here with one `--client=HOST JOBFILE` pair
        per host (`--client=A --client=B job` would run on B only).
        """
        return self._invocation(case, test_dir, ctx, prepare=False)

    def prepare(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation | None:
        """The untimed layout pass before a case that reads: same jobs, `create_only`; None when nothing reads
        (or on a device, which holds whatever it holds)."""
        reads = self.reads(case.options, case.job_file_text, case.jobs, getattr(case, "job_file", None))
        if reads and self.rbd_options(ctx) is not None:
            # an image reads back zeros, at memory speed, where nothing was written: write what is read
            fill = {k: v for k, v in case.options.items() if k in ("size", "offset", "direct")}
            fill_case = dataclasses.replace(case, options={**fill, "rw": "write", "bs": "4m", "iodepth": 4},
                                            jobs={}, job_file_text=None)
            return self._invocation(fill_case, test_dir, ctx, prepare=False)
        if ctx is not None and ctx.address != "directory":
            return None
        if not reads:
            return None
        return self._invocation(case, test_dir, ctx, prepare=True)

    def _invocation(self, case, test_dir: str, ctx: BuildContext | None, *, prepare: bool) -> Invocation:
        case = self._device_case(case, test_dir, ctx)
        rbd = self.rbd_options(ctx)
        # librbd reads the cluster's address from the conf CEPH_CONF names (the engine has no option for it)
        env = {"CEPH_CONF": str(getattr(ctx.target_settings, "conf", ""))} if rbd and ctx else {}
        argv = ["fio", "--output-format=json", f"--output={OUTPUT}"]
        if ctx is None or not ctx.multi():
            return Invocation(argv=argv + [JOBFILE],
                              files={JOBFILE: self.render_jobfile(case, test_dir, prepare=prepare, rbd=rbd)},
                              outputs=[OUTPUT], env=env)
        inv = Invocation(argv=argv, outputs=[OUTPUT], controller=True)
        for name, h in ctx.hosts.items():
            job = f"job-{name}.fio"
            host_dir = f"{test_dir}/{name}"
            inv.files[job] = self.render_jobfile(case, host_dir, prepare=prepare, rbd=rbd)
            inv.argv += [f"--client=ip:{h.address},{ctx.port}", job]
            # the jobs run in each host's server: that is where librbd needs the conf
            inv.servers[name] = [*(["env", f"CEPH_CONF={env['CEPH_CONF']}"] if env else []), "fio",
                                 f"--server=ip:{h.address},{ctx.port}"]
            inv.wait_ports.append((h.address, ctx.port))
            inv.host_dirs[name] = host_dir
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
        return parse_json.parse_text(out.read_text(errors="replace"), str(out))

    def parse_file(self, path: Path) -> ParseResult:
        """Any fio output: JSON (also mixed with text), normal text or terse; read as a stream."""
        return parse_any(Path(path))

    def version_argv(self, options: dict | None = None) -> list[str]:
        """`fio --version` prints e.g. fio-3.33."""
        return ["fio", "--version"]


_TERSE = re.compile(r"^(?:[23]|4|5);fio-", re.MULTILINE)
# a line that opens a JSON object: `{` alone (fio's layout) or followed by a key (one-line JSON)
_JSON = re.compile(r"^[ \t\ufeff]*\{[ \t]*(?:\"|\r?$)", re.MULTILINE)
#: how much of a file is read to tell its format (fio's text preamble before JSON is a few lines)
SNIFF = 1 << 20


def parse_any(text: str | os.PathLike, source: str | None = None) -> ParseResult:
    """Pick the parser by what the output holds: a JSON object line, terse lines, or the normal layout.

    `text` is the output itself, or the path of a file, which is then read as a stream (JSON in
    chunks, text line by line) instead of as one string.
    """
    if isinstance(text, str):
        src = source or "<string>"
        kind = _kind(text)
        if kind == "json":
            return parse_json.parse_text(text, src)
        from fsbench.tools.fio import parse_normal, parse_terse

        return (parse_terse if kind == "terse" else parse_normal).parse_text(text, src)
    path = Path(text)
    src = source or str(path)
    try:
        return _parse_file(path, src)
    except OSError as exc:
        raise ParseError("fio", src, f"cannot read: {exc.strerror or exc}") from None


def _kind(head: str) -> str:
    if _JSON.search(head):
        return "json"
    return "terse" if _TERSE.search(head) else "normal"


def _parse_file(path: Path, source: str) -> ParseResult:
    from fsbench.tools.fio import parse_normal, parse_terse

    # utf-8-sig drops a byte-order mark; undecodable bytes become U+FFFD, never an exception
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as f:
        kind = _kind(f.read(SNIFF))
        f.seek(0)
        if kind == "json":
            return parse_json.parse_chunks(iter(lambda: f.read(parse_json.CHUNK), ""), source)
    with path.open(encoding="utf-8-sig", errors="replace") as f:  # universal line ends, as text_lines
        parser = parse_terse if kind == "terse" else parse_normal
        return parser.parse_lines(parse_normal.file_lines(f), source)


def _size_ok(value: object) -> bool:
    if isinstance(value, int) and not isinstance(value, bool):
        return value > 0
    text = str(value)
    try:
        for part in re.split(r"[-:,/]", text):
            if part and not part.endswith("%"):
                parse_size(part)
        return True
    except ValueError:
        return False


def _duration_ok(value: object) -> bool:
    try:
        parse_duration(value)  # type: ignore[arg-type]
        return True
    except (ValueError, TypeError):
        return False


def _job_seconds(opts: dict) -> float:
    runtime = opts.get("runtime")
    ramp = _seconds(opts.get("ramp_time"))
    if runtime is not None and ("time_based" in opts or _seconds(runtime) > 0):
        limit = _seconds(runtime)
        if "time_based" in opts:
            return limit + ramp
        return min(limit, _size_seconds(opts)) + ramp
    return _size_seconds(opts) + ramp


def _size_bytes(opts: dict) -> float:
    """A job's file size (size, else filesize's upper end, else fio's 1 GiB fallback for a plan)."""
    for key in ("size", "filesize"):
        value = opts.get(key)
        if value:
            try:
                return float(parse_size(str(value).split("-")[-1].split(",")[-1]))
            except ValueError:
                continue
    return float(2**30)


def _int(value: object, default: int) -> int:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() else default


def _size_seconds(opts: dict) -> float:
    try:
        size = float(parse_size(opts["io_size"])) if opts.get("io_size") else _size_bytes(opts)
    except ValueError:
        size = _size_bytes(opts)
    # the jobs of one section share the storage's bandwidth
    return size * _int(opts.get("loops"), 1) * _int(opts.get("numjobs"), 1) / ASSUMED_BW


def _seconds(value: object) -> float:
    if value is None:
        return 0.0
    try:
        return parse_duration(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return 0.0


PLUGIN = FioAdapter()
