"""A target's session as a plan sees it (`fsbench plan --show`): the run's own session, nothing set up, and the
values only a run knows shown as their placeholders."""

from __future__ import annotations

import posixpath

from fsbench.core.events import ignore
from fsbench.run.targets.lifecycle import TargetSession
from fsbench.scenario.model import Scenario, Target

#: what the run id looks like in a plan (it is chosen when the run starts)
RUN_ID = "<run-id>"
#: the scratch folder's random part (docs/safety.md: a name nobody can plant beforehand)
RANDOM = "<random>"


class PlannedSession(TargetSession):
    """A target's session as a plan sees it: nothing set up, run-time values shown as their placeholders."""

    def __init__(self, sc: Scenario, target: Target):
        super().__init__(target, {}, RUN_ID, ignore, scratch=posixpath.join(sc.settings.scratch, RUN_ID),
                         token=RANDOM)
        self.secrets = AsWritten()  # not resolved for a plan

    def values(self, host: str) -> dict[str, str]:
        return AsWritten(super().values(host))

    def store(self, host: str) -> object:
        try:
            return super().store(host)
        except Exception:  # noqa: BLE001 - only a plan display: a kind that needs real values shows no store
            return None


class AsWritten(dict):
    """Run-time values not known yet: every placeholder not given stands for itself (`${services.s3.endpoint}`)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return "${" + key + "}"
