"""One window's container allocations, as OpenCost's ``computeAllocation`` builds them from Prometheus.

1. Pods: when each ran (``kube_pod_container_status_running != 0`` at the window's resolution).
2. Each container of a known pod: CPU core-hours are its average ``container_cpu_allocation`` (already the
   larger of request and usage at each minute) times its hours, raised to the average request if that is
   higher; likewise RAM byte-hours; GPU hours from the GPU allocation (or the requests before OpenCost
   exported one). Request and usage averages are kept for the efficiencies.
3. Labels: the namespace's, overridden by the pod's (``kube_namespace_labels``, ``kube_pod_labels``).
4. Controllers: Deployments and StatefulSets whose match labels select the pod's labels, then DaemonSets and
   Jobs owning it (a CronJob's Job counts as the CronJob), then ReplicaSets that nothing owns.
5. Services whose selectors match the pod's labels.
6. Costs: hours times the node's average hourly prices over the window; a node without prices (or with a zero
   price) gets the custom pricing's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import queries as q
from .assets import GIB
from .model import Allocation, Properties
from .pricing import CustomPricing
from .queries import Result, Step

_CRON_JOB = re.compile(r"^(.+)-(\d{10}|\d{8})$")  # a Job a CronJob made: its name plus a schedule stamp


@dataclass
class Pod:
    namespace: str
    name: str
    start: float
    end: float
    window: tuple[float, float]
    node: str = ""
    allocations: dict[str, Allocation] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def container(self, name: str) -> Allocation:
        alloc = self.allocations.get(name)
        if alloc is None:
            alloc = self.allocations[name] = Allocation(
                name="", properties=Properties(cluster=q.CLUSTER, namespace=self.namespace, pod=self.name,
                                               container=name, node=self.node),
                window=self.window, start=self.start, end=self.end)
        return alloc

    @property
    def hours(self) -> float:
        return (self.end - self.start) / 3600.0


@dataclass(frozen=True)
class NodeRates:
    cpu: float
    ram: float
    gpu: float
    provider_id: str = ""


Pods = dict[tuple[str, str], Pod]


def running_pods(step: Step) -> Pods:
    pods: Pods = {}
    for span in step.intervals(q.PODS):
        key = (span.labels.get("namespace", ""), span.labels.get("pod", ""))
        pod = pods.get(key)
        if pod is None:
            pods[key] = Pod(key[0], key[1], span.start, span.end, (step.start, step.end))
        else:
            pod.start, pod.end = min(pod.start, span.start), max(pod.end, span.end)
    return pods


def apply_resources(step: Step, pods: Pods) -> None:
    # Allocation first, then requests, so that core-hours are never below the request (as OpenCost orders it).
    for r in _known(step.vector(q.CPU_ALLOCATED), pods):
        pod, alloc = _container(pods, r)
        alloc.cpu_core_hours = r.value * pod.hours
        _place(pod, alloc, r)
    for r in _known(step.vector(q.CPU_REQUESTS), pods):
        pod, alloc = _container(pods, r)
        alloc.cpu_core_request_average = r.value
        if _per_hour(alloc.cpu_core_hours, pod) < r.value:
            alloc.cpu_core_hours = r.value * pod.hours
        _place(pod, alloc, r)
    for r in _known(step.vector(q.CPU_USAGE), pods):
        _container(pods, r)[1].cpu_core_usage_average = r.value
    for r in _known(step.vector(q.RAM_ALLOCATED), pods):
        pod, alloc = _container(pods, r)
        alloc.ram_byte_hours = r.value * pod.hours
        _place(pod, alloc, r)
    for r in _known(step.vector(q.RAM_REQUESTS), pods):
        pod, alloc = _container(pods, r)
        alloc.ram_bytes_request_average = r.value
        if _per_hour(alloc.ram_byte_hours, pod) < r.value:
            alloc.ram_byte_hours = r.value * pod.hours
        _place(pod, alloc, r)
    for r in _known(step.vector(q.RAM_USAGE), pods):
        _container(pods, r)[1].ram_bytes_usage_average = r.value
    gpus = step.vector(q.GPU_ALLOCATED) or step.vector(q.GPU_REQUESTS)
    for r in _known(gpus, pods):
        pod, alloc = _container(pods, r)
        alloc.gpu_hours = r.value * pod.hours
        alloc.gpu_request_average = r.value


def apply_metadata(step: Step, pods: Pods) -> dict[tuple[str, str], list[Allocation]]:
    """Labels, controllers and services; returns the allocations behind each (namespace, service)."""
    namespace_labels = {r.labels.get("namespace", ""): _stripped(r.labels) for r in step.vector(q.NAMESPACE_LABELS)}
    for r in step.vector(q.POD_LABELS):
        pod = pods.get((r.labels.get("namespace", ""), r.labels.get("pod", "")))
        if pod is not None:
            pod.labels.update(_stripped(r.labels))
    for pod in pods.values():
        ns_labels = namespace_labels.get(pod.namespace, {})
        for alloc in pod.allocations.values():
            alloc.properties.labels = {**ns_labels, **pod.labels}
            alloc.properties.namespace_labels = dict(ns_labels)
    controllers: dict[tuple[str, str], tuple[str, str]] = {}
    for kind, template, name_label in (("deployment", q.DEPLOYMENT_LABELS, "deployment"),
                                       ("statefulset", q.STATEFULSET_LABELS, "statefulSet")):
        for r in step.vector(template):
            selector, namespace = _stripped(r.labels), r.labels.get("namespace", "")
            for key, pod in pods.items():
                if key[0] == namespace and all(pod.labels.get(k) == v for k, v in selector.items()):
                    controllers[key] = (kind, r.labels.get(name_label, ""))
    for kind, template in (("daemonset", q.DAEMONSET_PODS), ("job", q.JOB_PODS)):
        for r in step.vector(template):
            owner = r.labels.get("owner_name", "")
            if kind == "job":
                match = _CRON_JOB.match(owner)
                owner = match.group(1) if match else owner
            controllers[(r.labels.get("namespace", ""), r.labels.get("pod", ""))] = (kind, owner)
    controllers.update(_replicaset_controllers(step))
    for key, pod in pods.items():
        if key in controllers:
            for alloc in pod.allocations.values():
                alloc.properties.controller_kind, alloc.properties.controller = controllers[key]
    by_service: dict[tuple[str, str], list[Allocation]] = {}
    for r in step.vector(q.SERVICE_LABELS):
        selector, namespace, service = _stripped(r.labels), r.labels.get("namespace", ""), r.labels.get("service", "")
        for key, pod in sorted(pods.items()):
            if key[0] == namespace and all(pod.labels.get(k) == v for k, v in selector.items()):
                for alloc in pod.allocations.values():
                    alloc.properties.services = sorted({*alloc.properties.services, service})
                    by_service.setdefault((namespace, service), []).append(alloc)
    return by_service


def _replicaset_controllers(step: Step) -> dict[tuple[str, str], tuple[str, str]]:
    """Pods of ReplicaSets nothing owns (the ReplicaSet is their controller) or that a Rollout owns."""
    kinds = {(r.labels.get("namespace", ""), r.labels.get("replicaset", "")): "replicaset"
             for r in step.vector(q.UNOWNED_REPLICASETS)}
    kinds.update({(r.labels.get("namespace", ""), r.labels.get("replicaset", "")): "rollout"
                  for r in step.vector(q.ROLLOUT_REPLICASETS)})
    out = {}
    for r in step.vector(q.REPLICASET_PODS):
        key = (r.labels.get("namespace", ""), r.labels.get("owner_name", ""))
        if key in kinds:
            out[(key[0], r.labels.get("pod", ""))] = (kinds[key], key[1])
    return out


def node_rates(step: Step, pricing: CustomPricing) -> dict[str, NodeRates]:
    """Each node's average hourly prices over the window; zero prices replaced by the custom pricing's."""
    found: dict[str, dict] = {}
    for field_name, template in (("cpu", q.NODE_CPU_HOURLY), ("ram", q.NODE_RAM_HOURLY), ("gpu", q.NODE_GPU_HOURLY)):
        for r in step.vector(template):
            entry = found.setdefault(r.labels.get("node", ""), {"provider_id": r.labels.get("provider_id", "")})
            entry[field_name] = r.value
    spot = {r.labels.get("node", ""): r.value > 0 for r in step.vector(q.NODE_IS_SPOT)}
    rates = {}
    for node, entry in found.items():
        preemptible = spot.get(node, False)
        cpu = entry.get("cpu") or (pricing.spot_cpu if preemptible else pricing.cpu)
        ram = entry.get("ram") or (pricing.spot_ram if preemptible else pricing.ram)
        rates[node] = NodeRates(cpu, ram, entry.get("gpu", 0.0), entry["provider_id"])
    return rates


def apply_costs(pods: Pods, rates: dict[str, NodeRates], pricing: CustomPricing) -> None:
    fallback = NodeRates(pricing.cpu, pricing.ram, pricing.gpu)  # a node Prometheus has no price for
    for pod in pods.values():
        for alloc in pod.allocations.values():
            node = rates.get(alloc.properties.node, fallback)
            alloc.properties.provider_id = node.provider_id
            alloc.cpu_cost = alloc.cpu_core_hours * node.cpu
            alloc.ram_cost = alloc.ram_byte_hours / GIB * node.ram
            alloc.gpu_cost = alloc.gpu_hours * node.gpu


def _known(results: list[Result], pods: Pods) -> list[Result]:
    """Results of pods that ran in the window (others are ignored, as OpenCost ignores them)."""
    return [r for r in results if (r.labels.get("namespace", ""), r.labels.get("pod", "")) in pods
            and (r.labels.get("container") or r.labels.get("container_name"))]


def _container(pods: Pods, r: Result) -> tuple[Pod, Allocation]:
    pod = pods[(r.labels.get("namespace", ""), r.labels.get("pod", ""))]
    return pod, pod.container(r.labels.get("container") or r.labels.get("container_name", ""))


def _place(pod: Pod, alloc: Allocation, r: Result) -> None:
    node = r.labels.get("node")
    if node:
        alloc.properties.node = node
        pod.node = node


def _per_hour(cumulative: float, pod: Pod) -> float:
    return cumulative / pod.hours if pod.hours > 0 else 0.0


def _stripped(labels: dict[str, str]) -> dict[str, str]:
    """The ``label_`` series labels without their prefix (OpenCost's ``GetLabels``)."""
    return {k[len("label_"):]: v for k, v in labels.items() if k.startswith("label_")}
