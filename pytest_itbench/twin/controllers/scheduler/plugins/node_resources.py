"""NodeResourcesFit (requests against allocatable; least-allocated scoring) and
NodeResourcesBalancedAllocation (prefer nodes whose cpu and memory use stay even).

Fit counts what pods request. Least-allocated scoring counts a container
without a cpu or memory request as 100m and 200Mi, so that request-less pods
still spread; balanced allocation counts requests as they are.
"""

from __future__ import annotations

from ..cache import NodeInfo
from ..framework import MAX_NODE_SCORE, CycleState, Plugin, Status, unschedulable
from ..resources import CPU, EPHEMERAL_STORAGE, MEMORY

TOO_MANY_PODS = "Too many pods"
SCORED = (CPU, MEMORY)  # the default scoring strategy's resources, weight 1 each


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"

    def pre_filter(self, state: CycleState) -> None:
        requests = state.pod.requests
        ordered = [r for r in (CPU, MEMORY, EPHEMERAL_STORAGE) if r in requests]
        ordered += sorted(r for r in requests if r not in (CPU, MEMORY, EPHEMERAL_STORAGE))
        state.data[self.name] = [(name, requests[name]) for name in ordered if requests[name] > 0]
        return None

    def filter(self, state: CycleState, node: NodeInfo) -> Status | None:
        reasons = [TOO_MANY_PODS] if len(node.pods) + 1 > node.allowed_pods else []
        allocatable, requested = node.allocatable, node.requested
        for name, wanted in state.data[self.name]:
            if wanted > allocatable.get(name, 0) - requested.get(name, 0):
                reasons.append(f"Insufficient {name}")
        return unschedulable(*reasons) if reasons else None

    def score(self, state: CycleState, node: NodeInfo) -> int:
        requested = (node.non_zero_cpu + state.pod.non_zero_cpu, node.non_zero_memory + state.pod.non_zero_memory)
        total = weights = 0
        for name, wanted in zip(SCORED, requested):
            capacity = node.allocatable.get(name, 0)
            if capacity == 0:
                continue
            total += 0 if wanted > capacity else (capacity - wanted) * MAX_NODE_SCORE // capacity
            weights += 1
        return total // weights if weights else 0


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    def score(self, state: CycleState, node: NodeInfo) -> int:
        fractions = []
        for name in SCORED:
            capacity = node.allocatable.get(name, 0)
            if capacity == 0:
                continue
            used = node.requested.get(name, 0) + state.pod.requests.get(name, 0)
            fractions.append(min(used / capacity, 1.0))
        deviation = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
        return int((1 - deviation) * MAX_NODE_SCORE)
