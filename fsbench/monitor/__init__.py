"""/proc sampling of hosts and named processes during a case, with nothing installed on the host."""

from fsbench.monitor.parse import analyse, parse_result, summary, timeseries
from fsbench.monitor.script import Client, sampler_argv
from fsbench.monitor.session import MonitorSession

__all__ = ["Client", "MonitorSession", "analyse", "parse_result", "sampler_argv", "summary", "timeseries"]
