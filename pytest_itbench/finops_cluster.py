"""The priced cluster's configuration as the systems that read it keep it: OpenCost's custom pricing and the
cluster autoscaler's node groups, each a ConfigMap written through the Kubernetes API (rule 1).

The twin's OpenCost and cluster autoscaler read the same ConfigMaps as the real ones (docs/telemetry.md,
"OpenCost"; docs/twin.md, "Node groups and the cluster autoscaler").
"""

from __future__ import annotations

import json

from kubernetes import client as k8s
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .scenario.finops import NodeGroup, Pricing
# cluster-autoscaler's kwok cloud provider format, written by a pure function (the same on any cluster)
from .twin.controllers.autoscaler.config import configmaps as node_group_configmaps

PRICING_NAMESPACE, PRICING_CONFIGMAP, PRICING_KEY = "opencost", "custom-pricing-model", "default.json"
NODE_GROUPS_NAMESPACE = "kube-system"
NODE_TEMPLATES = "kwok-provider-templates"  # the node groups' template Nodes (kwok-provider-config points here)


def write_pricing(api: ApiClient, pricing: Pricing) -> None:
    model = {"provider": "custom", "description": "itbench custom pricing", "CPU": f"{pricing.CPU:g}",
             "RAM": f"{pricing.RAM:g}", "storage": f"{pricing.storage:g}", "GPU": "0.95", "spotCPU": f"{pricing.CPU:g}",
             "spotRAM": f"{pricing.RAM:g}"}
    ensure_namespace(api, PRICING_NAMESPACE)
    _put_configmap(api, PRICING_NAMESPACE, PRICING_CONFIGMAP, {PRICING_KEY: json.dumps(model, indent=2)})


def write_node_groups(api: ApiClient, groups: tuple[NodeGroup, ...]) -> None:
    """The node groups as the cluster autoscaler's kwok provider reads them: a template Node per group."""
    provider, templates = node_group_configmaps([
        {"name": g.name, "instance_type": g.instance_type, "min_size": g.min_size, "max_size": g.max_size,
         "labels": dict(g.labels), "taints": [dict(t) for t in g.taints]} for g in groups])
    for body in (provider, templates):
        _put_configmap(api, NODE_GROUPS_NAMESPACE, body["metadata"]["name"], body["data"])


def agent_rules() -> dict[str, list[dict]]:
    """Namespaced RBAC rules a FinOps agent gets beyond its application's namespace, by namespace."""
    return {
        # Reading kube-system's ConfigMaps is how one finds the autoscaler's configuration and status (RBAC
        # cannot narrow a list by name); changing them is allowed for the node groups' templates only.
        NODE_GROUPS_NAMESPACE: [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [NODE_TEMPLATES],
             "verbs": ["patch", "update"]},
        ],
        PRICING_NAMESPACE: [
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [PRICING_CONFIGMAP], "verbs": ["get"]},
        ],
    }


def ensure_namespace(api: ApiClient, name: str) -> None:
    try:
        k8s.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    except ApiException as exc:
        if exc.status != 409:
            raise


def _put_configmap(api: ApiClient, namespace: str, name: str, data: dict[str, str]) -> None:
    core = k8s.CoreV1Api(api)
    body = {"metadata": {"name": name, "namespace": namespace}, "data": data}
    try:
        core.create_namespaced_config_map(namespace, body)
    except ApiException as exc:
        if exc.status != 409:
            raise
        core.replace_namespaced_config_map(name, namespace, body)
