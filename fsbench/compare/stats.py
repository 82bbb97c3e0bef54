"""Welch's t-test for comparisons: one statistics module for the report and compare (fsbench.analysis.stats)."""

from fsbench.analysis.stats import Welch, betainc, mean_std, t_two_sided_p, welch

__all__ = ["Welch", "betainc", "mean_std", "t_two_sided_p", "welch"]
