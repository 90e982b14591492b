"""OpenCost's ``QueryAllocation``: the window cut into steps, one allocation set per step, aggregated, and
accumulated into one set when asked.

Each step [s, s + step) is computed on its own from Prometheus (:mod:`.containers`, :mod:`.volumes`,
:mod:`.idle`); steps run from the window's start for as long as they start before its end (the last one may
reach past it, as in OpenCost). Every figure comes from the twin's PromQL engine over its store, so it agrees
with what a PromQL query of the same series gives.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..promql import Engine
from . import containers, volumes
from .aggregate import accumulate, aggregate
from .idle import idle_allocation
from .model import Allocation
from .pricing import CustomPricing
from .queries import Step

DEFAULT_RESOLUTION = 300.0  # OpenCost's ETL_RESOLUTION_SECONDS default


@dataclass(frozen=True)
class AllocationQuery:
    start: float
    end: float
    step: float
    resolution: float
    aggregate_by: list[str]
    include_idle: bool = False
    share_idle: bool = False
    accumulate: bool = False
    aggregated_metadata: bool = False

    def steps(self) -> list[tuple[float, float]]:
        out, start = [], self.start
        while self.end > start:
            out.append((start, start + self.step))
            start += self.step
        return out


def compute_set(engine: Engine, pricing: CustomPricing, start: float, end: float, resolution: float, *,
                include_idle: bool = False) -> list[Allocation]:
    """The unaggregated allocations of one window: one per container, plus unmounted and idle ones."""
    step = Step(engine, start, end, resolution)
    pods = containers.running_pods(step)
    containers.apply_resources(step, pods)
    by_service = containers.apply_metadata(step, pods)
    volumes.apply_volumes(step, pods)
    volumes.apply_load_balancers(step, pods, by_service)
    containers.apply_costs(pods, containers.node_rates(step, pricing), pricing)
    allocations = []
    for pod in pods.values():
        for alloc in pod.allocations.values():
            p = alloc.properties
            alloc.name = f"{p.cluster}/{p.node}/{p.namespace}/{p.pod}/{p.container}"
            allocations.append(alloc)
    if include_idle:
        idle = idle_allocation(step, allocations)
        if idle is not None:
            allocations.append(idle)
    return allocations


def query_allocation(engine: Engine, pricing: CustomPricing, query: AllocationQuery) -> list[dict[str, Allocation]]:
    sets = []
    for start, end in query.steps():
        allocations = compute_set(engine, pricing, start, end, query.resolution, include_idle=query.include_idle)
        sets.append(aggregate(allocations, query.aggregate_by, share_idle=query.share_idle,
                              aggregated_metadata=query.aggregated_metadata))
    if query.accumulate:
        return [accumulate(sets)]
    return sets
