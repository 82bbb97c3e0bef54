"""Scenario files: load (keeping YAML line numbers), validate, resolve variables, plan cases."""

from fsbench.scenario.load import load_scenario
from fsbench.scenario.model import Scenario
from fsbench.scenario.plan import Case, plan_cases

__all__ = ["Case", "Scenario", "load_scenario", "plan_cases"]
