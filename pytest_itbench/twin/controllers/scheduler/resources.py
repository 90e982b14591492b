"""Resource requests of pods and allocatable resources of nodes, in the integer units the scheduler counts.

CPU is counted in millicores, every other resource in whole units (bytes,
pods, devices), each quantity rounded up as ``Quantity.MilliValue()`` and
``Quantity.Value()`` do. A pod's request follows
``k8s.io/component-helpers/resource.PodRequests``: the sum of its containers,
restartable (sidecar) init containers added to it, the largest init container
step if that is larger, plus the pod overhead.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from ... import quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# What a container without a cpu or memory request counts as when nodes are scored (schedutil defaults),
# so that many request-less pods do not pile onto one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Resources = dict[str, int]


def amount(name: str, value) -> int:
    """One quantity in the scheduler's unit for resource ``name``."""
    parsed = quantity.from_json(value)
    if name == CPU:
        return parsed.milli_value
    return math.ceil(parsed.value)


def resource_list(values: Mapping | None) -> Resources:
    if not values:
        return {}
    return {name: amount(name, value) for name, value in values.items()}


def add(into: Resources, other: Mapping[str, int], sign: int = 1) -> None:
    for name, value in other.items():
        into[name] = into.get(name, 0) + sign * value


def _max_into(into: Resources, other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if value > into.get(name, 0):
            into[name] = value


def _container_requests(container: dict, non_missing: bool) -> Resources:
    requests = resource_list((container.get("resources") or {}).get("requests"))
    if non_missing:
        requests.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
        requests.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return requests


def pod_requests(spec: dict, non_missing: bool = False) -> Resources:
    """What a pod requests. ``non_missing`` counts a missing cpu or memory request as the scoring default."""
    total: Resources = {}
    for container in spec.get("containers") or ():
        add(total, _container_requests(container, non_missing))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for container in spec.get("initContainers") or ():
        step = _container_requests(container, non_missing)
        if container.get("restartPolicy") == "Always":
            # A sidecar keeps running next to the app containers and the init containers after it.
            add(total, step)
            add(sidecars, step)
            step = dict(sidecars)
        else:
            add(step, sidecars)
        _max_into(init_peak, step)
    _max_into(total, init_peak)
    add(total, resource_list(spec.get("overhead")))
    return total


def host_ports(spec: dict) -> list[tuple[str, str, int]]:
    """(hostIP, protocol, hostPort) of every container port that claims a port on the node."""
    containers: Iterable[dict] = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    out = []
    for container in [*containers, *(spec.get("containers") or ())]:
        for port in container.get("ports") or ():
            host_port = port.get("hostPort") or 0
            if host_port > 0:
                out.append((port.get("hostIP") or "0.0.0.0", port.get("protocol") or "TCP", host_port))
    return out
