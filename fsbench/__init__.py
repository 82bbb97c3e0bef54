"""fsbench: storage benchmark campaigns from one YAML file to tidy results and reports."""

from __future__ import annotations

from fsbench.core.version import SCHEMA_VERSION, __version__

__all__ = ["SCHEMA_VERSION", "__version__", "load_results"]


def load_results(path):  # noqa: ANN001, ANN201 - signature documented in fsbench.run.store
    """Load a run directory's results merged with its cases as a pandas DataFrame."""
    from fsbench.run.store import load_results as _load

    return _load(path)
