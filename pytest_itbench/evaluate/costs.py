"""What a namespace and a cluster cost, and how efficiently they use what they pay for, in PromQL over OpenCost's
metrics and the usual exporters (ARCHITECTURE.md, rule 5: the same queries on the twin and on a real cluster).

The FinOps setup writes its budget and efficiency alert rules from these expressions, and the FinOps
evaluator reads the same ones, so what fired and what is graded cannot drift apart.

- CPU cost: each container's CPU allocation (OpenCost: max of request and usage, in cores) times its
  node's price per core-hour; memory cost likewise with GiB and the price per GiB-hour.
- Efficiency (OpenCost's cpuEfficiency and ramEfficiency): usage over request.
- Cluster cost: the nodes' hourly prices plus every PersistentVolume's size times its price per GiB-hour,
  bound or not (an orphaned volume is billed all the same).
"""

from __future__ import annotations

from dataclasses import dataclass

from .signals import Prometheus

GIB = 1024 ** 3
USAGE_WINDOW = "5m"


def _ns(namespace: str) -> str:
    return namespace.replace("\\", "\\\\").replace('"', '\\"')


def cpu_cost(namespace: str) -> str:
    return (f'sum(container_cpu_allocation{{namespace="{_ns(namespace)}"}} '
            f'* on(node) group_left() max by (node) (node_cpu_hourly_cost))')


def memory_cost(namespace: str) -> str:
    return (f'sum(container_memory_allocation_bytes{{namespace="{_ns(namespace)}"}} / {GIB} '
            f'* on(node) group_left() max by (node) (node_ram_hourly_cost))')


def namespace_cost(namespace: str) -> str:
    return f"({cpu_cost(namespace)}) + ({memory_cost(namespace)})"


def cpu_efficiency(namespace: str) -> str:
    ns = _ns(namespace)
    return (f'sum(rate(container_cpu_usage_seconds_total{{namespace="{ns}",container!="",container!="POD"}}'
            f'[{USAGE_WINDOW}])) / sum(kube_pod_container_resource_requests{{namespace="{ns}",resource="cpu"}})')


def memory_efficiency(namespace: str) -> str:
    ns = _ns(namespace)
    return (f'sum(container_memory_working_set_bytes{{namespace="{ns}",container!="",container!="POD"}}) '
            f'/ sum(kube_pod_container_resource_requests{{namespace="{ns}",resource="memory"}})')


def cluster_cost() -> str:
    volumes = (f"sum(pv_hourly_cost * on(persistentvolume) group_left() "
               f"max by (persistentvolume) (kube_persistentvolume_capacity_bytes) / {GIB})")
    return f"sum(node_total_hourly_cost) + ({volumes} or vector(0))"


@dataclass(frozen=True)
class Costs:
    """One reading, in dollars per hour and fractions; None where the series are missing."""

    cpu_cost: float | None
    memory_cost: float | None
    cpu_efficiency: float | None
    memory_efficiency: float | None
    cluster_cost: float | None

    @property
    def namespace_cost(self) -> float | None:
        if self.cpu_cost is None or self.memory_cost is None:
            return None
        return self.cpu_cost + self.memory_cost

    def describe(self) -> str:
        def money(value):
            return "n/a" if value is None else f"${value:.4f}/h"

        def share(value):
            return "n/a" if value is None else f"{100 * value:.0f}%"

        return (f"namespace {money(self.namespace_cost)} (CPU {money(self.cpu_cost)}, memory "
                f"{money(self.memory_cost)}), efficiency CPU {share(self.cpu_efficiency)} memory "
                f"{share(self.memory_efficiency)}, cluster {money(self.cluster_cost)}")


def read(prometheus: Prometheus, namespace: str, at: float) -> Costs:
    return Costs(prometheus.scalar(cpu_cost(namespace), at), prometheus.scalar(memory_cost(namespace), at),
                 prometheus.scalar(cpu_efficiency(namespace), at), prometheus.scalar(memory_efficiency(namespace), at),
                 prometheus.scalar(cluster_cost(), at))


def proximity(observed: float | None, optimal: float | None) -> float | None:
    """ITBench's proximity: 1 - |observed - optimal| / optimal, floored at 0 (None when either is unknown)."""
    if observed is None or optimal is None or optimal <= 0:
        return None
    return max(0.0, 1.0 - abs(observed - optimal) / optimal)
