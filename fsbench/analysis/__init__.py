"""Summaries of tidy results: per case, across repetitions, against the baseline."""

from fsbench.analysis.summarise import case_values, summarise

__all__ = ["case_values", "summarise"]
