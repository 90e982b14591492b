"""The kubelet's node-pressure eviction for memory, as its eviction manager does it.

The signal is ``memory.available``: the node's memory capacity minus its working set (what
:meth:`~.node.NodeAgent.node_usage` reports from the usage the kubelet knows for its pods and
its own processes). Under the default hard threshold ``memory.available<100Mi`` the kubelet
fails one pod per monitoring interval (10 s) until the signal is back above the threshold.
Pods are ranked as ``rankMemoryPressure`` ranks them: pods whose working set exceeds their
memory requests first, then by priority (lowest first), then by how far their working set is
above their requests (largest first). The evicted pod's containers are killed at once (a hard
threshold has no grace period), its phase becomes ``Failed`` with reason ``Evicted`` and the
message the kubelet writes, and an ``Evicted`` event is recorded. The node's MemoryPressure
condition is posted by the node heartbeat from the same signal, and the taint
``node.kubernetes.io/memory-pressure:NoSchedule`` follows from it (node lifecycle controller).
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import quantity

MEMORY_AVAILABLE_THRESHOLD = 100 * 2 ** 20  # the default hard threshold, memory.available<100Mi
THRESHOLD_TEXT = "100Mi"
MONITORING_INTERVAL = 10.0  # the eviction manager's housekeeping interval
EVICTED = "Evicted"


@dataclass(frozen=True)
class Candidate:
    """One pod on the node as the eviction manager sees it."""

    key: tuple[str, str]  # namespace, name
    priority: int
    request: int  # memory requests of its containers, bytes
    usage: int  # working set of its containers, bytes
    containers: tuple[tuple[str, int, int], ...] = ()  # (name, working set, request) per container


def memory_available(capacity: int, working_set: int) -> int:
    """The signal memory.available in bytes."""
    return capacity - working_set


def under_pressure(capacity: int | None, working_set: int, threshold: int = MEMORY_AVAILABLE_THRESHOLD) -> bool:
    return capacity is not None and memory_available(capacity, working_set) < threshold


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Eviction order under memory pressure, first to evict first (ties keep their given order)."""
    return sorted(candidates, key=lambda c: (not c.usage > c.request, c.priority, -(c.usage - c.request)))


def message(candidate: Candidate, available: int) -> str:
    """The pod's status message (and the Evicted event's) as the kubelet writes it."""
    text = (f"The node was low on resource: memory. Threshold quantity: {THRESHOLD_TEXT}, "
            f"available: {_quantity(available)}. ")
    for name, used, request in candidate.containers:
        if used > request:
            text += (f"Container {name} was using {_quantity(used)}, request is {_quantity(request)}, "
                     f"has larger consumption of memory. ")
    return text


def _quantity(value: int) -> str:
    return quantity.format_binary(value)
