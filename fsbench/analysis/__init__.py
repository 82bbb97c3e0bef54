"""Summaries of tidy results: per case, across repetitions, against the baseline.

Import from the modules (fsbench.analysis.summarise...): the package imports none of them, so that the
scenario loader, which imports fsbench.core.stats, does not import pandas.
"""
