"""The scenario's run-wide sections: settings, resource monitoring, and how tools are deployed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.core.stats_settings import SECTION as STATS
from fsbench.scenario import repetitions as reps
from fsbench.scenario import value_checks as v
from fsbench.validity.settings import SECTION as VALIDITY


@dataclass(frozen=True)
class Settings:
    """Run-wide settings."""

    repetitions: reps.Repetitions = option(reps.check, reps.Repetitions(), doc="a count, or {min: 3, max: 10, "
                                           "target_ci: 5%, budget: 20m}: repeat a case while its interval is wider")
    exclude_warmup: bool = option(s.boolean, False, doc="leave out of the summaries a first repetition far off "
                                                        "the others (flagged as warm-up either way)")
    order: str = option(s.one_of("targets", "rounds"), "targets",
                        doc="targets: each target's cases back to back (set up once); rounds: repetition 1 of "
                            "every target of a workload, then repetition 2..., every target set up at once, so "
                            "drift over minutes hits all alike and comparisons pair by round")
    shuffle: bool = option(s.boolean, True,
                           doc="with order: rounds, each round runs its targets in an order of its own (drawn "
                               "from the scenario's name, the same on every run and in `plan`): a target is "
                               "not always first or after the same neighbour, so what its place in the round "
                               "does to it shows as round-to-round spread, not as a difference (false: the "
                               "targets' declared order in every round)")
    fresh: str = option(s.one_of("none", "targets", "services"), "none",
                        doc="with order: rounds, targets: each target is set up before its cases of a round and "
                            "torn down after them (its services stay up); services: its services too are started "
                            "anew for each round. Every round then measures a new file system, mount and data "
                            "(and servers), as a rerun would, so what differs from one setup to the next shows as "
                            "round-to-round spread instead of being stated as a difference")
    stats: dict = option(STATS, factory=dict, convert=dict,
                         doc="when a difference is stated: min_effect (10%), time_floor (20us)")
    case_timeout_s: float | None = option(s.duration, None, key="case_timeout")
    cooldown_s: float = option(s.pause, 0.0, key="cooldown", doc="the pause between two cases (0s: none)")
    output_root: str = option(s.string, "reports")
    progress: str = option(s.one_of("auto", "plain", "none"), "auto")
    scratch: str = option(s.line_text, "/var/tmp/fsbench")
    validity: dict = option(VALIDITY, factory=dict, convert=dict,
                            doc="thresholds of the validity checks: cache_ratio, durable_ratio, settle, quiet")
    fault_answer_s: float = option(s.pause, 10.0, key="fault_answer",
                                   doc="how long a mounted target may take to answer the fault watch's lookup "
                                       "during a case; three misses in a row end the case as a fault of the "
                                       "system under test (0s: no watch)")
    fault_interval_s: float = option(s.duration, 2.0, key="fault_interval", doc="between two lookups of the watch")
    output_cap: int = option(s.size, 64 * 2**20, doc="bytes of each command's stdout and of its stderr kept "
                             "(the first and the last half; a line says what was left out between them)")
    min_hosts: int | None = option(s.integer(1), None,
                                   doc="hosts that must answer at preflight: with it, a run of many clients goes on "
                                       "without a target's host that cannot be reached (named in a warning) while "
                                       "at least this many of the run's hosts answered; without it, any such host "
                                       "refuses the run")


@dataclass(frozen=True)
class Monitor:
    """Resource monitoring during every case, on every host the case involves."""

    enabled: bool = option(s.boolean, True)
    interval_s: float = option(s.duration, 1.0, key="interval")
    processes: tuple[str, ...] = option(s.list_of(v.process_name), (), convert=tuple,
                                        doc="process names (as in /proc/PID/comm) whose CPU and memory are reported")


UPLOAD = s.Struct({
    "from": s.Key(s.string, required=True, doc="a local file or folder (relative to the scenario file)"),
    "to": s.Key(s.string, required=True, doc="where it goes on every host, e.g. /usr/local/bin/mdtest"),
}, what="upload")


@dataclass(frozen=True)
class Deploy:
    """How `fsbench deploy` (and `before_run`) puts missing tools on hosts.

    Besides these keys, `deploy:` holds a section per tool whose plug-in declares one
    (`deploy_section`): `mdtest: {method, source}`, `vdbench: {zip, home}`; they land in `tools`.
    """

    install: bool = option(s.boolean, False, doc="install missing tools with apt-get, dnf or zypper")
    packages: dict = option(s.mapping_of(s.string, name_rule=False), factory=dict, convert=dict,
                            doc="tool -> package name")
    upload: dict = option(s.mapping_of(UPLOAD, name_rule=False), factory=dict, convert=dict)
    before_run: bool = option(s.boolean, False, doc="deploy as part of `fsbench run`, before preflight")
    #: tool name -> its checked deploy section (paths in it relative to base_dir)
    tools: dict = field(default_factory=dict)
    base_dir: str = "."

    def tool(self, name: str) -> dict:
        """A tool's deploy settings (empty when the scenario gives none)."""
        return dict(self.tools.get(name) or {})

    def path(self, value: str) -> str:
        """A path from a deploy setting: URLs and absolute paths as they are, others below the scenario's folder."""
        if not value or "://" in value or value.startswith(("/", "~")):
            return value
        return str(Path(self.base_dir) / value)
