"""vdbench's format pass: laying a run definition's files out before the measured run, untimed.

vdbench formats (creates the directories and writes every file in full) at the start of a run
definition that says format=yes, restart or once, inside the run fsbench times and monitors. When
that is the first run definition, fsbench's prepare step runs the same fsd, fwd and hd definitions
with that run definition alone and format=only, drops the caches, then runs the parameter file with
format=no there: vdbench checks the structure it finds against its control file and uses it.
Keys are looked up as vdbench reads them (`FORMAT`, `form` and `format` are one parameter).

With the workload option `format_pass: measured` the format stays inside the measured run, as vdbench
orders it: its file creations (format_for_rd1's FILE_CREATES, seed 003's 498 files/s) are then a
result, and the run definition reads what the format just wrote, as the guide's test did.
"""

from __future__ import annotations

from fsbench.tools.vdbench import parmfile

#: format= values that lay the files out before the run definition uses them
LAYOUT = {"yes", "restart", "once"}
#: format= values whose format is the point of the run (or no layout at all)
NOT_LAYOUT = {"no", "only", "clean", "dir", "directories", "limited", "complete"}
#: run-definition loops that change the file structure: each loop formats its own, inside the run
STRUCTURE_LOOPS = {"fordepth", "forwidth", "forfiles", "forsizes", "fortotalsize", "forwss", "depth", "width",
                   "files", "sizes", "totalsize", "wss"}


def layout_rd(options: dict, jobs: dict) -> str | None:
    """The run definition whose format pass can run apart, before the measured run, else None.

    That is the first run definition, when it formats (yes, restart, once) the files its file-system
    workloads then use. Not when the format is the point (only, clean, dir, limited), when its loops
    change the file structure (each loop formats its own), or with data validation or journaling (the
    read checks what this very run wrote, which a separate vdbench run would not know).
    """
    if options.get("format_pass") == "measured":
        return None
    rds = [n for n in jobs if parmfile.kind_of(n) == "rd"]
    if not rds or parmfile.lookup("rd", jobs[rds[0]], "fwd") is None:
        return None
    spec = jobs[rds[0]]
    words = parmfile.words(parmfile.lookup("rd", spec, "format", "no"))
    if not words & LAYOUT or words & NOT_LAYOUT or STRUCTURE_LOOPS & {parmfile.keyword("rd", k) for k in spec}:
        return None
    journaled = parmfile.lookup("general", options, "journal") not in (None, False, "no") or any(
        parmfile.lookup(parmfile.kind_of(n) or "", s, "journal") is not None for n, s in jobs.items())
    if journaled or not parmfile.words(parmfile.lookup("general", options, "validate", "no")) <= {"no"}:
        return None
    return rds[0]


def prepare_parts(options: dict, jobs: dict, rd: str) -> tuple[dict, dict]:
    """Options and definitions of the format pass: the same fsd/fwd/hd, only `rd` formatting, no commands."""
    words = parmfile.words(parmfile.lookup("rd", jobs[rd], "format"))
    fmt: object = ["restart", "only"] if "restart" in words else "only"
    keep = {k: v for k, v in jobs[rd].items() if parmfile.keyword("rd", k) in ("fwd", "interval")}
    defs = {n: s for n, s in jobs.items() if parmfile.kind_of(n) != "rd"}
    defs[rd] = {**keep, "fwdrate": "max", "format": fmt}
    general = {k: v for k, v in options.items() if not parmfile.runs_command("general", k, v) and k != "format_pass"}
    return general, {n: {k: v for k, v in s.items() if not parmfile.runs_command(parmfile.kind_of(n) or "", k, v)}
                     for n, s in defs.items()}


def measured_jobs(jobs: dict, rd: str) -> dict:
    """The definitions of the measured run after a format pass: `rd` uses the files as they are (format=no)."""
    def measured(spec: dict) -> dict:
        return dict(("format", "no") if parmfile.keyword("rd", k) == "format" else (k, v) for k, v in spec.items())
    return {n: (measured(s) if n == rd else s) for n, s in jobs.items()}
