"""mdtest: parse its text output (SUMMARY blocks, IO500 result lines) into tidy rows."""

from fsbench.tools.mdtest.parse import parse_path, parse_text

__all__ = ["parse_path", "parse_text", "PLUGIN"]

from fsbench.tools.mdtest.adapter import PLUGIN
