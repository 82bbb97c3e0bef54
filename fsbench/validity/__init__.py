"""Validity: does each number measure what its label says? Backend counters beside the tool's bytes,
and checks (declared by tool and target plug-ins) that give each measurement a verdict.

The tidy table gets two columns (docs/architecture.md, "Validity"):
- `validity`: `ok` (checked, holds), `flagged` (checked, does not hold), empty (no check applied);
- `validity_detail`: the checks' own words with the numbers they saw, `; `-separated.
Backend counters are rows of tool `backend` (job = the service's name, `window` = `tool` | `after`).
"""

from fsbench.validity.case import CaseValidity
from fsbench.validity.checks import READ_FROM_CACHE, WRITE_NOT_DURABLE, Check, Verdict
from fsbench.validity.judge import DETAIL, VALIDITY, checks_of, judge
from fsbench.validity.settings import SECTION, Thresholds
from fsbench.validity.watch import BackendWatch

__all__ = ["DETAIL", "READ_FROM_CACHE", "SECTION", "VALIDITY", "WRITE_NOT_DURABLE", "BackendWatch", "CaseValidity",
           "Check", "Thresholds", "Verdict", "checks_of", "judge"]
