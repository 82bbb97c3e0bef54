"""The collector kind protocol (fsbench.api.collectors), where collector plug-ins have long imported it."""

from fsbench.api.collectors import (
    COLLECTOR_HOOKS,
    SERIES_COLUMNS,
    Collected,
    CollectorKind,
    CollectorSpec,
    HasTail,
    ParsesLines,
    ParsesWindow,
    ToolWindow,
)

__all__ = ["COLLECTOR_HOOKS", "SERIES_COLUMNS", "Collected", "CollectorKind", "CollectorSpec", "HasTail",
           "ParsesLines", "ParsesWindow", "ToolWindow"]
