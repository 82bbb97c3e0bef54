"""metabench: fsbench's own metadata benchmark (one C file built by install.sh and `fsbench deploy`)."""

from fsbench.tools.metabench.parse import TOOL, combine_hosts, parse_path, parse_text

__all__ = ["TOOL", "combine_hosts", "parse_path", "parse_text", "PLUGIN"]

from fsbench.tools.metabench.adapter import PLUGIN
