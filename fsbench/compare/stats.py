"""Welch's t-test for comparisons: one statistics module for the report and compare (fsbench.core.stats)."""

from fsbench.core.stats import Welch, betainc, mean_std, t_two_sided_p, welch

__all__ = ["Welch", "betainc", "mean_std", "t_two_sided_p", "welch"]
