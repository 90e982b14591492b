"""Scenario files: the schema, loading with file:line errors, and the catalog."""

from .loader import ScenarioError, load, loads
from .schema import Scenario

__all__ = ["Scenario", "ScenarioError", "load", "loads"]
