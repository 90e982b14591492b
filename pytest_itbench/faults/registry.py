"""The fault registry: every fault by name, and the check scenario files go through."""

from __future__ import annotations

from typing import Iterable

from pydantic import ValidationError

from ..scenario.schema import Scenario
from . import apiserver, autoscaling, chaos, config, flags, network, services, valkey, workloads
from . import capacity, node_groups, pods, scheduling, spend
from .base import Fault

MODULES = (workloads, services, flags, chaos, network, config, autoscaling, valkey, apiserver, spend,
           pods, scheduling, capacity, node_groups)
FAULTS: dict[str, Fault] = {f.name: f for module in MODULES for f in module.FAULTS}


def get(name: str) -> Fault:
    try:
        return FAULTS[name]
    except KeyError:
        raise KeyError(f"unknown fault {name!r}; the registry has: {', '.join(sorted(FAULTS))}") from None


def check_scenario(scenario: Scenario) -> Iterable[tuple[tuple, str]]:
    """Problems with a scenario's faults, as (field path, message), for the loader's file:line errors."""
    for i, spec in enumerate(scenario.faults):
        fault = FAULTS.get(spec.fault)
        if fault is None:
            yield ("faults", i, "fault"), f"unknown fault {spec.fault!r}; the registry has: {', '.join(sorted(FAULTS))}"
            continue
        try:
            fault.check(spec.target, spec.args)
        except ValidationError as exc:
            for err in exc.errors():
                yield ("faults", i, "args", *err["loc"]), err["msg"]
        except ValueError as exc:
            yield ("faults", i, "target"), str(exc)
