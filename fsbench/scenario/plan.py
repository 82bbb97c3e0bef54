"""Expand a scenario into cases: target x workload x sweep point x repetition, with stable ids."""

from __future__ import annotations

import dataclasses
import hashlib
import re

from fsbench.api.case import Case
from fsbench.api.tools import (
    LayoutBytes,
    LongestSeconds,
    PrepareBytes,
    Reads,
    ToolAdapter,
    Writes,
    declarations,
)
from fsbench.kinds import KINDS
from fsbench.scenario.model import Scenario, Workload
from fsbench.tools import TOOLS

_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def case_id_for(target: str, workload: str, params: dict, repetition: int) -> str:
    """A readable id, stable across runs of the same scenario, safe as a folder name."""
    parts = [target, workload] + [f"{k}={v}" for k, v in params.items()] + [f"r{repetition}"]
    cid = _UNSAFE.sub("_", "__".join(str(p) for p in parts))
    if len(cid) > 120:  # keep paths short; the hash keeps it unique
        digest = hashlib.sha1(cid.encode()).hexdigest()[:10]
        cid = cid[:100] + "__" + digest
    return cid


#: a rough write rate for layout (prepare) steps in a plan: a plan needs a number, not a promise
LAYOUT_BW = 400 * 2**20
PREPARE_START_S = 0.2


@dataclasses.dataclass(frozen=True)
class _Point:
    """One sweep point of a workload on a target, before its repetitions."""

    w: Workload
    point: dict
    options: dict
    estimate: float
    beyond: float  # what the tool lets a case run beyond the estimate (fio at its rate_min)
    reads: bool  # a prepare step lays out what it reads
    dataset: str
    drop: bool
    drop_client: bool
    layout: float  # its prepare step's seconds (all hosts)
    fresh: bool


def plan_cases(sc: Scenario) -> list[Case]:
    """Every case in run order: by target (so each is set up once), then workload, sweep, repetition;
    with `settings.order: rounds`, by workload, sweep and repetition, then target (see in_rounds).

    A case's estimate includes its prepare step only where that step writes: for the first case of
    each dataset on a target (later ones find the files laid out), and for every case that starts
    from an empty dataset folder (`fresh`: it writes the dataset's files, and reads some too). The
    dataset's first reading case counts its largest layout: the runner lays out there what the later
    cases read (a numjobs sweep's most clones), and fio adds what a larger case needs to what it finds
    (after a workload that writes the dataset: beyond the files that reading case reads itself).
    """
    cases: list[Case] = []
    for target in sc.targets.values():
        hosts = sc.resolve_hosts(target.hosts)
        points = _points(sc, target.name, target.kind, len(hosts))
        largest: dict[str, float] = {}
        for p in points:
            if p.reads and not p.fresh:
                largest[p.dataset] = max(largest.get(p.dataset, 0.0), p.layout)
        laid_out: set[tuple[str, int]] = set()  # (dataset, round): a fresh round's target holds no files yet
        read_out: set[tuple[str, int]] = set()  # ... where a reading case laid out (the whole dataset)
        for p in points:
            w = p.w
            reps = (w.repetitions or sc.settings.repetitions).max  # the adaptive ones run while needed
            for rep in range(1, reps + 1):
                made = (p.dataset, rep if _fresh_rounds(sc) else 0)
                first = p.reads and (p.fresh or made not in laid_out)
                covering = p.reads and not p.fresh and made not in read_out
                if p.reads or w.dataset:  # a writing workload of a dataset leaves its files for the reads
                    laid_out.add(made)
                if p.reads and not p.fresh:
                    read_out.add(made)
                # after a writer of the dataset, what the first reading case adds beyond its own files
                layout = largest[p.dataset] - (0.0 if first else p.layout) if covering else p.layout if first else 0.0
                # a prepare step that finds its files laid out still starts the tool once (~0.2 s)
                total = p.estimate + layout + (PREPARE_START_S if p.reads else 0.0)
                timeout = w.timeout_s or sc.settings.case_timeout_s or max(120.0, total * 3 + 60,
                                                                           total + p.beyond + 60)
                cases.append(Case(
                    case_id_for(target.name, w.name, p.point, rep), len(cases) + 1, target.name, w.name,
                    w.tool, rep, dict(p.point), p.options, dict(w.jobs), w.job_file_text, tuple(hosts),
                    round(total, 1), timeout, w.job_file, p.dataset, p.reads, p.drop, p.fresh, p.drop_client,
                    w.drop_caches_level,
                ))
    return in_rounds(cases, sc) if sc.settings.order == "rounds" else cases


def _points(sc: Scenario, target: str, kind: str, hosts: int) -> list[_Point]:
    """The sweep points of every workload on the target, in the scenario's order."""
    out: list[_Point] = []
    for w in sc.workloads.values():
        if w.targets and target not in w.targets:
            continue
        tool = TOOLS.get(w.tool)
        for point in w.sweep.points():
            options = {**w.options, **point}
            estimate = _estimate(tool, options, w)
            reading = _reads(tool, options, w)
            # files are laid out in folders, and by tools that fill other kinds themselves (fio: an RBD
            # image); a device holds whatever it holds
            fills = declarations(tool).prepares
            reads = w.prepare == "auto" and reading and (KINDS.get(kind).address in fills or kind in fills)
            dataset = w.dataset or (w.name if reads else "")
            drop = w.drop_caches if w.drop_caches is not None else reading and w.prepare == "auto"
            # a folder's dataset only: a device or an image holds whatever it holds
            fresh = (bool(dataset) and not w.overwrite and KINDS.get(kind).address == "directory"
                     and _writes(tool, options, w))
            out.append(_Point(
                w, point, options, estimate, max(0.0, _longest(tool, options, w) - estimate), reads, dataset, drop,
                w.drop_client_cache if w.drop_client_cache is not None else drop,
                _layout_seconds(tool, options, w) * max(1, hosts) if reads else 0.0, fresh))
    return out


def in_rounds(cases: list[Case], sc: Scenario) -> list[Case]:
    """The cases by workload, sweep point and repetition, then target: round r of every target of a workload
    runs before round r+1, so drift between minutes (load, heat, a neighbour) falls on every target alike.
    Each target's own cases keep their order (its datasets and prepare steps stay as planned). With
    `settings.fresh`, the repetition comes first: a round is every workload on targets set up for it.

    Within a round the targets run in an order of that round's own (settings.shuffle), drawn from the
    scenario's name, workload, point and round: the same on every run, in `plan` and on resume. In the
    declared order the first target of every round is always the first after another workload's cases and
    each target always follows the same neighbour; whatever that does to it (two runs of meta-engines: the
    first engine's big-file writes 10-26 % below the others in every round of one run, not of the other)
    was paired away round by round and stated as a difference of the targets."""
    workloads = list(sc.workloads)
    targets = list(sc.targets)
    points: dict[tuple[str, str], int] = {}
    for c in cases:  # a sweep point's rank within its workload, in the order the sweep gives
        points.setdefault((c.workload, repr(sorted(c.params.items()))), len(points))

    def block(c: Case) -> tuple:
        point = workloads.index(c.workload), points[(c.workload, repr(sorted(c.params.items())))]
        # fresh rounds: round r of every workload, then r+1..., as each round's targets are set up anew
        return (c.repetition, *point) if _fresh_rounds(sc) else (*point, c.repetition)

    def place(c: Case) -> int:
        if sc.settings.shuffle:
            return _draw(f"{sc.name}/{block(c)}/{c.target}")
        return targets.index(c.target)

    ordered = sorted(cases, key=lambda c: (block(c), place(c), targets.index(c.target)))
    return [dataclasses.replace(c, index=i) for i, c in enumerate(ordered, 1)]


def order_text(sc: Scenario) -> str:
    """'; in rounds: ...': how the plan orders its cases, where it is not target by target."""
    if sc.settings.order != "rounds":
        return ""
    shuffled = ", each round's targets in an order of its own" if sc.settings.shuffle else ""
    if _fresh_rounds(sc):
        servers = ", its services started anew too" if sc.settings.fresh == "services" else ""
        return (f"; in fresh rounds: repetition 1 of every workload on every target, then 2..., each target set up "
                f"before its cases of a round and torn down after them{servers}{shuffled}")
    return f"; in rounds: repetition 1 of every target of a workload, then 2..., the targets set up at once{shuffled}"


def _fresh_rounds(sc: Scenario) -> bool:
    return sc.settings.order == "rounds" and sc.settings.fresh != "none"


def _draw(text: str) -> int:
    """A number drawn from text: the same for the same text on every machine and Python (no hash seed)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _estimate(tool: ToolAdapter, options: dict, w: Workload) -> float:
    return tool.estimate_seconds(options, w.job_file_text, w.jobs, w.job_file)


def _longest(tool: ToolAdapter, options: dict, w: Workload) -> float:
    if isinstance(tool, LongestSeconds):
        return tool.longest_seconds(options, w.job_file_text, w.jobs, w.job_file)
    return 0.0


def _reads(tool: ToolAdapter, options: dict, w: Workload) -> bool:
    return isinstance(tool, Reads) and bool(tool.reads(options, w.job_file_text, w.jobs, w.job_file))


def _writes(tool: ToolAdapter, options: dict, w: Workload) -> bool:
    return isinstance(tool, Writes) and bool(tool.writes(options, w.job_file_text, w.jobs, w.job_file))


def _layout_seconds(tool: ToolAdapter, options: dict, w: Workload) -> float:
    """The prepare step's bytes (only what reads) where the tool says, else all it lays out, at LAYOUT_BW."""
    args = (options, w.job_file_text, w.jobs, w.job_file)
    if isinstance(tool, PrepareBytes):
        return tool.prepare_bytes(*args) / LAYOUT_BW
    return tool.layout_bytes(*args) / LAYOUT_BW if isinstance(tool, LayoutBytes) else 0.0
