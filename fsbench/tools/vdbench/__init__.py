"""vdbench: parse output directories and reports into tidy rows (see parse.py for the decisions)."""

from fsbench.tools.vdbench.parse import parse_path

__all__ = ["parse_path", "PLUGIN"]

from fsbench.tools.vdbench.adapter import PLUGIN
