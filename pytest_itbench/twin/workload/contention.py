"""How one node's CPU is shared among its containers, as the Linux CFS shares it.

Each container asks for its demand, capped by its CPU limit (the CFS quota: it can never run
longer than that). While the node's allocatable CPU covers every ask, each container gets what it
asks. When the asks add up to more, the node is oversubscribed and the scheduler divides the CPU
in proportion to the containers' weights: ``cpu.shares``, which the kubelet derives from the CPU
request (1024 per core, and at least 2, so a container without a request weighs next to
nothing). A container that asks less than its proportional share keeps what it asks and leaves
the rest to the others, which share it again by weight, until the CPU is spent (max-min fairness,
"water-filling"). What each one could get if it asked more is the common level times its weight,
capped by its limit: the capacity its queueing is measured against.

This flattens the cgroup tree (QoS slice, pod, container) into the containers; for pods of one
container in one QoS class, as the applications' are, the shares come out the same. On cgroup v2 the
runtime maps ``cpu.shares`` onto ``cpu.weight``, which keeps their order but, with runc before 1.3,
not their ratio at the low end; the twin keeps the ratio of the requests, as Kubernetes documents
the intent of a request.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_SHARES = 2  # the kubelet's minimum: what a container without a CPU request gets
SHARES_PER_CORE = 1024


def shares(request: float | None) -> int:
    """``cpu.shares`` of a container that requests ``request`` cores (the kubelet's MilliCPUToShares)."""
    millis = round((request or 0.0) * 1000)
    return max(MIN_SHARES, millis * SHARES_PER_CORE // 1000)


@dataclass(slots=True)
class Claim:
    """One container's ask on its node, and what it got."""

    demand: float  # cores it would use if nothing held it back
    weight: int  # cpu.shares
    limit: float | None = None  # cores (the CFS quota), or None
    granted: float = 0.0  # cores it gets
    capacity: float = 0.0  # cores it could get: what its utilisation is measured against
    speed: float = 1.0  # share of one core it runs at while runnable: below 1 only on an oversubscribed node


def share(cpu: float, claims: list[Claim]) -> bool:
    """Fill in each claim's ``granted`` and ``capacity`` on a node of ``cpu`` cores; whether it is oversubscribed."""
    total = 0.0
    for claim in claims:
        claim.granted = claim.demand if claim.limit is None else min(claim.demand, claim.limit)
        total += claim.granted
    if total <= cpu:
        for claim in claims:
            claim.capacity = cpu if claim.limit is None else claim.limit
            claim.speed = 1.0
        return False
    # The smallest asks per unit of weight are met first; once an ask exceeds the level what is left
    # gives, that one and every larger one get the level (the others' asks are all above it too).
    order = sorted(claims, key=lambda c: c.granted / c.weight)
    left, weight = cpu, sum(c.weight for c in claims)
    capped = len(order)
    for index, claim in enumerate(order):
        if claim.granted * weight > left * claim.weight:
            capped = index
            break
        left -= claim.granted
        weight -= claim.weight
    level = left / weight if weight > 0 else 0.0
    for claim in order[capped:]:
        claim.granted = level * claim.weight
    for claim in claims:
        reach = level * claim.weight
        claim.capacity = max(claim.granted, reach if claim.limit is None else min(claim.limit, reach))
        # One thread of it, runnable beside the others, gets its weight's part of the CPU it runs on.
        claim.speed = min(1.0, max(reach, 1e-3))
    return True
