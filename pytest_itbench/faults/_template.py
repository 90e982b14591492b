"""Helpers for faults that edit a workload's pod template or act on its pods, over the official client."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from kubernetes.utils import parse_quantity

from ..scenario.schema import ObjectRef
from .base import FaultError, FaultRecord
from ._k8s import container_index, patch_workload, read_workload

POD_SPEC = "/spec/template/spec"


def pod_spec(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]


def set_field(api: ApiClient, target: ObjectRef, path: str, value: Any, present: bool) -> None:
    """Set (``value`` not None) or drop (None) one field under the pod template; ``present``: it exists now."""
    if value is None:
        if present:
            patch_workload(api, target, [{"op": "remove", "path": path}])
        return
    patch_workload(api, target, [{"op": "replace" if present else "add", "path": path, "value": value}])


def restore_field(api: ApiClient, target: ObjectRef, field: str, saved: Any) -> None:
    """Put a pod-spec field (``nodeSelector``, ``affinity``, ...) back as it was."""
    spec = pod_spec(read_workload(api, target))
    set_field(api, target, f"{POD_SPEC}/{field}", saved, field in spec)


def set_container_field(api: ApiClient, record: FaultRecord, field: str, value: Any) -> None:
    """Set one field of the fault's container (``record.args.container``), saving what it was for removal."""
    index, container = container_index(read_workload(api, record.target), record.args.container, record.target)
    if container.get(field) == value and field in record.saved:
        return
    if field not in record.saved:
        record.saved[field] = container.get(field)
    set_field(api, record.target, f"{POD_SPEC}/containers/{index}/{field}", value, field in container)


def restore_container_field(api: ApiClient, record: FaultRecord, field: str) -> None:
    """Put the container's field back as :func:`set_container_field` found it."""
    if field not in record.saved:
        return
    index, container = container_index(read_workload(api, record.target), record.args.container, record.target)
    set_field(api, record.target, f"{POD_SPEC}/containers/{index}/{field}", record.saved[field], field in container)


def selector_string(workload: dict, target: ObjectRef) -> str:
    labels = (workload["spec"].get("selector") or {}).get("matchLabels") or {}
    if not labels:
        raise FaultError(f"{target.kind} {target.namespace}/{target.name} has no matchLabels selector")
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def workload_pods(api: ApiClient, target: ObjectRef, workload: dict | None = None) -> list[dict]:
    """The workload's pods that are not finished or being deleted, as plain dicts."""
    workload = workload or read_workload(api, target)
    try:
        listed = client.CoreV1Api(api).list_namespaced_pod(target.namespace,
                                                           label_selector=selector_string(workload, target))
    except ApiException as exc:
        raise FaultError(f"cannot list the pods of {target.kind} {target.namespace}/{target.name}: "
                         f"{exc.reason}") from None
    pods = [api.sanitize_for_serialization(p) for p in listed.items]
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


def evict(api: ApiClient, pod: dict) -> None:
    """Evict a pod through the eviction subresource, as ``kubectl drain`` does."""
    meta = pod["metadata"]
    body = client.V1Eviction(api_version="policy/v1", kind="Eviction",
                             metadata=client.V1ObjectMeta(name=meta["name"], namespace=meta["namespace"]))
    try:
        client.CoreV1Api(api).create_namespaced_pod_eviction(meta["name"], meta["namespace"], body,
                                                             _preload_content=False)
    except ApiException as exc:
        if exc.status != 404:
            raise FaultError(f"cannot evict pod {meta['namespace']}/{meta['name']}: {exc.reason}: {exc.body}") from None


def nodes(api: ApiClient) -> list[dict]:
    try:
        return [api.sanitize_for_serialization(n) for n in client.CoreV1Api(api).list_node().items]
    except ApiException as exc:
        raise FaultError(f"cannot list nodes: {exc.reason}") from None


def node_ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


def _quantity(value: Any) -> Decimal:
    return parse_quantity(value) if value is not None else Decimal(0)


def container_request(container: dict, resource: str) -> Decimal:
    """What a container requests of ``resource`` (the API defaults requests to limits on pods; templates are not
    defaulted, so the limit stands in when no request is stated)."""
    resources = container.get("resources") or {}
    value = (resources.get("requests") or {}).get(resource)
    if value is None:
        value = (resources.get("limits") or {}).get(resource)
    return _quantity(value)


def pod_request(spec: dict, resource: str) -> Decimal:
    """The scheduler's view of a pod's request: the larger of its containers' sum and its largest init container,
    plus the pod overhead."""
    regular = sum((container_request(c, resource) for c in spec.get("containers") or ()), Decimal(0))
    init = max((container_request(c, resource) for c in spec.get("initContainers") or ()), default=Decimal(0))
    overhead = _quantity((spec.get("overhead") or {}).get(resource))
    return max(regular, init) + overhead


def quantity_text(value: Decimal, resource: str) -> str:
    """A quantity the API accepts: whole bytes for memory, millicores for cpu, a count otherwise."""
    if resource.endswith("cpu"):
        return f"{int(value * 1000)}m"
    return str(int(value))
