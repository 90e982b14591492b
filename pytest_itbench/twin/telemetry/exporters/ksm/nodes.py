"""kube-state-metrics' Node and Namespace families."""

from __future__ import annotations

from typing import Iterable

from .common import Row, conditions_by_type, family, flag, resource_rows, timestamp_row

# ---- Nodes (label node) ------------------------------------------------------------------------------------------
NODE_DELETION = family("kube_node_deletion_timestamp", "Unix deletion timestamp")
NODE_CREATED = family("kube_node_created", "Unix creation timestamp", stable=True)
NODE_ADDRESSES = family("kube_node_status_addresses", "Node address information.")
NODE_INFO = family("kube_node_info", "Information about a cluster node.", stable=True)
NODE_ROLE = family("kube_node_role", "The role of a cluster node.")
NODE_POD_CIDRS = family("kube_node_spec_pod_cidrs", "The pod CIDRs of a cluster node.")
NODE_TAINT = family("kube_node_spec_taint", "The taint of a cluster node.", stable=True)
NODE_UNSCHEDULABLE = family("kube_node_spec_unschedulable", "Whether a node can schedule new pods.", stable=True)
NODE_ALLOCATABLE = family("kube_node_status_allocatable",
                          "The allocatable for different resources of a node that are available for scheduling.",
                          stable=True)
NODE_CAPACITY = family("kube_node_status_capacity", "The capacity for different resources of a node.", stable=True)
NODE_CONDITION = family("kube_node_status_condition", "The condition of a cluster node.", stable=True)

NODE_FAMILIES = (NODE_DELETION, NODE_CREATED, NODE_ADDRESSES, NODE_INFO, NODE_ROLE, NODE_POD_CIDRS, NODE_TAINT,
                 NODE_UNSCHEDULABLE, NODE_ALLOCATABLE, NODE_CAPACITY, NODE_CONDITION)

_ROLE_PREFIX = "node-role.kubernetes.io/"


def node_labels(obj: dict) -> dict[str, str]:
    return {"node": obj["metadata"]["name"]}


def node_rows(n: dict) -> Iterable[Row]:
    meta, spec, status = n["metadata"], n.get("spec") or {}, n.get("status") or {}
    addresses = status.get("addresses") or ()
    info = status.get("nodeInfo") or {}
    yield from timestamp_row(NODE_DELETION, meta.get("deletionTimestamp"))
    yield from timestamp_row(NODE_CREATED, meta.get("creationTimestamp"))
    for address in addresses:
        yield NODE_ADDRESSES, {"type": address.get("type", ""), "address": address.get("address", "")}, 1.0
    internal_ip = next((a.get("address", "") for a in reversed(addresses) if a.get("type") == "InternalIP"), "")
    yield NODE_INFO, {"kernel_version": info.get("kernelVersion", ""), "os_image": info.get("osImage", ""),
                      "container_runtime_version": info.get("containerRuntimeVersion", ""),
                      "kubelet_version": info.get("kubeletVersion", ""), "kubeproxy_version": "deprecated",
                      "provider_id": spec.get("providerID", ""), "pod_cidr": spec.get("podCIDR", ""),
                      "system_uuid": info.get("systemUUID", ""), "internal_ip": internal_ip}, 1.0
    for label in meta.get("labels") or {}:
        if label.startswith(_ROLE_PREFIX):
            yield NODE_ROLE, {"role": label[len(_ROLE_PREFIX):]}, 1.0
    for cidr in spec.get("podCIDRs") or ():
        yield NODE_POD_CIDRS, {"pod_cidr": cidr}, 1.0
    for taint in spec.get("taints") or ():
        yield NODE_TAINT, {"key": taint.get("key", ""), "value": taint.get("value", ""),
                           "effect": taint.get("effect", "")}, 1.0
    yield NODE_UNSCHEDULABLE, {}, flag(bool(spec.get("unschedulable")))
    yield from resource_rows(NODE_ALLOCATABLE, status.get("allocatable") or {}, {}, milli_bytes=True)
    yield from resource_rows(NODE_CAPACITY, status.get("capacity") or {}, {}, milli_bytes=True)
    yield from conditions_by_type(NODE_CONDITION, status.get("conditions") or ())


# ---- Namespaces (label namespace) ----------------------------------------------------------------------------------
NAMESPACE_CREATED = family("kube_namespace_created", "Unix creation timestamp", stable=True)
NAMESPACE_PHASE = family("kube_namespace_status_phase", "kubernetes namespace status phase.", stable=True)
NAMESPACE_CONDITION = family("kube_namespace_status_condition", "The condition of a namespace.")

NAMESPACE_FAMILIES = (NAMESPACE_CREATED, NAMESPACE_PHASE, NAMESPACE_CONDITION)


def namespace_labels(obj: dict) -> dict[str, str]:
    return {"namespace": obj["metadata"]["name"]}


def namespace_rows(ns: dict) -> Iterable[Row]:
    phase = (ns.get("status") or {}).get("phase", "")
    yield from timestamp_row(NAMESPACE_CREATED, ns["metadata"].get("creationTimestamp"))
    yield NAMESPACE_PHASE, {"phase": "Active"}, flag(phase == "Active")
    yield NAMESPACE_PHASE, {"phase": "Terminating"}, flag(phase == "Terminating")
    yield from conditions_by_type(NAMESPACE_CONDITION, (ns.get("status") or {}).get("conditions") or ())
