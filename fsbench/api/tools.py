"""The tool plug-in contract: what a tool declares, what it is given, and its optional hooks.

A tool is any object that satisfies `ToolAdapter` (fsbench's own annotate `PLUGIN: ToolAdapter`, so mypy
checks them). Each optional hook is a small Protocol of its own (fsbench.api.tool_hooks); the core asks
`isinstance(tool, Reads)`, never a name string, and the registry refuses a plug-in whose hook has another
signature than its Protocol. What a tool is given lives in fsbench.api.tool_context; this module names it all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fsbench.api.case import Case
from fsbench.api.tool_context import BuildContext, CheckContext, CheckTarget, HostInfo, Invocation, OptionIssue
from fsbench.api.tool_hooks import (
    TOOL_HOOKS,
    CombinesHosts,
    CoversLayouts,
    DeclaresColumns,
    DeclaresDeploySection,
    DeclaresHigherIsBetter,
    DeclaresMeasures,
    DeclaresMetrics,
    DeclaresOperations,
    DeclaresOrder,
    DeclaresPlaceholderOptions,
    DeclaresPrepares,
    DeclaresPrimaryMetrics,
    DeclaresValidityChecks,
    DeclaresViews,
    DeclaresWorkingSet,
    IncludesFiles,
    LayoutBytes,
    LayoutKey,
    LongestSeconds,
    PlacesOnHosts,
    PrepareBytes,
    PrepareStep,
    Provides,
    Reads,
    Writes,
)
from fsbench.core.tidy import ParseResult, higher_is_better

__all__ = [
    "TOOL_HOOKS", "BuildContext", "CheckContext", "CheckTarget", "CombinesHosts", "CoversLayouts", "DeclaresColumns",
    "DeclaresDeploySection", "DeclaresHigherIsBetter", "DeclaresMeasures", "DeclaresMetrics", "DeclaresOperations",
    "DeclaresOrder", "DeclaresPlaceholderOptions", "DeclaresPrepares", "DeclaresPrimaryMetrics",
    "DeclaresValidityChecks", "DeclaresViews", "DeclaresWorkingSet", "Declarations", "HostInfo", "IncludesFiles",
    "Invocation", "LayoutBytes", "LayoutKey", "LongestSeconds", "OptionIssue", "PlacesOnHosts", "PrepareBytes",
    "PrepareStep", "Provides", "Reads", "ToolAdapter", "Writes", "better_big", "declarations",
]


@runtime_checkable
class ToolAdapter(Protocol):
    """A benchmark tool as a plug-in: one package under fsbench/tools/ exposing PLUGIN (or an entry point).

    Declarations read by the loader, preflight, deploy, ingest and the report; optional hooks are the
    Protocols below (TOOL_HOOKS).
    """

    @property
    def name(self) -> str:
        """The tool's name in scenarios (`tool: fio`)."""
        ...

    @property
    def bring_your_own(self) -> bool:
        """A tool users bring themselves (vdbench): where it is missing its cases are skipped with the reason."""
        ...

    @property
    def accepts(self) -> tuple[str, ...]:
        """Target addresses it works on (directory, device, url) and kinds it reaches itself."""
        ...

    @property
    def metrics(self) -> dict[str, str]:
        """Metric -> unit it adds to the tidy table's vocabulary."""
        ...

    @property
    def operations(self) -> tuple[str, ...]:
        """Its operations in their natural order, for tables."""
        ...

    @property
    def primary_metrics(self) -> tuple[str, ...]:
        """What a report shows first, in order of preference."""
        ...

    @property
    def packages(self) -> dict[str, list[str]]:
        """Package manager -> the names that install it."""
        ...

    def check_options(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                      ctx: CheckContext) -> list[OptionIssue]:
        """Validate a workload's options before anything runs."""
        ...

    def estimate_seconds(self, options: dict[str, Any], job_file_text: str | None, jobs: dict[str, Any],
                         job_file: str | None = None) -> float:
        """A rough duration of one case, for plans and ETAs."""
        ...

    def build(self, case: Case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """Build the command and input files of one case, writing its data under test_dir."""
        ...

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        """Parse what a case left in its raw directory (raises ParseError)."""
        ...

    def parse_file(self, path: Path) -> ParseResult:
        """Parse one existing output file or directory (for `fsbench ingest`)."""
        ...

    def version_argv(self, options: dict[str, Any] | None = None) -> list[str]:
        """The command that prints the tool's version (or finds it), for a workload's options."""
        ...


@dataclass(frozen=True)
class Declarations:
    """A plug-in's declarations (a tool's, a collector kind's, or none: None) with their defaults filled in."""

    primary_metrics: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    metrics: dict[str, str] = field(default_factory=dict)
    bring_your_own: bool = False
    prepares: tuple[str, ...] = ("directory",)
    measures: tuple[str, ...] | None = None
    views: tuple[str, ...] = ("table",)
    columns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    order_by: str = ""
    higher_is_better: tuple[str, ...] = ()
    placeholder_options: tuple[str, ...] = ()
    deploy_section: Any = None
    validity_checks: tuple[Any, ...] = ()


#: declarations by plug-in identity (the plug-in kept with them, so its id is not reused): a plug-in declares
#: once, and a report asks for every cell, where 13 runtime Protocol checks each time cost seconds
_DECLARED: dict[int, tuple[object, Declarations]] = {}


def declarations(tool: object) -> Declarations:
    """What a tool (or any plug-in, or None) declares, defaults for the rest: for code that reads the rows of
    tools and collectors alike (the report), where a tool's required members are one plug-in's optional ones."""
    hit = _DECLARED.get(id(tool))
    if hit is None or hit[0] is not tool:
        hit = _DECLARED[id(tool)] = (tool, _declared(tool))
    return hit[1]


def _declared(tool: object) -> Declarations:
    d = Declarations()
    return Declarations(
        primary_metrics=tuple(tool.primary_metrics) if isinstance(tool, DeclaresPrimaryMetrics) else (),
        operations=tuple(tool.operations) if isinstance(tool, DeclaresOperations) else (),
        metrics=dict(tool.metrics) if isinstance(tool, DeclaresMetrics) else {},
        bring_your_own=bool(tool.bring_your_own) if isinstance(tool, ToolAdapter) else False,
        prepares=tuple(tool.prepares) if isinstance(tool, DeclaresPrepares) else d.prepares,
        measures=tuple(tool.measures) if isinstance(tool, DeclaresMeasures) else None,
        views=tuple(tool.views) or d.views if isinstance(tool, DeclaresViews) else d.views,
        columns=tuple(tool.columns) if isinstance(tool, DeclaresColumns) else (),
        order_by=tool.order_by if isinstance(tool, DeclaresOrder) else "",
        higher_is_better=tuple(tool.higher_is_better) if isinstance(tool, DeclaresHigherIsBetter) else (),
        placeholder_options=tuple(tool.placeholder_options) if isinstance(tool, DeclaresPlaceholderOptions) else (),
        deploy_section=tool.deploy_section if isinstance(tool, DeclaresDeploySection) else None,
        validity_checks=tuple(tool.validity_checks) if isinstance(tool, DeclaresValidityChecks) else (),
    )


def better_big(metric: str, plugin: object | None = None) -> bool:
    """Whether a bigger value of this metric is better, by what the plug-in whose rows carry it declares."""
    d = declarations(plugin)
    return higher_is_better(metric, d.higher_is_better, d.metrics)
