"""Tests standing in for the kubelet: pods created on a node, then reported Running with an IP, Ready or not.

Pods are created through the API and their status written through the
status subresource, as a kubelet reports it, so the controllers under test
see what they would see on a cluster.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.store import clone

NODE = "itbench-worker"


def resource(twin: Twin, group: str, version: str, plural: str):
    return twin.api.catalog.lookup(group, version, plural)


def create(twin: Twin, obj: dict) -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    return twin.api.create(res, obj["metadata"].get("namespace"), obj, twin.admin_ctx)


def patch(twin: Twin, group: str, version: str, plural: str, name: str, change, namespace: str = "default",
          subresource: str = "") -> dict:
    """Read, let ``change(obj)`` edit it, write back."""
    res = resource(twin, group, version, plural)
    obj = clone(twin.api.get(res, namespace if res.namespaced else "", name))
    change(obj)
    return twin.api.update(res, namespace if res.namespaced else None, name, obj, twin.admin_ctx,
                           subresource=subresource)


def pod(twin: Twin, name: str, *, labels: dict, ports: list[dict] | None = None, node: str | None = NODE,
        namespace: str = "default", owner: dict | None = None, resources: dict | None = None, **spec) -> dict:
    container: dict = {"name": "app", "image": "nginx:1.25"}
    if ports:
        container["ports"] = ports
    if resources:
        container["resources"] = resources
    manifest: dict = {"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": namespace, "labels": labels},
                      "spec": {"containers": [container], **spec}}
    if node:
        manifest["spec"]["nodeName"] = node
    if owner:
        manifest["metadata"]["ownerReferences"] = [{
            "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    return create(twin, manifest)


def report(twin: Twin, name: str, *, ip: str, ready: bool = True, namespace: str = "default",
           phase: str = "Running") -> dict:
    """Write the pod's status as its kubelet would: Running with an IP, and Ready or not."""
    res = resource(twin, "", "v1", "pods")
    obj = clone(twin.api.get(res, namespace, name))
    now = twin.clock.timestamp()
    old = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or ()}
    flag = "True" if ready else "False"
    conditions = []
    for type_, status in (("Initialized", "True"), ("Ready", flag), ("ContainersReady", flag),
                          ("PodScheduled", "True")):
        before = old.get(type_)
        since = before["lastTransitionTime"] if before and before["status"] == status else now
        conditions.append({"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": since})
    started = (obj.get("status") or {}).get("startTime") or now
    obj["status"] = {"phase": phase, "conditions": conditions, "hostIP": "172.18.0.3", "podIP": ip,
                     "podIPs": [{"ip": ip}], "startTime": started,
                     "containerStatuses": [{"name": c["name"], "image": c["image"], "imageID": "", "ready": ready,
                                            "restartCount": 0, "started": True,
                                            "state": {"running": {"startedAt": started}}}
                                           for c in obj["spec"]["containers"]]}
    return twin.api.update(res, namespace, name, obj, twin.admin_ctx, subresource="status")


def ready_pod(twin: Twin, name: str, *, ip: str, **kw) -> dict:
    pod(twin, name, **kw)
    return report(twin, name, ip=ip, namespace=kw.get("namespace", "default"))


def delete(twin: Twin, group: str, version: str, plural: str, name: str, namespace: str = "default", *,
           grace: int | None = None) -> None:
    res = resource(twin, group, version, plural)
    twin.api.delete(res, namespace if res.namespaced else None, name, DeleteOptions(grace_period=grace),
                    twin.admin_ctx)


def events(twin: Twin, namespace: str = "default", *, name: str | None = None, reason: str | None = None) -> list:
    return [e for e in twin.store.list("events", namespace)[0]
            if (name is None or e["involvedObject"]["name"] == name) and (reason is None or e["reason"] == reason)]
