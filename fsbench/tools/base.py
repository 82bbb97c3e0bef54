"""The tool adapter contract (fsbench.api.tools), where tool plug-ins have long imported it."""

from fsbench.api.tools import (
    TOOL_HOOKS,
    BuildContext,
    CheckContext,
    CheckTarget,
    HostInfo,
    Invocation,
    OptionIssue,
    ToolAdapter,
)

__all__ = ["TOOL_HOOKS", "BuildContext", "CheckContext", "CheckTarget", "HostInfo", "Invocation", "OptionIssue",
           "ToolAdapter"]
