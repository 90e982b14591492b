"""Idle cost: what the nodes cost over a window less what the allocations were charged (OpenCost's
``computeIdleAllocations``, by cluster).

A node's cost over the window is its capacity times its average hourly prices times the hours it was priced
(``node_total_hourly_cost`` present, at the window's resolution): ``cores x CPU price x hours``,
``GiB x RAM price x hours``, ``GPUs x GPU price x hours``, capacity as OpenCost exports it
(``kube_node_status_capacity_cpu_cores``, ``kube_node_status_capacity_memory_bytes``, ``node_gpu_count``).
The idle allocation ``<cluster>/__idle__`` carries, per resource, the cluster's node cost minus the
allocations' cost; it has costs but no hours.
"""

from __future__ import annotations

from . import queries as q
from .assets import GIB
from .model import IDLE, Allocation, Properties
from .queries import Step


def idle_allocation(step: Step, allocations: list[Allocation]) -> Allocation | None:
    spans = {s.labels.get("node", ""): s for s in step.intervals(q.NODE_ACTIVE)}
    if not spans:
        return None
    values: dict[str, dict[str, float]] = {}
    for name, template in (("cpu_price", q.NODE_CPU_HOURLY), ("ram_price", q.NODE_RAM_HOURLY),
                           ("gpu_price", q.NODE_GPU_HOURLY), ("cores", q.NODE_CPU_CORES),
                           ("ram_bytes", q.NODE_RAM_BYTES), ("gpus", q.NODE_GPU_COUNT)):
        for r in step.vector(template):
            values.setdefault(r.labels.get("node", ""), {})[name] = r.value
    cpu = ram = gpu = 0.0
    for node, span in spans.items():
        v = values.get(node, {})
        hours = (span.end - span.start) / 3600.0
        cpu += v.get("cores", 0.0) * v.get("cpu_price", 0.0) * hours
        ram += v.get("ram_bytes", 0.0) / GIB * v.get("ram_price", 0.0) * hours
        gpu += v.get("gpus", 0.0) * v.get("gpu_price", 0.0) * hours
    start, end = min(s.start for s in spans.values()), max(s.end for s in spans.values())
    return Allocation(
        name=f"{q.CLUSTER}/{IDLE}", properties=Properties(cluster=q.CLUSTER), window=(step.start, step.end),
        start=start, end=end,
        cpu_cost=cpu - sum(a.cpu_cost for a in allocations),
        ram_cost=ram - sum(a.ram_cost for a in allocations),
        gpu_cost=gpu - sum(a.gpu_cost for a in allocations))
