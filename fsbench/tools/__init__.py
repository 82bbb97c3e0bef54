"""Tool adapters: pure build (argv / job text) and parse functions, behind one registry."""

from fsbench.tools.base import ToolAdapter, get_tool, register, tool_names

__all__ = ["ToolAdapter", "get_tool", "register", "tool_names"]
