"""The job file fsbench writes for a case: every job pointed at the case folder (or the target's RBD image),
one result per section, and the untimed passes that lay out what the measured run reads."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from fsbench.tools.fio.jobfile import JobFile, Section
from fsbench.tools.fio.option_reach import RBD_ENGINE, RBD_OPTIONS, split_paths

#: options that name files, which mean nothing on an RBD image (the engine addresses the image)
FILE_OPTIONS = ("directory", "filename", "filename_format", "nrfiles", "opendir", "unique_filename",
                "fallocate", "create_on_open", "unlink", "unlink_each_loop")
#: options that only make a run take longer, dropped from a layout pass
TIMING_OPTIONS = ("time_based", "runtime", "ramp_time", "startdelay", "thinktime", "rate", "rate_iops",
                  "rate_min", "rate_iops_min", "number_ios", "io_size", "loops")
#: what a fill of an RBD image keeps of each reading job: the extent it reads
EXTENT_OPTIONS = ("size", "offset", "offset_increment", "direct")
#: engines whose jobs read no data a layout pass could write
NO_DATA_ENGINES = ("filecreate", "filedelete", "filestat", "dircreate", "dirdelete", "dirstat", "null", "cpuio")
#: of those, the engines whose jobs make the files they work on
CREATING_ENGINES = ("filecreate", "dircreate")
#: rw values that only write: such a job makes its files' content itself, reading nothing back
WRITE_ONLY = ("write", "randwrite", "trimwrite")


def job_reads(opts: Mapping) -> bool:
    """Whether a job (its options as fio gives them) reads data it needs written first: fio's default rw is read."""
    return str(opts.get("rw") or "read").split(":")[0] not in ("write", "randwrite") \
        and opts.get("ioengine") not in NO_DATA_ENGINES


def job_writes(opts: Mapping) -> bool:
    """Whether a job makes its files from scratch (only writes, or creates them): it measures new files only
    where none are left from before, and its files are no business of a layout pass."""
    engine = opts.get("ioengine")
    if engine in NO_DATA_ENGINES:
        return engine in CREATING_ENGINES
    return str(opts.get("rw") or "read").split(":")[0] in WRITE_ONLY


def in_folder(jf: JobFile, test_dir: str, *, grouped: bool, dataset: str, prepare: bool) -> JobFile:
    """Every job in test_dir: `directory` in each job section (relative ones joined under test_dir).

    fio prefixes a filename with the directory set *before* it, so each job gets its directory first
    and then its filename, both moved down from the global sections (where they would come too early);
    a job whose filename is absolute (a destructive target's own device or file) gets no directory.
    With group_reporting each job section is its own reporting group (`new_group`), so parallel sections
    keep their own results while the numjobs clones of one section are merged. `prepare` renders the
    layout pass: the jobs that read, with `create_only`, which only writes the files the measured run
    reads (the files of a section that writes are left for the measured run to write).
    """
    lead = jf.leading_global()
    readers = {id(job) for job, opts in jf.job_sections() if job_reads(opts)}
    if grouped:
        lead.options.setdefault("group_reporting", None)
    for index, (job, opts) in enumerate(jf.job_sections()):
        own_dir = job.options.pop("directory", None)
        directory = own_dir if own_dir is not None else opts.get("directory")
        filename = job.options.pop("filename", opts.get("filename"))
        if dataset and "filename_format" not in opts and filename is None:
            # cases sharing a dataset share file names, whatever their job names: a read workload
            # finds the files a write workload of the same dataset left (n-th job <-> n-th job)
            job.options["filename_format"] = f"{dataset}.{index}.$jobnum.$filenum"
        head: dict[str, str | None] = {}
        if not any(p.startswith("/") for p in split_paths(filename or "")):
            parts = split_paths(directory) if directory else [""]
            # fio splits directory lists on ':'; a ':' inside the target's path is escaped
            head["directory"] = ":".join(posixpath.join(test_dir, p).rstrip("/").replace(":", "\\:") for p in parts)
        if filename is not None:
            head["filename"] = filename
        job.options = {**head, **job.options}
        if grouped:
            job.options.setdefault("new_group", None)
    for s in jf.globals():
        s.options.pop("directory", None)
        s.options.pop("filename", None)
    if prepare:
        # after the file names are set: a section's index in them is its place among all the job sections
        _keep_jobs(jf, readers)
        for s in jf.sections:
            for opt in TIMING_OPTIONS:
                s.drop(opt)
        lead.options["create_only"] = "1"
    return jf


def _keep_jobs(jf: JobFile, keep: set[int]) -> None:
    """Only the job sections in keep (by identity); a `wait_for` naming a job that went goes too."""
    jf.sections, dropped = ([s for s in jf.sections if s.is_global or id(s) in keep],
                            [s for s in jf.sections if not s.is_global and id(s) not in keep])
    gone = {s.name for s in dropped} - set(jf.job_names())
    for s in jf.sections:
        if s.options.get("wait_for") in gone:
            s.drop("wait_for")


def on_image(jf: JobFile, rbd: dict[str, str], *, grouped: bool) -> JobFile:
    """Every section on the rbd engine and the target's pool, image and client; file and folder options dropped.

    The target's values are set in every section, global or job, so no section can send the engine to
    another image, pool, client or cluster.
    """
    lead = jf.leading_global()
    for s in jf.sections:
        for opt in (*FILE_OPTIONS, *RBD_OPTIONS):
            s.drop(opt)
        s.set("ioengine", RBD_ENGINE)
        for key, value in rbd.items():
            s.set(key, value)
        if grouped and not s.is_global:
            s.options.setdefault("new_group", None)
    if grouped:
        lead.options.setdefault("group_reporting", None)
    return jf


def image_fill(jf: JobFile) -> JobFile:
    """What an rbd-image case's reads read, written first: each reading job's extent, in 4 MiB blocks.

    An image reads back zeros, at memory speed, where nothing was written. Only the extent options of
    each reading job are kept (its clones read the same extent unless offset_increment spreads them);
    jobs with the same extent are written once.
    """
    extents: dict[tuple, tuple[str, dict[str, str | None]]] = {}
    for job, opts in jf.job_sections():
        if job_reads(opts):
            extent = {k: opts[k] for k in EXTENT_OPTIONS if k in opts}
            if "offset_increment" in opts and "numjobs" in opts:
                extent["numjobs"] = opts["numjobs"]
            extents.setdefault(tuple(sorted(extent.items())), (job.name, extent))
    fill = JobFile()
    lead = fill.leading_global()
    lead.options.update({"rw": "write", "bs": "4m", "iodepth": "4"})
    if len(extents) == 1:  # one extent: one job, the extent with the rest in [global]
        name, extent = next(iter(extents.values()))
        lead.options.update(extent)
        fill.sections.append(Section(name))
    else:
        fill.sections += [Section(name, dict(extent)) for name, extent in extents.values()]
    return fill
