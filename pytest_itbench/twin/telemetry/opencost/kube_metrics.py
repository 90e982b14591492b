"""The Kubernetes series OpenCost exports itself, where the twin's kube-state-metrics has no equivalent.

OpenCost emits a copy of the kube-state-metrics v1 families its queries read (``EMIT_KSM_V1_METRICS``, on by
default) and a few of its own. Of those, the twin's OpenCost exports the ones its cost allocation reads and that
the twin's kube-state-metrics (v2, without label allowlists) does not: object labels (``label_<name>``, names
sanitized as Prometheus labels), controller selectors, node capacity under the v1 names, and PersistentVolumes.
Families both would export (``kube_pod_container_resource_requests``, ``kube_pod_owner``, ...) are left to
kube-state-metrics rather than doubled.

Each function yields rows ``(family name, exposed labels, value)`` for one object.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

from ... import quantity
from ..exporters.base import MetricFamily
from .assets import pv_capacity_bytes

Row = tuple[str, Mapping[str, str], float]

FAMILIES = (
    MetricFamily("kube_pod_labels", "gauge", "kube_pod_labels all labels for each pod prefixed with label_"),
    MetricFamily("kube_namespace_labels", "gauge", "kube_namespace_labels Namespace Labels"),
    MetricFamily("deployment_match_labels", "gauge", "deployment_match_labels Deployment Match Labels"),
    MetricFamily("statefulSet_match_labels", "gauge", "statefulSet_match_labels StatefulSet Match Labels"),
    MetricFamily("service_selector_labels", "gauge", "service_selector_labels Service Selector Labels"),
    MetricFamily("kube_node_status_capacity_cpu_cores", "gauge",
                 "kube_node_status_capacity_cpu_cores Node Capacity CPU Cores"),
    MetricFamily("kube_node_status_capacity_memory_bytes", "gauge",
                 "kube_node_status_capacity_memory_bytes Node Capacity Memory Bytes"),
    MetricFamily("kube_persistentvolume_capacity_bytes", "gauge",
                 "kube_persistentvolume_capacity_bytes pv storage capacity in bytes"),
    MetricFamily("kube_persistentvolume_status_phase", "gauge", "kube_persistentvolume_status_phase pv status phase"),
    MetricFamily("kubecost_pv_info", "gauge", "kubecost_pv_info pv info"),
)

PV_PHASES = ("Pending", "Available", "Bound", "Released", "Failed")
_INVALID_LABEL_CHARS = re.compile(r"[^a-zA-Z0-9_]")


def label_name(name: str) -> str:
    """A Kubernetes label key as a Prometheus label name: every other character becomes ``_``."""
    return _INVALID_LABEL_CHARS.sub("_", name)


def prefixed(labels: Mapping[str, str] | None) -> dict[str, str]:
    """``label_<sanitized name>`` for each label; on a collision the last key in sorted order wins."""
    return {"label_" + label_name(k): v for k, v in sorted((labels or {}).items())}


def pod_rows(pod: dict) -> Iterable[Row]:
    meta = pod["metadata"]
    yield "kube_pod_labels", {"namespace": meta.get("namespace", ""), "pod": meta["name"],
                              "uid": meta.get("uid", ""), **prefixed(meta.get("labels"))}, 1.0


def namespace_rows(namespace: dict) -> Iterable[Row]:
    meta = namespace["metadata"]
    yield "kube_namespace_labels", {"namespace": meta["name"], **prefixed(meta.get("labels"))}, 1.0


def deployment_rows(deployment: dict) -> Iterable[Row]:
    yield from _selector_row("deployment_match_labels", "deployment", deployment,
                             ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels"))


def statefulset_rows(statefulset: dict) -> Iterable[Row]:
    yield from _selector_row("statefulSet_match_labels", "statefulSet", statefulset,
                             ((statefulset.get("spec") or {}).get("selector") or {}).get("matchLabels"))


def service_rows(service: dict) -> Iterable[Row]:
    yield from _selector_row("service_selector_labels", "service", service,
                             (service.get("spec") or {}).get("selector"))


def _selector_row(family: str, kind_label: str, obj: dict, selector: Mapping[str, str] | None) -> Iterable[Row]:
    # OpenCost skips objects without selector labels: an empty selector would match every pod.
    if selector:
        meta = obj["metadata"]
        yield family, {"namespace": meta.get("namespace", ""), kind_label: meta["name"], **prefixed(selector)}, 1.0


def node_rows(node: dict) -> Iterable[Row]:
    name, capacity = node["metadata"]["name"], (node.get("status") or {}).get("capacity") or {}
    if "cpu" in capacity:
        yield "kube_node_status_capacity_cpu_cores", {"node": name}, float(quantity.value(capacity["cpu"]))
    if "memory" in capacity:
        yield "kube_node_status_capacity_memory_bytes", {"node": name}, float(quantity.value(capacity["memory"]))


def pv_rows(volume: dict) -> Iterable[Row]:
    meta, spec = volume["metadata"], volume.get("spec") or {}
    name, phase = meta["name"], (volume.get("status") or {}).get("phase", "")
    if phase:
        for candidate in PV_PHASES:
            yield "kube_persistentvolume_status_phase", {"persistentvolume": name, "phase": candidate}, \
                float(phase == candidate)
    yield "kube_persistentvolume_capacity_bytes", {"persistentvolume": name}, pv_capacity_bytes(volume)
    provider_id = ((spec.get("csi") or {}).get("volumeHandle")) or name
    yield "kubecost_pv_info", {"persistentvolume": name, "storageclass": spec.get("storageClassName", ""),
                               "provider_id": provider_id}, 1.0
