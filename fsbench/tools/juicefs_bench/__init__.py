"""`juicefs bench` output (old free-text and new table formats) -> tidy rows."""

from fsbench.tools.juicefs_bench.parse import TOOL, parse_path, parse_text

__all__ = ["TOOL", "parse_path", "parse_text", "PLUGIN"]

from fsbench.tools.juicefs_bench.adapter import PLUGIN
