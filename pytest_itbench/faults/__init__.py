"""Faults: a registry of typed, idempotent inject/remove pairs acting through the Kubernetes API only."""

from .base import Fault, FaultArgs, FaultError, FaultRecord
from .registry import FAULTS, check_scenario, get

__all__ = ["FAULTS", "Fault", "FaultArgs", "FaultError", "FaultRecord", "check_scenario", "get"]
