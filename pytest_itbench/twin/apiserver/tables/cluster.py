"""Cluster-level printers: nodes, namespaces, leases, priority classes and resource quotas."""

from __future__ import annotations

from .core import Column, age, age_column, api_doc, name_column, register
from ...quantity import printable as canonical

ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"


def node_roles(labels: dict | None) -> list[str]:
    """Roles from ``node-role.kubernetes.io/<role>`` label keys and ``kubernetes.io/role=<role>`` values."""
    roles = set()
    for key, value in (labels or {}).items():
        if key.startswith(ROLE_LABEL_PREFIX) and key[len(ROLE_LABEL_PREFIX):]:
            roles.add(key[len(ROLE_LABEL_PREFIX):])
        elif key == ROLE_LABEL and value:
            roles.add(value)
    return sorted(roles)


def node_status(node: dict) -> str:
    """``Ready``, ``NotReady`` or ``Unknown`` from the Ready condition, then ``SchedulingDisabled`` if cordoned."""
    ready = None
    for condition in (node.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            ready = condition  # the last one wins, as when upstream indexes conditions by type
    parts = ["Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"]
    if (node.get("spec") or {}).get("unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _address(node: dict, type_: str) -> str:
    for address in (node.get("status") or {}).get("addresses") or ():
        if address.get("type") == type_:
            return address.get("address", "")
    return "<none>"


def node_row(node: dict, now: float) -> list:
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return [node["metadata"].get("name", ""), node_status(node),
            ",".join(node_roles(node["metadata"].get("labels"))) or "<none>", age(node, now),
            info.get("kubeletVersion", ""), _address(node, "InternalIP"), _address(node, "ExternalIP"),
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


register("", "Node", [
    name_column(),
    Column("Status", description="The status of the node"),
    Column("Roles", description="The roles of the node"),
    age_column(),
    Column("Version", description=api_doc("core.v1.NodeSystemInfo", "kubeletVersion")),
    Column("Internal-IP", description=api_doc("core.v1.NodeStatus", "addresses"), priority=1),
    Column("External-IP", description=api_doc("core.v1.NodeStatus", "addresses"), priority=1),
    Column("OS-Image", description=api_doc("core.v1.NodeSystemInfo", "osImage"), priority=1),
    Column("Kernel-Version", description=api_doc("core.v1.NodeSystemInfo", "kernelVersion"), priority=1),
    Column("Container-Runtime", description=api_doc("core.v1.NodeSystemInfo", "containerRuntimeVersion"),
           priority=1),
], node_row)


def namespace_row(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), (obj.get("status") or {}).get("phase", ""), age(obj, now)]


register("", "Namespace", [
    name_column(),
    Column("Status", description="The status of the namespace"),
    age_column(),
], namespace_row)


def lease_row(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), (obj.get("spec") or {}).get("holderIdentity") or "", age(obj, now)]


register("coordination.k8s.io", "Lease", [
    name_column(),
    Column("Holder", description=api_doc("coordination.v1.LeaseSpec", "holderIdentity")),
    age_column(),
], lease_row)


def priority_class_row(obj: dict, now: float) -> list:
    return [obj["metadata"].get("name", ""), obj.get("value", 0), bool(obj.get("globalDefault")), age(obj, now),
            obj.get("preemptionPolicy") or ""]


register("scheduling.k8s.io", "PriorityClass", [
    name_column(),
    Column("Value", "integer", description=api_doc("scheduling.v1.PriorityClass", "value")),
    Column("Global-Default", "boolean", description=api_doc("scheduling.v1.PriorityClass", "globalDefault")),
    age_column(),
    Column("PreemptionPolicy", description=api_doc("scheduling.v1.PriorityClass", "preemptionPolicy")),
], priority_class_row)


def resource_quota_row(obj: dict, now: float) -> list:
    """REQUEST and LIMIT: ``used/hard`` per resource in name order; ``limits.*`` resources go to LIMIT."""
    status = obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests, limits = [], []
    for resource in sorted(hard):
        cell = f"{resource}: {canonical(str(used.get(resource, '0')))}/{canonical(str(hard[resource]))}"
        (limits if resource.startswith("limits.") else requests).append(cell)
    return [obj["metadata"].get("name", ""), ", ".join(requests), ", ".join(limits), age(obj, now)]


register("", "ResourceQuota", [
    name_column(),
    Column("Request", description="Request represents a minimum amount of cpu/memory that a container may consume."),
    Column("Limit", description="Limits control the maximum amount of cpu/memory that a container may use "
                                "independent of contention on the node."),
    age_column(),
], resource_quota_row)
