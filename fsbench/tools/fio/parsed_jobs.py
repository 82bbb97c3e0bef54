"""The jobs every fio output format (JSON, normal text, terse) is parsed into, and the tidy rows they become."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fsbench.core.tidy import FLOAT_MAX, METRIC_UNITS, PLAUSIBLE_MAX, ParseResult
from fsbench.core.units import parse_size

TOOL = "fio"
DIRECTIONS = ("read", "write", "trim")
#: metric order of every fio parser, so rows of the JSON, normal and terse parsers line up
METRIC_ORDER = (
    "bandwidth", "iops", "io_bytes", "ops", "runtime", "clat_mean", "clat_min", "clat_max", "clat_stddev",
    "clat_p50", "clat_p90", "clat_p95", "clat_p99", "clat_p99.9", "lat_mean", "slat_mean", "file_rate",
)
#: (metric, unit, the largest plausible value of the unit: tidy.vet's common case) in row order
_METRICS = tuple((m, METRIC_UNITS[m], PLAUSIBLE_MAX.get(METRIC_UNITS[m], FLOAT_MAX)) for m in METRIC_ORDER)
#: clat percentile -> metric; only these are kept ("50.000000" in JSON, "50.00th" in text)
PERCENTILES = {50.0: "clat_p50", 90.0: "clat_p90", 95.0: "clat_p95", 99.0: "clat_p99", 99.9: "clat_p99.9"}
_PERCENTILE_NAMES: dict[str, str | None] = {}


def percentile_metric(text: str) -> str | None:
    """'99.900000' (JSON) or '99.90' (text) -> 'clat_p99.9', None for a percentile not kept; remembered,
    as every job and block repeats the same ones."""
    metric = _PERCENTILE_NAMES.get(text, "")
    if metric == "":
        try:
            metric = PERCENTILES.get(float(text))
        except (ValueError, OverflowError):
            metric = None
        if len(_PERCENTILE_NAMES) < 1000:  # odd outputs must not grow it without bound
            _PERCENTILE_NAMES[text] = metric
    return metric
ERRNO = {13: "EACCES", 25: "ENOTTY", 28: "ENOSPC", 30: "EROFS", 84: "EILSEQ (verify failed)"}

@dataclass
class ParsedDirection:
    """One direction of one job: metric -> value in canonical units."""

    op: str
    values: dict[str, float] = field(default_factory=dict)
    complete: bool = False


@dataclass
class ParsedJob:
    """One job (or All clients) entry of any fio output format, before it becomes rows."""

    name: str
    groupid: int
    error: int = 0
    error_text: str = ""
    pid: int = 0
    directions: list[ParsedDirection] = field(default_factory=list)
    ops: dict[str, float] = field(default_factory=dict)
    host: str = ""
    #: the job's own options ("job options" of fio's JSON), for the whole-file test of file_rate
    options: dict[str, str] = field(default_factory=dict)


def whole_file_io(options: dict[str, str]) -> bool:
    """Whether every I/O of a job is one whole file: one block size equal to one file size (bs=filesize=128k,
    seed 001's small files). Then its IOPS are files per second, reported as the metric file_rate."""
    bs, filesize = str(options.get("bs", "")), str(options.get("filesize", ""))
    if not bs or not filesize or any(c in bs + filesize for c in "-:,/%"):
        return False  # ranges, per-direction sizes and percentages are not one size
    try:
        return parse_size(bs) == parse_size(filesize) > 0
    except ValueError:
        return False


def rows_from_jobs(jobs: list[ParsedJob], out: ParseResult, global_options: dict | None = None) -> bool:
    """Rows of complete directions that moved data; same-named jobs told apart by job_index. True when
    every row's value passes tidy.vet's common case (a finite float from 0 to its unit's plausible
    maximum), so vet would keep every row as it is."""
    plausible = True
    base = {str(k): str(v) for k, v in (global_options or {}).items()}
    whole_files = {id(job): whole_file_io({**base, **job.options}) for job in jobs}
    names_by_group: dict[int, set[str]] = {}
    for job in jobs:
        if job.name != "All clients":
            names_by_group.setdefault(job.groupid, set()).add(job.name)
    seen: Counter = Counter()
    for job in jobs:
        aggregate = job.name == "All clients"
        host, name = ("all", job.name) if aggregate else (job.host, job.name)
        if aggregate:  # the aggregate takes its group's job name when there is just one
            names = names_by_group.get(job.groupid, set())
            name = next(iter(names)) if len(names) == 1 else "all"
        index = seen[(host, name)]
        seen[(host, name)] += 1
        if job.error:
            label = ERRNO.get(job.error, job.error_text or f"errno {job.error}")
            out.warnings.append(f"fio job {name!r}{' on ' + host if host else ''} ended with "
                                f"error={job.error} ({label})")
        gid = job.groupid
        for d in job.directions:
            values = d.values
            if d.op in job.ops:
                values = {**values, "ops": job.ops[d.op]}
            if whole_files.get(id(job)) and "iops" in values:
                values = {**values, "file_rate": values["iops"]}
            if not d.complete or not (values.get("io_bytes", 0) > 0 or values.get("ops", 0) > 0):
                continue  # a direction is reported only when it moved data
            # tidy.measurement's row, written out, its keys in that order: each row is a copy of this one with
            # its metric, value and unit set (copying a dict is half the cost of building it key by key, and
            # this runs for every row of a huge output)
            template: dict = {"tool": TOOL, "host": host, "job": name, "operation": d.op, "metric": "",
                              "stat": "value", "value": 0.0, "unit": "", "job_index": index, "groupid": gid}
            for metric, unit, limit in _METRICS:
                got = values.get(metric)
                if got is not None:  # not-finite values reach tidy.vet, which drops them with a warning
                    value = float(got)
                    row = template.copy()
                    row["metric"], row["value"], row["unit"] = metric, value, unit
                    out.rows.append(row)
                    plausible = plausible and 0.0 <= value <= limit
    return plausible
