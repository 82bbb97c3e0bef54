"""Each mdtest phase's own metadata-engine requests, from the target client's count read before every phase.

mdtest 4.0 and later run a command of our choice before each phase (`--run-cmd-before-phase`, outside the
phase's timing; every rank runs it, then a barrier). fsbench gives it a small script: on rank 0 only, it
appends a marker line and the lines of the client's own request counters (JuiceFS' `.stats`, its
`juicefs_meta_ops_total_<method>` lines: the target kind's CountsMetaRequests) to `engine-phases.txt`.

Two snapshots in a row bound one phase: the difference of their sums is what the client asked its engine
while that phase ran. mdtest's phases come in a fixed order (directory create, stat, read, rename, remove;
then file create, stat, read, remove: the ones its flags select), once per iteration, so the k-th snapshot of
an iteration opens its k-th phase. Its last phase has no snapshot after it (the next is the next iteration's
first, after mdtest's tree removal and creation), so it gets no row: the whole-run counts judge it.

The count is the client's of one host: a case on several hosts is not probed (rank 0 counts only its own
client). Pure functions: the script's text, the phase order from mdtest's command line, rows from the file.
"""

from __future__ import annotations

import re
import shlex

from fsbench.core.tidy import measurement

#: the script mdtest runs before each phase (in the case's work folder) and the file it appends to
SCRIPT = "fsbench-phase-probe.sh"
SNAPSHOTS = "engine-phases.txt"
#: the metric of each probed phase and its unit: the client's engine requests per item the phase handled
ENGINE_REQUESTS = "engine_requests_per_item"
ENGINE_UNIT = "request/item"
MARK = "@phase"

_DIRECTORY = ("directory_creation", "directory_stat", "directory_read", "directory_rename", "directory_removal")
_FILE = ("file_creation", "file_stat", "file_read", "file_removal")
#: mdtest's phase selectors (-C -T -E -r) -> the phases they select in each test
_SELECT = {"C": "creation", "T": "stat", "E": "read", "r": "removal"}
_VERSION = re.compile(r"mdtest-(\d+)\.")


def supported(version: str) -> bool:
    """Whether an mdtest (its version fact: `mdtest-4.0.0 (Open MPI 4.1.4)`) runs a command before each
    phase: 4.0 and later, and IOR's main branch (`mdtest-4.1.0+dev`)."""
    m = _VERSION.search(version or "")
    return m is not None and int(m.group(1)) >= 4


def script(test_dir: str, counters: tuple[str, str]) -> str:
    """The script's text: rank 0 finds the counters file at the root of the mount holding test_dir (the
    nearest folder above it that has one) and appends a marker and its lines that start with the prefix."""
    name, prefix = counters
    return (
        "#!/bin/sh\n"
        "# fsbench: before each mdtest phase (--run-cmd-before-phase), rank 0 appends its client's count of\n"
        "# metadata-engine requests; the other ranks do nothing\n"
        '[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] || exit 0\n'
        f"d={shlex.quote(test_dir)}\n"
        f'while [ "$d" != / ] && [ ! -e "$d"/{shlex.quote(name)} ]; do d=$(dirname "$d"); done\n'
        f'{{ echo "{MARK} $(date +%s.%N)"; grep -e {shlex.quote("^" + prefix)} "$d"/{shlex.quote(name)}; }}'
        f" >> {SNAPSHOTS}\n"
    )


def argv_flag() -> str:
    """The flag that makes mdtest run the script (the `=` form: its value may hold spaces)."""
    return f"--run-cmd-before-phase=sh {SCRIPT}"


def sequence(flags: dict[str, str], items: int | None = None) -> list[str]:
    """The phases one iteration runs before each of which the script is called, in mdtest's order.

    flags: mdtest's single-letter flags as read from its command line. -D: directories only, -F: files only
    (neither: both), -S (one shared file): no directory test; -C -T -E -r select phases (none: all, and the
    directory rename, which mdtest 4 runs only then, and only for more than one item per task: `items`).
    """
    chosen = {w for letter, w in _SELECT.items() if letter in flags}
    every = not chosen
    if every:
        chosen = set(_SELECT.values()) | {"rename"}
    out: list[str] = []
    dirs, files = "D" in flags, "F" in flags
    if (dirs or not files) and "S" not in flags:
        out += [p for p in _DIRECTORY if p.split("_", 1)[1] in chosen
                and (p != "directory_rename" or items is None or items > 1)]
    if files or not dirs:
        out += [p for p in _FILE if p.split("_", 1)[1] in chosen]
    return out


def snapshots(text: str) -> list[int | None]:
    """The sum of the counter lines after each marker, in the file's order; None for a snapshot with no
    counter line (the file could not be read then): a phase it bounds is not counted, never counted as 0."""
    out: list[int | None] = []
    for line in text.splitlines():
        if line.startswith(MARK):
            out.append(None)
            continue
        parts = line.split()
        if out and len(parts) == 2:
            try:
                out[-1] = (out[-1] or 0) + int(float(parts[1]))
            except ValueError:
                continue
    return out


def phase_rows(text: str, phases: list[str], iterations: int, items: dict[str, int],
               tasks: int | None = None) -> tuple[list[dict], list[str]]:
    """Rows `engine_requests_per_item` of each probed phase (every one but each iteration's last), summed over
    the iterations, and warnings when the snapshots do not match the phases mdtest should have run."""
    taken = snapshots(text)
    if not phases:
        return [], []
    expected = len(phases) * max(1, iterations)
    if len(taken) != expected:
        return [], [f"{SNAPSHOTS}: {len(taken)} snapshots of the client's engine requests where the phases "
                    f"({', '.join(phases)}) x {iterations} iterations make {expected}: not used"]
    asked: dict[str, int] = {}
    unread: set[str] = set()  # a phase some snapshot around it could not read: not counted at all
    for it in range(max(1, iterations)):
        first = it * len(phases)
        for k, phase in enumerate(phases[:-1]):
            before, after = taken[first + k], taken[first + k + 1]
            if before is None or after is None:
                unread.add(phase)
                continue
            asked[phase] = asked.get(phase, 0) + after - before
    rows = []
    for phase, n in asked.items():
        if phase in unread:
            continue
        done = items.get(phase, 0) * max(1, iterations)
        if done > 0 and n >= 0:
            rows.append(measurement("mdtest", phase, ENGINE_REQUESTS, n / done, unit=ENGINE_UNIT,
                                    engine_requests=n, engine_items=done, tasks=tasks, iterations=iterations))
    return rows, []
