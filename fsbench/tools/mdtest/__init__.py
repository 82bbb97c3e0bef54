"""mdtest: parse its text output (SUMMARY blocks, IO500 result lines) into tidy rows."""

from fsbench.tools.mdtest.parse import parse_path, parse_text

__all__ = ["parse_path", "parse_text"]

from fsbench.tools.mdtest.adapter import PLUGIN  # noqa: E402 - the package's plug-in
