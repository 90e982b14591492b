"""Small helpers over the official client that every fault uses."""

from __future__ import annotations

from kubernetes import client
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from ..scenario.schema import ObjectRef
from .base import FaultError


def read_workload(api: ApiClient, target: ObjectRef) -> dict:
    """The target Deployment or StatefulSet as a plain dict."""
    apps = client.AppsV1Api(api)
    reader = {"Deployment": apps.read_namespaced_deployment, "StatefulSet": apps.read_namespaced_stateful_set}
    try:
        obj = reader[target.kind](target.name, target.namespace)
    except ApiException as exc:
        raise FaultError(f"cannot read {target.kind} {target.namespace}/{target.name}: {exc.reason}") from None
    return api.sanitize_for_serialization(obj)


def patch_workload(api: ApiClient, target: ObjectRef, json_patch: list[dict]) -> None:
    apps = client.AppsV1Api(api)
    patcher = {"Deployment": apps.patch_namespaced_deployment, "StatefulSet": apps.patch_namespaced_stateful_set}
    try:
        patcher[target.kind](target.name, target.namespace, json_patch)
    except ApiException as exc:
        raise FaultError(f"cannot patch {target.kind} {target.namespace}/{target.name}: {exc.reason}: "
                         f"{exc.body}") from None


def container_index(workload: dict, name: str | None, target: ObjectRef) -> tuple[int, dict]:
    """The index and body of the named container (the first one when no name is given)."""
    containers = workload["spec"]["template"]["spec"]["containers"]
    if name is None:
        return 0, containers[0]
    for i, c in enumerate(containers):
        if c["name"] == name:
            return i, c
    names = ", ".join(c["name"] for c in containers)
    raise FaultError(f"{target.kind} {target.namespace}/{target.name} has no container {name!r} (it has {names})")
