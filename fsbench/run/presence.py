"""Whether a case's tool is installed on its hosts: from the host facts, or (a workload's own binary) probed once."""

from __future__ import annotations

import shlex

from fsbench.api.transport import Transport
from fsbench.core.at_once import each
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case
from fsbench.tools import get_tool


def tools_of(sc: Scenario) -> set[str]:
    """The tools the scenario's workloads use."""
    return {w.tool for w in sc.workloads.values()}


class ToolPresence:
    """Where each tool is missing, as the host facts say (`<tool>_version: not found`) or a probe found."""

    def __init__(self, sc: Scenario, transports: dict[str, Transport], host_facts: list[dict]):
        self.sc, self.transports = sc, transports
        self.missing = {(h["host"], tool) for h in host_facts for tool in tools_of(sc)
                        if h.get(f"{tool}_version") == "not found"}
        self._probed: dict[tuple, bool] = {}

    def absent(self, case: Case) -> list[str]:
        """Hosts of the case where its tool (the workload's own binary, if it names one) is not installed."""
        tool = get_tool(case.tool)
        argv = tool.version_argv(case.options)
        if argv == tool.version_argv():
            return [h for h in case.hosts if (h, case.tool) in self.missing]
        new = [h for h in dict.fromkeys(case.hosts) if (h, tuple(argv)) not in self._probed]
        # the hosts not asked yet, all at once (one after the other, a case on 1,000 hosts waited 1,000 round trips)
        for h, ok in zip(new, each(new, lambda h: self.transports[h].run(argv, timeout=30).ok)):
            self._probed[(h, tuple(argv))] = ok
        return [h for h in case.hosts if not self._probed[(h, tuple(argv))]]

    def reason(self, case: Case, absent: list[str]) -> tuple[bool, str]:
        """(skipped rather than failed, the reason) of a case whose tool is missing on absent."""
        tool = get_tool(case.tool)
        skip = tool.bring_your_own or self.sc.workloads[case.workload].optional
        return skip, (f"{case.tool} is not installed on {', '.join(absent)} "
                      f"(`{_short(tool.version_argv(case.options))}` failed): "
                      "`fsbench deploy` puts it there, or remove the workload")


def _short(argv: list[str]) -> str:
    """A command for a message: shell probes shown as their first statement."""
    text = argv[-1] if argv[:2] == ["/bin/sh", "-e"] else shlex.join(argv)
    return text.split(";")[0] if len(text) > 80 else text
