"""The fio adapter: job files from the scenario, JSON to its own file, every output format parsed."""

from __future__ import annotations

import difflib
import functools
import os
import re
from pathlib import Path

from fsbench.errors import ParseError
from fsbench.tidy import ParseResult
from fsbench.tools.base import BuildContext, Invocation, OptionIssue, register
from fsbench.tools.fio import parse_json
from fsbench.tools.fio.jobfile import JobFile, parse_jobfile, set_option
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


@functools.cache
def known_options() -> frozenset[str]:
    """fio 3.33's option names and aliases."""
    text = (Path(__file__).parent / "options.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


class FioAdapter:
    """fio on one host (client/server across hosts arrives with the SSH transport)."""

    name = "fio"
    bring_your_own = False

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict, ctx: dict) -> list[OptionIssue]:
        """Unknown names (with a suggestion), options fsbench owns, and values fio would misread."""
        issues = self._check(options, "", ctx)
        for job, opts in jobs.items():
            issues += self._check(opts, f"{job}.", ctx)
        if job_file_text is not None:
            jf = parse_jobfile(job_file_text)
            if not jf.job_names():
                issues.append(OptionIssue("", "the job file has no job section", "add a [jobname] section"))
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
            elif key == "filename" and not ctx.get("destructive"):
                out.append(OptionIssue(path, "filename points fio at a fixed file or device",
                                       "only for targets with `destructive: true`; otherwise leave it out and "
                                       "fio creates files in the case's test directory"))
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

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict) -> float:
        """Sum over stonewalled groups of the longest job, from runtime or size; plus start-up."""
        jf = self._jobfile(options, job_file_text, jobs, "job")
        glob = dict(jf.section("global"))
        groups: list[float] = []
        for name, opts in jf.sections:
            if name == "global":
                continue
            merged = {**glob, **opts}
            seconds = _job_seconds(merged)
            if not groups or "stonewall" in opts or "new_group" in opts or "wait_for_previous" in opts:
                groups.append(seconds)
            else:
                groups[-1] = max(groups[-1], seconds)
        return round(sum(groups) + 1.0, 1)

    def _jobfile(self, options: dict, job_file_text: str | None, jobs: dict, default_job: str) -> JobFile:
        jf = parse_jobfile(job_file_text) if job_file_text is not None else JobFile()
        glob = jf.section("global")
        if job_file_text is None:
            for k, v in options.items():
                set_option(glob, k, v)
        else:
            jf.override(options)
        for job, opts in jobs.items():
            section = jf.section(job)
            for k, v in opts.items():
                set_option(section, k, v)
        if not jf.job_names():
            jf.section(default_job)
        return jf

    def render_jobfile(self, case, test_dir: str) -> str:
        """The job file of a case: scenario options in [global], fsbench's directory and reporting."""
        jf = self._jobfile(case.options, case.job_file_text, case.jobs, case.workload)
        glob = jf.section("global")
        if case.options.get("group_reporting") is not False:
            glob.setdefault("group_reporting", None)  # one entry per job section, not per clone
        for _, opts in jf.sections:
            opts.pop("directory", None)
        if "filename" not in glob:
            glob["directory"] = test_dir
        return f"# generated by fsbench for case {case.case_id}\n" + jf.render()

    def build(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """fio with its JSON going to its own file; across hosts, fio's own client/server mode.

        Across hosts every host gets `fio --server` bound to its address and its own job file whose
        directory is `<test_dir>/<host>`; the client runs here with one `--client=HOST JOBFILE` pair
        per host (`--client=A --client=B job` would run on B only).
        """
        argv = ["fio", "--output-format=json", f"--output={OUTPUT}"]
        if ctx is None or not ctx.multi():
            return Invocation(argv=argv + [JOBFILE], files={JOBFILE: self.render_jobfile(case, test_dir)},
                              outputs=[OUTPUT])
        inv = Invocation(argv=argv, outputs=[OUTPUT], controller=True)
        for name, h in ctx.hosts.items():
            job = f"job-{name}.fio"
            host_dir = f"{test_dir}/{name}"
            inv.files[job] = self.render_jobfile(case, host_dir)
            inv.argv += [f"--client=ip:{h.address},{ctx.port}", job]
            inv.servers[name] = ["fio", f"--server=ip:{h.address},{ctx.port}"]
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
        """Any fio output: JSON (also mixed with text), normal text or terse."""
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise ParseError("fio", str(path), f"cannot read: {exc.strerror}") from None
        return parse_any(text, str(path))

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


def _size_seconds(opts: dict) -> float:
    try:
        size = parse_size(opts.get("io_size") or opts.get("size") or "1g")
    except ValueError:
        size = 2**30
    loops = int(opts.get("loops") or 1) if str(opts.get("loops") or "1").isdigit() else 1
    return size * loops / ASSUMED_BW


def _seconds(value: object) -> float:
    if value is None:
        return 0.0
    try:
        return parse_duration(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return 0.0


register(FioAdapter())
