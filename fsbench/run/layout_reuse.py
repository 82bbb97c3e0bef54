"""A dataset's files laid out once per run: a later case that reads the same layout finds them unchanged
(proven by a listing) and skips its prepare step.

Where the tool can name one step that lays out what several lay out (fio: the step of a numjobs sweep's
most clones), the dataset's first case runs that step, for the cases of the dataset still to come: the
whole dataset is laid out once, while the run still waits on its start (fsbench's imports), instead of
a piece more before each case that reads a larger part of it."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from fsbench.api.tools import BuildContext, CoversLayouts, Invocation, LayoutKey, PrepareStep
from fsbench.api.transport import Transport
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.scenario.plan import Case

#: in raw/<case>/<host>/prepare/: the dataset's files after the prepare step, or as a case found them
LAYOUT = "layout.txt"
#: in raw/<case>/<host>/prepare/: why no prepare step ran (the files an earlier case laid out, unchanged)
REUSED = "reused"
#: in raw/<case>/<host>/prepare/: the later cases whose files this case's prepare step laid out too
COVERS = "covers"


def layout_key(tool: object, prep: Invocation | None) -> str:
    """What decides the files prep lays out ("" : the tool cannot tell, so its prepare step always runs)."""
    if prep is None or prep.controller or not isinstance(tool, LayoutKey):
        return ""
    return tool.layout_key(prep)


def listing(transport: Transport, test_dir: str, out: Path, cancel: threading.Event) -> str | None:
    """Every file under test_dir with its size, modification and change times and inode, sorted (None: unreadable).

    The change time moves with any write or metadata change, and no one can set it back."""
    out.parent.mkdir(parents=True, exist_ok=True)
    r = transport.run(["find", test_dir, "-type", "f", "-printf", "%P\t%s\t%T@\t%C@\t%i\n"], timeout=60,
                      stdout_path=out, cancel=cancel)
    if not r.ok or not out.exists():
        return None
    text = "".join(sorted(out.read_text().splitlines(keepends=True)))
    out.write_text(text)
    return text


class Layouts:
    """The layouts a target's prepare steps left this run: (dataset, layout key) -> (listing, the case)."""

    def __init__(self, known: dict[tuple[str, str], tuple[str, str]], cancel: threading.Event):
        self.known, self.cancel = known, cancel

    def remember(self, dataset: str, keys: list[str], case_id: str, transport: Transport, test_dir: str,
                 raw: Path) -> None:
        """What this case's prepare step left in the dataset folder, for the next case that lays out the same
        (keys: what decides the files of each layout the step made)."""
        found = listing(transport, test_dir, raw / LAYOUT, self.cancel)
        if found:
            self.known.update({(dataset, key): (found, case_id) for key in keys})

    def unchanged(self, dataset: str, key: str, transport: Transport, test_dir: str, raw: Path) -> bool:
        """Whether an earlier prepare step of this run laid out these very files and they are unchanged since
        (names, sizes, modification and change times and inodes as that step left them): then this case reads
        them without starting the tool to check them again. The listing it was proven by is kept in raw/."""
        known = self.known.get((dataset, key))
        if known is None:
            return False
        if listing(transport, test_dir, raw / LAYOUT, self.cancel) != known[0]:
            self.known.pop((dataset, key), None)
            return False
        (raw / REUSED).write_text(f"the files laid out by {known[1]} in this run, unchanged since "
                                  f"({len(known[0].splitlines())} file(s): {LAYOUT} lists them): not laid out again\n")
        return True


@dataclass
class Layout:
    """A case's prepare step (None: none runs) and what remembers that it ran, for the target's later cases."""

    prep: Invocation | None
    shared: str  # the step's identity where it leaves no folder (an RBD image), else ""
    session: TargetSession
    layouts: Layouts
    key: str = ""  # what decides the files it lays out (dataset reuse), else ""
    covers: tuple[str, ...] = ()  # the keys of later cases' layouts the step makes too (CoversLayouts)

    transport: Transport | None = None  # the one host whose files are listed (dataset reuse)
    raw: Path | None = None  # where that host's listing goes (raw/<case>/<host>/prepare/)

    def done(self, case: Case, test_dir: str) -> None:
        """The step ran: later cases of the target that would lay out the same need not."""
        if self.shared:
            self.session.prepared.add(self.shared)
        if self.key and self.transport is not None and self.raw is not None:
            self.layouts.remember(case.dataset, [self.key, *self.covers], case.case_id, self.transport, test_dir,
                                  self.raw)


def case_layout(tool: object, case: Case, session: TargetSession, ctx: BuildContext, test_dir: str, folder: bool,
                first: Transport, raw: Path, cancel: threading.Event, coming: tuple[Case, ...] = ()) -> Layout:
    """The case's prepare step, unless an earlier case of this target left what it would lay out
    (first: the case's first host, where a dataset's files are listed; raw: its prepare folder in raw/;
    coming: the run's cases, for the dataset's first layout to hold what its later cases read too)."""
    prep = tool.prepare(case, test_dir, ctx) if case.prepare and isinstance(tool, PrepareStep) else None
    # without a folder (an RBD image) a prepare step another case of this target ran leaves its data
    # for this one too: written once per target, as cases of one dataset share its files
    shared = "" if prep is None or folder else repr((sorted(prep.files.items()), prep.env))
    if shared in session.prepared:
        prep = None
    layout = Layout(prep, shared, session, Layouts(session.layouts, cancel), transport=first, raw=raw)
    dataset = bool(case.dataset) and folder
    layout.key = layout_key(tool, prep) if dataset and not case.fresh and len(case.hosts) == 1 else ""
    if layout.key and layout.layouts.unchanged(case.dataset, layout.key, first, test_dir, raw):
        layout.prep = None  # the files an earlier case of this run laid out, proven unchanged
    elif layout.key and case.dataset not in session.covered:
        session.covered.add(case.dataset)
        _cover(tool, case, layout, coming, ctx, test_dir, raw)
    return layout


@dataclass(frozen=True)
class Cover:
    """One prepare step for a dataset's later cases too: the step, the layouts it makes (their keys), the first
    later case of each, and the case whose step it is."""

    prep: Invocation
    keys: tuple[str, ...]
    cases: tuple[Case, ...]
    made: str

    def note(self, dataset: str) -> str:
        """What raw/<case>/<host>/prepare/covers and `plan --show` say of it."""
        return (f"this prepare step lays out the files of {len(self.cases)} later case layout(s) of dataset {dataset} "
                f"too (the step of {self.made}, which holds them all), so that they are laid out once:\n"
                + "".join(f"{c.case_id}\n" for c in self.cases))


def dataset_cover(tool: object, case: Case, prep: Invocation | None, key: str, coming: tuple[Case, ...],
                  ctx: BuildContext, test_dir: str) -> Cover | None:
    """The step that lays out, with the case's own files (prep, its layout key), those of the dataset's later
    cases in `coming` (same target, tool and hosts, reading laid-out files), where the tool names one."""
    if prep is None or not key or not isinstance(tool, CoversLayouts) or not isinstance(tool, PrepareStep):
        return None
    later: dict[str, tuple[Case, Invocation]] = {}
    seen: set[tuple[str, str]] = {(case.workload, repr(sorted(case.params.items())))}
    for c in coming:
        point = (c.workload, repr(sorted(c.params.items())))  # its repetitions lay out the same: rendered once
        if (c.index > case.index and c.target == case.target and c.dataset == case.dataset and c.tool == case.tool
                and c.hosts == case.hosts and c.prepare and not c.fresh and point not in seen):
            seen.add(point)
            step = tool.prepare(c, test_dir, ctx)
            other = layout_key(tool, step)
            if step is not None and other and other != key:
                later.setdefault(other, (c, step))
    cover = tool.cover_layout([prep, *(p for _c, p in later.values())]) if later else None
    if cover is None:
        return None
    made = next((c.case_id for c, p in later.values() if p is cover), case.case_id)
    return Cover(cover, tuple(later), tuple(c for c, _p in later.values()), made)


def _cover(tool: object, case: Case, layout: Layout, coming: tuple[Case, ...], ctx: BuildContext, test_dir: str,
           raw: Path) -> None:
    """The dataset's first prepare step this session made the one that lays out the files of its later cases
    too, where the tool names such a step; raw/<case>/<host>/prepare/covers says so."""
    cover = dataset_cover(tool, case, layout.prep, layout.key, coming, ctx, test_dir)
    if cover is None:
        return
    layout.prep, layout.covers = cover.prep, cover.keys
    raw.mkdir(parents=True, exist_ok=True)
    (raw / COVERS).write_text(cover.note(case.dataset))
