"""The series of OpenCost's cost-model metrics emitter, from the cluster's objects, the pricing and Prometheus.

Names and label sets are those of OpenCost's ``CostModelMetricsEmitter`` (``pkg/costmodel/metrics.go``):

- per node (``instance`` = ``node`` = the node's name, ``instance_type``, ``region``, ``provider_id``, ``arch``,
  ``uid``): ``node_cpu_hourly_cost`` (per vCPU-hour), ``node_ram_hourly_cost`` (per GiB-hour),
  ``node_gpu_hourly_cost`` (per GPU-hour), ``node_gpu_count``, ``node_total_hourly_cost``,
  ``kubecost_node_is_spot``;
- per container of a running pod (``namespace``, ``pod``, ``container``, ``instance`` = ``node`` = its node,
  ``uid`` = the pod's): ``container_cpu_allocation`` (cores), ``container_memory_allocation_bytes``,
  ``container_gpu_allocation``;
- per claim mounted by a scheduled pod (``namespace``, ``pod``, ``persistentvolumeclaim``,
  ``persistentvolume``, ``uid``): ``pod_pvc_allocation``, the claim's requested bytes over the pods sharing it;
- per PersistentVolume not Failed (``volumename`` = ``persistentvolume`` = its name, ``uid``):
  ``pv_hourly_cost``, the price per GiB-hour (not the volume's total);
- per LoadBalancer Service (``ingress_ip``, ``namespace``, ``service_name``, ``uid``):
  ``kubecost_load_balancer_cost``;
- once: ``kubecost_cluster_management_cost{provisioner_name}`` (the custom provider charges no fee, and names
  no provisioner) and the network egress prices ``kubecost_network_{zone,region,internet}_egress_cost`` and
  ``kubecost_network_nat_gateway_{egress,ingress}_cost``.

A container's allocation is what OpenCost's ``getContainerAllocation`` computes: the larger of its request (from
the pod spec) and its usage, read back from Prometheus as OpenCost's ``ComputeCostData`` does: CPU as
``rate(container_cpu_usage_seconds_total[2m])``, memory as the working set averaged over the same two minutes.
Those are the kubelets' cAdvisor series the twin scrapes, so the figures are the ones any PromQL query sees.
Usage is matched on (namespace, pod, container); OpenCost also matches the node, taken from cAdvisor's
``instance``, which lines up only with its own scrape configuration's relabelling.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ... import quantity
from ...store import Store
from ..exporters.base import MetricFamily
from ..labels import get as label
from ..promql import Engine
from . import assets
from .pricing import CustomPricing

Row = tuple[str, Mapping[str, str], float]

FAMILIES = (
    MetricFamily("node_cpu_hourly_cost", "gauge", "node_cpu_hourly_cost hourly cost for each cpu on this node"),
    MetricFamily("node_ram_hourly_cost", "gauge", "node_ram_hourly_cost hourly cost for each gb of ram on this node"),
    MetricFamily("node_gpu_hourly_cost", "gauge", "node_gpu_hourly_cost hourly cost for each gpu on this node"),
    MetricFamily("node_gpu_count", "gauge", "node_gpu_count count of gpu on this node"),
    MetricFamily("node_total_hourly_cost", "gauge", "node_total_hourly_cost Total node cost per hour"),
    MetricFamily("kubecost_node_is_spot", "gauge",
                 "kubecost_node_is_spot Cloud provider info about node preemptibility"),
    MetricFamily("container_cpu_allocation", "gauge",
                 "container_cpu_allocation Percent of a single CPU used in a minute"),
    MetricFamily("container_memory_allocation_bytes", "gauge",
                 "container_memory_allocation_bytes Bytes of RAM used"),
    MetricFamily("container_gpu_allocation", "gauge", "container_gpu_allocation GPU used"),
    MetricFamily("pod_pvc_allocation", "gauge", "pod_pvc_allocation Bytes used by a PVC attached to a pod"),
    MetricFamily("pv_hourly_cost", "gauge", "pv_hourly_cost Cost per GB per hour on a persistent disk"),
    MetricFamily("kubecost_load_balancer_cost", "gauge", "kubecost_load_balancer_cost Hourly cost of load balancer"),
    MetricFamily("kubecost_cluster_management_cost", "gauge",
                 "kubecost_cluster_management_cost Hourly cost paid as a cluster management fee."),
    MetricFamily("kubecost_network_zone_egress_cost", "gauge",
                 "kubecost_network_zone_egress_cost Total cost per GB egress across zones"),
    MetricFamily("kubecost_network_region_egress_cost", "gauge",
                 "kubecost_network_region_egress_cost Total cost per GB egress across regions"),
    MetricFamily("kubecost_network_internet_egress_cost", "gauge",
                 "kubecost_network_internet_egress_cost Total cost per GB of internet egress."),
    MetricFamily("kubecost_network_nat_gateway_egress_cost", "gauge",
                 "kubecost_network_nat_gateway_egress_cost Total cost per GB of nat gateway egress."),
    MetricFamily("kubecost_network_nat_gateway_ingress_cost", "gauge",
                 "kubecost_network_nat_gateway_ingress_cost Total cost per GB of nat gateway ingress."),
)

USAGE_WINDOW = "2m"  # the window the emitter hands ComputeCostData
_CPU_USAGE = ('avg(rate(container_cpu_usage_seconds_total{container!="", container!="POD"}[%s])) '
              'by (namespace, pod, container)') % USAGE_WINDOW
_RAM_USAGE = ('avg(avg_over_time(container_memory_working_set_bytes{container!="", container!="POD"}[%s])) '
              'by (namespace, pod, container)') % USAGE_WINDOW

Usage = dict[tuple[str, str, str], float]


def container_usage(engine: Engine, now: float) -> tuple[Usage, Usage]:
    """CPU cores and working-set bytes per (namespace, pod, container), as Prometheus has them at ``now``."""
    out: list[Usage] = []
    for query in (_CPU_USAGE, _RAM_USAGE):
        samples = engine.instant_query(query, now).value.samples  # type: ignore[union-attr]
        out.append({(label(s.labels, "namespace"), label(s.labels, "pod"), label(s.labels, "container")): s.value
                    for s in samples})
    return out[0], out[1]


def node_rows(node: dict, pricing: CustomPricing) -> Iterable[Row]:
    price = assets.node_price(node, pricing)
    labels = {"instance": price.name, "node": price.name, "instance_type": price.instance_type,
              "region": price.region, "provider_id": price.provider_id, "arch": price.arch, "uid": price.uid}
    yield "node_cpu_hourly_cost", labels, price.cpu_hourly
    yield "node_ram_hourly_cost", labels, price.ram_hourly
    yield "node_gpu_hourly_cost", labels, price.gpu_hourly
    yield "node_gpu_count", labels, price.gpus
    yield "node_total_hourly_cost", labels, price.total_hourly
    yield "kubecost_node_is_spot", labels, 1.0 if price.spot else 0.0


def container_rows(pod: dict, cpu_usage: Usage, ram_usage: Usage) -> Iterable[Row]:
    """Allocation series of a running pod's containers (init containers are not allocated, as in OpenCost)."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    namespace, name, node = meta.get("namespace", ""), meta["name"], spec.get("nodeName", "")
    for container in spec.get("containers") or ():
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        key = (namespace, name, container["name"])
        labels = {"namespace": namespace, "pod": name, "container": container["name"], "instance": node,
                  "node": node, "uid": meta.get("uid", "")}
        yield "container_cpu_allocation", labels, _allocation(_milli(requests.get("cpu")), cpu_usage.get(key))
        yield "container_memory_allocation_bytes", labels, _allocation(_value(requests.get("memory")),
                                                                        ram_usage.get(key))
        gpus = requests.get(assets.GPU_RESOURCE, limits.get(assets.GPU_RESOURCE))
        yield "container_gpu_allocation", labels, _float(gpus)


def _allocation(request: float, usage: float | None) -> float:
    """max(request, usage); the request alone when Prometheus has no usage (yet)."""
    if usage is None or usage != usage:  # NaN counts as no usage
        return request
    return max(request, usage)


def pvc_rows(pods: list[dict], claims: Mapping[tuple[str, str], dict]) -> Iterable[Row]:
    """Each scheduled pod's share of the bound claims it mounts (the request divided by the pods mounting it)."""
    mounts: dict[tuple[str, str], list[dict]] = {}
    for pod in pods:
        if not (pod.get("spec") or {}).get("nodeName"):
            continue
        namespace = pod["metadata"].get("namespace", "")
        for volume in (pod.get("spec") or {}).get("volumes") or ():
            claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            mounting = mounts.setdefault((namespace, claim_name), []) if claim_name else None
            if mounting is not None and all(p is not pod for p in mounting):
                mounting.append(pod)
    for key, mounting in sorted(mounts.items()):
        claim = claims.get(key)
        volume_name = ((claim or {}).get("spec") or {}).get("volumeName")
        if not volume_name:
            continue
        requested = _value((((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage"))
        for pod in mounting:
            meta = pod["metadata"]
            yield "pod_pvc_allocation", {"namespace": key[0], "pod": meta["name"], "persistentvolumeclaim": key[1],
                                         "persistentvolume": volume_name, "uid": meta.get("uid", "")}, \
                requested / len(mounting)


def pv_rows(volume: dict, pricing: CustomPricing) -> Iterable[Row]:
    price = assets.pv_hourly_per_gib(volume, pricing)
    if price is not None:
        meta = volume["metadata"]
        # OpenCost's custom provider gives volumes no provider ID: the label is empty, so Prometheus drops it.
        yield "pv_hourly_cost", {"volumename": meta["name"], "persistentvolume": meta["name"], "provider_id": "",
                                 "uid": meta.get("uid", "")}, price


def load_balancer_rows(service: dict, pricing: CustomPricing) -> Iterable[Row]:
    if (service.get("spec") or {}).get("type") != "LoadBalancer":
        return
    meta = service["metadata"]
    ingress = (((service.get("status") or {}).get("loadBalancer") or {}).get("ingress")) or ()
    address = (ingress[0].get("ip") or ingress[0].get("hostname") or "") if ingress else ""
    yield "kubecost_load_balancer_cost", {"ingress_ip": address, "namespace": meta.get("namespace", ""),
                                          "service_name": meta["name"], "uid": meta.get("uid", "")}, \
        pricing.load_balancer_hourly()


def cluster_rows(pricing: CustomPricing) -> Iterable[Row]:
    yield "kubecost_cluster_management_cost", {"provisioner_name": ""}, 0.0
    yield "kubecost_network_zone_egress_cost", {}, pricing.zone_egress
    yield "kubecost_network_region_egress_cost", {}, pricing.region_egress
    yield "kubecost_network_internet_egress_cost", {}, pricing.internet_egress
    yield "kubecost_network_nat_gateway_egress_cost", {}, pricing.nat_gateway_egress
    yield "kubecost_network_nat_gateway_ingress_cost", {}, pricing.nat_gateway_ingress


def claims_by_key(store: Store) -> dict[tuple[str, str], dict]:
    return {(c["metadata"].get("namespace", ""), c["metadata"]["name"]): c
            for c in store.list("persistentvolumeclaims")[0]}


def _milli(text) -> float:
    """A CPU quantity as OpenCost reads a request: ``MilliValue() / 1000``."""
    if text is None:
        return 0.0
    try:
        return float(-(-quantity.value(text) * 1000 // 1)) / 1000
    except ValueError:
        return 0.0


def _value(text) -> float:
    """A quantity as ``Value()`` reads it: rounded up to a whole unit."""
    if text is None:
        return 0.0
    try:
        return float(-(-quantity.value(text) // 1))
    except ValueError:
        return 0.0


def _float(text) -> float:
    """A quantity as ``AsApproximateFloat64()`` reads it (GPU counts)."""
    if text is None:
        return 0.0
    try:
        return float(quantity.value(text))
    except ValueError:
        return 0.0
