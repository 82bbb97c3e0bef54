"""Validity: does each number measure what its label says? Backend counters beside the tool's bytes,
and checks (declared by tool and target plug-ins) that give each measurement a verdict.

The tidy table gets two columns (docs/architecture.md, "Validity"):
- `validity`: `ok` (checked, holds), `flagged` (checked, does not hold), empty (no check applied);
- `validity_detail`: the checks' own words with the numbers they saw, `; `-separated.
Backend counters are rows of tool `backend` (job = the service's name, `window` = `tool` | `after`).

Import from the modules (checks, judge, case, settings, watch...): the package imports none of them, so
that reading a scenario's `validity:` settings does not import the backends' watches.
"""
