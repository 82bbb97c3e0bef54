"""A tool's optional hooks, each a small Protocol the core asks with isinstance, and the registry checks
the signature of on every plug-in that has it: methods (reads, prepare, combine_hosts...) and declarations
(views, columns, measures...). A collector kind whose rows a report shows declares some of them too."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fsbench.api.case import Case
from fsbench.api.tool_context import BuildContext, Invocation
from fsbench.api.transport import Transport
from fsbench.core.tidy import ParseResult

# --- optional hooks: methods -------------------------------------------------------------------------


@runtime_checkable
class LongestSeconds(Protocol):
    """The longest a case may run as the tool allows it (fio at its rate_min), for the case timeout."""

    def longest_seconds(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                        job_file: str | None = None) -> float: ...


@runtime_checkable
class Reads(Protocol):
    """Whether a case reads files it needs laid out first (a prepare step then runs)."""

    def reads(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
              job_file: str | None = None) -> bool: ...


@runtime_checkable
class Writes(Protocol):
    """Whether a case makes its files from scratch (a dataset's folder is emptied before it)."""

    def writes(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
               job_file: str | None = None) -> bool: ...


@runtime_checkable
class LayoutBytes(Protocol):
    """Bytes a prepare step lays out, for preflight's space check."""

    def layout_bytes(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                     job_file: str | None = None) -> float: ...


@runtime_checkable
class PrepareBytes(Protocol):
    """Bytes the prepare step writes (only the files of what reads), for plans."""

    def prepare_bytes(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                      job_file: str | None = None) -> float: ...


@runtime_checkable
class DeclaresWorkingSet(Protocol):
    """A tool that can say how many distinct bytes its buffered reads of a case cover (fio: size x numjobs)."""

    def read_working_set(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                         job_file: str | None = None) -> float: ...


@runtime_checkable
class PrepareStep(Protocol):
    """An untimed layout pass before a case that reads (None: nothing to lay out)."""

    def prepare(self, case: Case, test_dir: str, ctx: BuildContext | None = None) -> Invocation | None: ...


@runtime_checkable
class LayoutKey(Protocol):
    """What decides the files a prepare step lays out: two steps with one key write them once."""

    def layout_key(self, prep: Invocation) -> str: ...


@runtime_checkable
class CoversLayouts(Protocol):
    """One prepare step that lays out the files of several (fio: the step of the most clones of each job, when
    the steps differ only in numjobs), or None: a dataset's first case then lays out what its later ones read."""

    def cover_layout(self, preps: list[Invocation]) -> Invocation | None: ...


@runtime_checkable
class CombinesHosts(Protocol):
    """The rows of a per-host case (Invocation.per_host) from each host's parse: per host and an aggregate."""

    def combine_hosts(self, parts: dict[str, ParseResult]) -> ParseResult: ...


@runtime_checkable
class Provides(Protocol):
    """The tool's own way onto a host (a build, the user's zip); returns what it did."""

    def provide(self, t: Transport, controller: Transport, binary: str, settings: Any) -> str: ...


@runtime_checkable
class IncludesFiles(Protocol):
    """The files a job file includes besides itself (fio's `include`), {path: text}: a resume refuses their edits."""

    def included_files(self, job_file_text: str, job_file: str) -> dict[Path, str]: ...


@runtime_checkable
class PlacesOnHosts(Protocol):
    """Which host runs which part of a case the tool spreads itself (mdtest's MPI ranks): ({host: what runs
    there}, warnings) over hosts [(name, MPI slots)]; own_trees says why each host has a tree of its own."""

    def placement(self, options: dict[str, Any], hosts: list[tuple[str, int]],
                  own_trees: str = "") -> tuple[dict[str, str], list[str]]: ...


# --- optional hooks: declarations ----------------------------------------------------------------------


@runtime_checkable
class DeclaresPrimaryMetrics(Protocol):
    """What a report shows first (every tool; a collector kind whose rows a report shows too)."""

    @property
    def primary_metrics(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresOperations(Protocol):
    """Operations in their natural order, for tables (every tool; a collector kind too)."""

    @property
    def operations(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresMetrics(Protocol):
    """Metric -> unit added to the tidy table's vocabulary (every tool)."""

    @property
    def metrics(self) -> dict[str, str]: ...


@runtime_checkable
class DeclaresPrepares(Protocol):
    """Where a case that reads gets its data written first: addresses or kinds (fio: a folder, an RBD image)."""

    @property
    def prepares(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresMeasures(Protocol):
    """The vocabulary's metrics its rows carry (a report view may name only those and its `metrics`)."""

    @property
    def measures(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresViews(Protocol):
    """The report's views of its workloads without `report.views`."""

    @property
    def views(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresColumns(Protocol):
    """The tool's own table: (heading, metrics) pairs (juicefs bench's ITEM | VALUE | COST)."""

    @property
    def columns(self) -> tuple[tuple[str, tuple[str, ...]], ...]: ...


@runtime_checkable
class DeclaresOrder(Protocol):
    """The column its tables order rows by instead of the operations' natural order."""

    @property
    def order_by(self) -> str: ...


@runtime_checkable
class DeclaresHigherIsBetter(Protocol):
    """Its own metrics where a bigger value is better."""

    @property
    def higher_is_better(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresPlaceholderOptions(Protocol):
    """Options whose ${...} placeholders the tool fills itself (objbench's access_key: ${secrets.NAME})."""

    @property
    def placeholder_options(self) -> tuple[str, ...]: ...


@runtime_checkable
class DeclaresDeploySection(Protocol):
    """The schema of its own section under `deploy:` (fsbench.config.schema.Struct)."""

    @property
    def deploy_section(self) -> Any: ...


@runtime_checkable
class DeclaresValidityChecks(Protocol):
    """What fsbench checks of its numbers (fsbench.validity.checks.Check objects)."""

    @property
    def validity_checks(self) -> tuple[Any, ...]: ...


#: every optional hook of a tool; the registry checks the signature of each one a plug-in has
TOOL_HOOKS: tuple[type, ...] = (
    LongestSeconds, Reads, Writes, LayoutBytes, PrepareBytes, DeclaresWorkingSet, PrepareStep, LayoutKey,
    CoversLayouts, CombinesHosts, Provides, IncludesFiles, PlacesOnHosts, DeclaresPrepares, DeclaresMeasures,
    DeclaresViews, DeclaresColumns, DeclaresOrder, DeclaresHigherIsBetter, DeclaresPlaceholderOptions,
    DeclaresDeploySection, DeclaresValidityChecks)
