"""Summaries of tidy results: per case, across repetitions, against the baseline."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsbench.analysis.summarise import case_values, summarise

__all__ = ["case_values", "summarise"]


def __getattr__(name: str) -> object:
    """summarise and case_values on first use: the scenario loader imports fsbench.core.stats, not pandas."""
    if name in __all__:
        from fsbench.analysis import summarise as module

        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
