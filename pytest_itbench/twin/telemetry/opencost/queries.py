"""The Prometheus queries of OpenCost's allocation model, run on the twin's PromQL engine for one window.

OpenCost computes an AllocationSet from Prometheus alone: instant queries at the window's end over the
window's duration (``avg_over_time(...[<window>])``, ``rate(...[<window>])``), and subqueries at the window's
resolution (``[<window>:<resolution>]``) to find when pods, claims, volumes, load balancers and nodes existed.
The twin runs the same expressions on its own engine, so an allocation is made of exactly the samples a
PromQL query sees.

The twin's Prometheus is a 3.x: a subquery is left-open, so its first step is one resolution after the
window's start; OpenCost (since its fix for Prometheus 3) moves the start it reads back by one resolution, and
so does :meth:`Step.intervals`. Without a cluster label (the twin is one cluster), OpenCost's cluster is its
``CLUSTER_ID``, the chart's ``default-cluster``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..promql import Engine

CLUSTER = "default-cluster"  # the chart's opencost.exporter.defaultClusterId

# Containers, from kube-state-metrics, cAdvisor and OpenCost's emitter.
PODS = 'avg(kube_pod_container_status_running != 0) by (pod, namespace)[{dur}:{res}]'
CPU_ALLOCATED = ('avg(avg_over_time(container_cpu_allocation{{container!="", container!="POD", node!=""}}[{dur}])) '
                 'by (container, pod, namespace, node)')
CPU_REQUESTS = ('avg(avg_over_time(kube_pod_container_resource_requests{{resource="cpu", unit="core", container!="", '
                'container!="POD", node!=""}}[{dur}])) by (container, pod, namespace, node)')
CPU_USAGE = ('avg(rate(container_cpu_usage_seconds_total{{container!="", container_name!="POD", container!="POD"}}'
             '[{dur}])) by (container_name, container, pod_name, pod, namespace, instance)')
RAM_ALLOCATED = ('avg(avg_over_time(container_memory_allocation_bytes{{container!="", container!="POD", node!=""}}'
                 '[{dur}])) by (container, pod, namespace, node, provider_id)')
RAM_REQUESTS = ('avg(avg_over_time(kube_pod_container_resource_requests{{resource="memory", unit="byte", '
                'container!="", container!="POD", node!=""}}[{dur}])) by (container, pod, namespace, node)')
RAM_USAGE = ('avg(avg_over_time(container_memory_working_set_bytes{{container!="", container_name!="POD", '
             'container!="POD"}}[{dur}])) by (container_name, container, pod_name, pod, namespace, instance)')
GPU_REQUESTS = ('avg(avg_over_time(kube_pod_container_resource_requests{{resource="nvidia_com_gpu", container!="", '
                'container!="POD", node!=""}}[{dur}])) by (container, pod, namespace, node)')
GPU_ALLOCATED = ('avg(avg_over_time(container_gpu_allocation{{container!="", container!="POD", node!=""}}[{dur}])) '
                 'by (container, pod, namespace, node)')

# Node prices (OpenCost's emitter).
NODE_CPU_HOURLY = 'avg(avg_over_time(node_cpu_hourly_cost[{dur}])) by (node, instance_type, provider_id)'
NODE_RAM_HOURLY = 'avg(avg_over_time(node_ram_hourly_cost[{dur}])) by (node, instance_type, provider_id)'
NODE_GPU_HOURLY = 'avg(avg_over_time(node_gpu_hourly_cost[{dur}])) by (node, instance_type, provider_id)'
NODE_IS_SPOT = 'avg_over_time(kubecost_node_is_spot[{dur}])'

# Metadata: labels, controllers, services.
POD_LABELS = 'avg_over_time(kube_pod_labels[{dur}])'
NAMESPACE_LABELS = 'avg_over_time(kube_namespace_labels[{dur}])'
DEPLOYMENT_LABELS = 'avg_over_time(deployment_match_labels[{dur}])'
STATEFULSET_LABELS = 'avg_over_time(statefulSet_match_labels[{dur}])'
SERVICE_LABELS = 'avg_over_time(service_selector_labels[{dur}])'
DAEMONSET_PODS = 'sum(avg_over_time(kube_pod_owner{{owner_kind="DaemonSet"}}[{dur}])) by (pod, owner_name, namespace)'
JOB_PODS = 'sum(avg_over_time(kube_pod_owner{{owner_kind="Job"}}[{dur}])) by (pod, owner_name, namespace)'
REPLICASET_PODS = ('sum(avg_over_time(kube_pod_owner{{owner_kind="ReplicaSet"}}[{dur}])) '
                   'by (pod, owner_name, namespace)')
UNOWNED_REPLICASETS = ('avg(avg_over_time(kube_replicaset_owner{{owner_kind="<none>", owner_name="<none>"}}[{dur}])) '
                       'by (replicaset, namespace)')
ROLLOUT_REPLICASETS = ('avg(avg_over_time(kube_replicaset_owner{{owner_kind="Rollout"}}[{dur}])) '
                       'by (replicaset, namespace, owner_kind, owner_name)')

# Volumes and load balancers.
PV_ACTIVE = 'count(kube_persistentvolume_capacity_bytes) by (persistentvolume)[{dur}:{res}]'
PV_BYTES = 'avg(avg_over_time(kube_persistentvolume_capacity_bytes[{dur}])) by (persistentvolume)'
PV_COST_PER_GIB_HOUR = 'avg(avg_over_time(pv_hourly_cost[{dur}])) by (volumename)'
PV_META = 'avg(avg_over_time(kubecost_pv_info[{dur}])) by (persistentvolume, provider_id)'
PVC_INFO = ('avg(kube_persistentvolumeclaim_info{{volumename != ""}}) '
            'by (persistentvolumeclaim, storageclass, volumename, namespace)[{dur}:{res}]')
PVC_BYTES = ('avg(avg_over_time(kube_persistentvolumeclaim_resource_requests_storage_bytes[{dur}])) '
             'by (persistentvolumeclaim, namespace)')
POD_PVC_ALLOCATION = ('avg(avg_over_time(pod_pvc_allocation[{dur}])) '
                      'by (persistentvolume, persistentvolumeclaim, pod, namespace)')
LB_COST_PER_HOUR = 'avg(avg_over_time(kubecost_load_balancer_cost[{dur}])) by (namespace, service_name, ingress_ip)'
LB_ACTIVE = 'count(kubecost_load_balancer_cost) by (namespace, service_name)[{dur}:{res}]'

# Assets, for idle: what the nodes cost.
NODE_ACTIVE = 'avg(node_total_hourly_cost) by (node, provider_id)[{dur}:{res}]'
NODE_CPU_CORES = 'avg(avg_over_time(kube_node_status_capacity_cpu_cores[{dur}])) by (node)'
NODE_RAM_BYTES = 'avg(avg_over_time(kube_node_status_capacity_memory_bytes[{dur}])) by (node)'
NODE_GPU_COUNT = 'avg(avg_over_time(node_gpu_count[{dur}])) by (node, provider_id)'


@dataclass(frozen=True)
class Result:
    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class Span:
    labels: dict[str, str]
    start: float
    end: float


class Step:
    """Queries for one window [start, end] at a resolution, evaluated at the window's end."""

    def __init__(self, engine: Engine, start: float, end: float, resolution: float):
        self.engine = engine
        self.start, self.end, self.resolution = start, end, resolution
        self._dur = _duration(end - start)
        self._res = _duration(resolution)

    def vector(self, template: str) -> list[Result]:
        value = self.engine.instant_query(template.format(dur=self._dur, res=self._res), self.end).value
        return [Result(dict(s.labels), s.value) for s in value.samples  # type: ignore[union-attr]
                if s.value == s.value]  # NaN would poison every sum it enters; OpenCost zeroes it

    def intervals(self, template: str) -> list[Span]:
        """When each series existed: first step back by one resolution (Prometheus 3), clamped to the window."""
        value = self.engine.instant_query(template.format(dur=self._dur, res=self._res), self.end).value
        spans = []
        for series in value.series:  # type: ignore[union-attr]
            if not series.points:
                continue
            first, last = series.points[0][0] / 1000.0, series.points[-1][0] / 1000.0
            start, end = max(first - self.resolution, self.start), min(last, self.end)
            if end > start:
                spans.append(Span(dict(series.labels), start, end))
        return spans


def _duration(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"
