"""Pods in given states, for tests of logs, exec and metrics while the twin has no kubelet.

Pods are created through the API and their status is written through the
status subresource, as a kubelet would report it.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.store import clone

NODE = "itbench-worker"


def create_pod(twin: Twin, name: str, containers: list[dict], *, namespace: str = "default",
               node: str | None = NODE, labels: dict | None = None, annotations: dict | None = None,
               **spec) -> dict:
    pods = twin.api.catalog.lookup("", "v1", "pods")
    manifest = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": name}},
                "spec": clone({"containers": containers, **spec})}
    if annotations:
        manifest["metadata"]["annotations"] = annotations
    if node:
        manifest["spec"]["nodeName"] = node
    return twin.api.create(pods, namespace, manifest, twin.admin_ctx)


def set_status(twin: Twin, name: str, status: dict, namespace: str = "default") -> dict:
    pods = twin.api.catalog.lookup("", "v1", "pods")
    pod = clone(twin.api.get(pods, namespace, name))
    pod["status"] = status
    return twin.api.update(pods, namespace, name, pod, twin.admin_ctx, subresource="status")


def container_status(name: str, state: dict, *, last: dict | None = None, restarts: int = 0) -> dict:
    status = {"name": name, "image": "nginx:1.25", "imageID": "", "ready": "running" in state,
              "restartCount": restarts, "state": state}
    if "running" in state or "terminated" in state:
        status["containerID"] = f"containerd://{name}-{restarts}"
    if last is not None:
        status["lastState"] = last
    return status


def running(twin: Twin, *names: str, pod_ip: str = "10.244.1.7") -> dict:
    """A Running pod status with every named container running."""
    started = twin.clock.timestamp()
    return {"phase": "Running", "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "hostIP": "172.18.0.3",
            "startTime": started,
            "containerStatuses": [container_status(n, {"running": {"startedAt": started}}) for n in names]}


def waiting(*names: str, reason: str = "ContainerCreating") -> dict:
    return {"phase": "Pending",
            "containerStatuses": [container_status(n, {"waiting": {"reason": reason}}) for n in names]}


def start_running_pod(twin: Twin, name: str, containers: list[dict] | None = None, **kw) -> dict:
    """Create a pod and report all its containers running."""
    containers = containers or [{"name": "app", "image": "nginx:1.25"}]
    create_pod(twin, name, containers, **kw)
    return set_status(twin, name, running(twin, *(c["name"] for c in containers)),
                      namespace=kw.get("namespace", "default"))
