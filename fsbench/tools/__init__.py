"""Tools (fio, mdtest, vdbench, juicefs bench, metabench...): one package each, exposing PLUGIN, in one registry."""

from fsbench.api.registry import Registry
from fsbench.api.tools import TOOL_HOOKS, ToolAdapter
from fsbench.core.tidy import METRIC_UNITS

TOOLS: Registry[ToolAdapter] = Registry("tool", "fsbench.tools", (
    "fsbench.tools.fio", "fsbench.tools.mdtest", "fsbench.tools.juicefs_bench", "fsbench.tools.vdbench",
    "fsbench.tools.objbench", "fsbench.tools.metabench", "fsbench.tools.nnbench"), ToolAdapter, TOOL_HOOKS,
    {"juicefs-objbench": "fsbench.tools.objbench"})


def get_tool(name: str) -> ToolAdapter:
    """The tool called name; KeyError naming the known ones."""
    return TOOLS.get(name)


def tool_names() -> list[str]:
    """Names of every tool."""
    return TOOLS.names()


def metric_units() -> dict[str, str]:
    """The metric vocabulary: the tidy table's own, plus what each tool declares it emits."""
    out = dict(METRIC_UNITS)
    for tool in TOOLS:
        out.update(tool.metrics)
    return out


__all__ = ["TOOLS", "ToolAdapter", "get_tool", "metric_units", "tool_names"]
