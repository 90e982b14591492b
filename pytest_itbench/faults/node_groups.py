"""Faults in the cluster autoscaler's node groups (the FinOps domain): a minimum size far above need, and an
instance type far larger than the workloads need. Both edit the group's template Node in the ConfigMap the
autoscaler's kwok cloud provider reads (docs/twin.md, "Node groups and the cluster autoscaler"), so the
cluster keeps nodes it does not need and the bill grows; nothing else changes.
"""

from __future__ import annotations

from typing import Any, Callable

import yaml
from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from pydantic import Field

from .base import Fault, FaultArgs, FaultError, FaultRecord

NAMESPACE = "kube-system"
PROVIDER_CONFIG, PROVIDER_KEY = "kwok-provider-config", "config"
TEMPLATES_KEY = "templates"
MIN_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/min-count"
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
CLUSTER_COST_ALERTS = ("ClusterCostOverBudget",)


class GroupArgs(FaultArgs):
    group: str = Field(min_length=1)  # the node group's name (the value of the provider's group label)


def _read(api: ApiClient, name: str) -> dict:
    try:
        return api.sanitize_for_serialization(client.CoreV1Api(api).read_namespaced_config_map(name, NAMESPACE))
    except ApiException as exc:
        raise FaultError(f"cannot read ConfigMap {NAMESPACE}/{name}: {exc.reason}") from None


def _group_label(api: ApiClient) -> str:
    text = (_read(api, PROVIDER_CONFIG).get("data") or {}).get(PROVIDER_KEY) or ""
    config = yaml.safe_load(text) or {}
    label = ((config.get("nodegroups") or {}).get("fromNodeLabelKey"))
    if not label:
        raise FaultError(f"ConfigMap {NAMESPACE}/{PROVIDER_CONFIG} names no nodegroups.fromNodeLabelKey")
    return label


def _edit_template(api: ApiClient, record: FaultRecord, change: Callable[[dict], None]) -> None:
    """Apply ``change`` to the group's template Node, keeping the ConfigMap's original text for removal."""
    target = record.target
    configmap = _read(api, target.name)
    text = (configmap.get("data") or {}).get(TEMPLATES_KEY)
    if text is None:
        raise FaultError(f"ConfigMap {NAMESPACE}/{target.name} has no {TEMPLATES_KEY!r} key")
    record.saved.setdefault("templates", text)
    label = _group_label(api)
    listing: dict[str, Any] = yaml.safe_load(record.saved["templates"]) or {}
    items = listing.get("items") or []
    group = record.args.group
    found = [n for n in items if ((n.get("metadata") or {}).get("labels") or {}).get(label) == group]
    if not found:
        known = sorted({((n.get("metadata") or {}).get("labels") or {}).get(label, "?") for n in items})
        raise FaultError(f"ConfigMap {NAMESPACE}/{target.name} has no node group {group!r} (it has "
                         f"{', '.join(known) or 'none'})")
    change(found[0])
    _write(api, target.name, yaml.safe_dump(listing, sort_keys=False))


def _write(api: ApiClient, name: str, text: str) -> None:
    try:
        client.CoreV1Api(api).patch_namespaced_config_map(name, NAMESPACE, {"data": {TEMPLATES_KEY: text}})
    except ApiException as exc:
        raise FaultError(f"cannot patch ConfigMap {NAMESPACE}/{name}: {exc.reason}") from None


class _TemplateFault(Fault):
    target_kinds = ("ConfigMap",)
    expected_alerts = CLUSTER_COST_ALERTS

    def remove(self, api: ApiClient, record: FaultRecord) -> None:
        if "templates" in record.saved:
            _write(api, record.target.name, record.saved["templates"])


class MinSizeArgs(GroupArgs):
    min_size: int = Field(ge=1, le=50)


class MinSizeTooHigh(_TemplateFault):
    name = "misconfigured-cluster-autoscaler-node-group-min-size"
    description = "Raises a node group's minimum size far above need: the autoscaler keeps idle nodes running."
    Args = MinSizeArgs

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        def change(node: dict) -> None:
            annotations = node.setdefault("metadata", {}).setdefault("annotations", {})
            annotations[MIN_ANNOTATION] = str(record.args.min_size)
        _edit_template(api, record, change)


class InstanceTypeArgs(GroupArgs):
    instance_type: str = Field(min_length=1)  # e.g. m5.4xlarge


class OversizedInstanceType(_TemplateFault):
    name = "oversized-cluster-autoscaler-node-group-instance-type"
    description = ("Moves a node group to an instance type far larger than its pods need: its nodes are replaced "
                   "by bigger, dearer ones.")
    Args = InstanceTypeArgs

    def inject(self, api: ApiClient, record: FaultRecord) -> None:
        def change(node: dict) -> None:
            labels = node.setdefault("metadata", {}).setdefault("labels", {})
            for label in INSTANCE_TYPE_LABELS:
                if label in labels or label == INSTANCE_TYPE_LABELS[0]:
                    labels[label] = record.args.instance_type
        _edit_template(api, record, change)


FAULTS = (MinSizeTooHigh(), OversizedInstanceType())
