"""Standing in for the scheduler and the kubelet in tests of the workload controllers.

Tests that run only the controller under test play the other components:
they bind pods (``pods/binding``, as kube-scheduler), report pod status
through the status subresource (as a kubelet): Running and Ready, or a
container that exited, and end the graceful deletion of bound pods.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.store import clone


def pods(twin: Twin, namespace: str = "default", *, prefix: str = "") -> list[dict]:
    """Stored pods of the namespace whose names start with ``prefix``, by name."""
    return [p for p in twin.store.list("pods", namespace)[0] if p["metadata"]["name"].startswith(prefix)]


def names(twin: Twin, namespace: str = "default", *, prefix: str = "") -> list[str]:
    return [p["metadata"]["name"] for p in pods(twin, namespace, prefix=prefix)]


def bind(twin: Twin, name: str, node: str, namespace: str = "default") -> None:
    twin.server.subresources.bind(namespace, name, {"target": {"name": node}}, twin.admin_ctx)


def bind_pinned(twin: Twin, namespace: str = "default") -> list[str]:
    """Bind every unbound pod that node affinity pins to one node (a DaemonSet's) to that node; their names."""
    bound = []
    for pod in pods(twin, namespace):
        if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        required = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution") or {}
        for term in required.get("nodeSelectorTerms") or ():
            for field in term.get("matchFields") or ():
                if field.get("key") == "metadata.name" and twin.store.get("nodes", "", field["values"][0]):
                    bind(twin, pod["metadata"]["name"], field["values"][0], namespace)
                    bound.append(pod["metadata"]["name"])
    return bound


def reap(twin: Twin, namespace: str = "default") -> list[str]:
    """Finish the graceful deletion of every terminating pod, as its kubelet does once the containers stopped
    (a delete with grace period 0); the names of the pods that were terminating."""
    from pytest_itbench.twin.apiserver.registry import DeleteOptions

    res = twin.api.catalog.lookup("", "v1", "pods")
    reaped = []
    for pod in pods(twin, namespace):
        if pod["metadata"].get("deletionGracePeriodSeconds"):
            twin.api.delete(res, namespace, pod["metadata"]["name"], DeleteOptions(grace_period=0), twin.admin_ctx)
            reaped.append(pod["metadata"]["name"])
    return reaped


def _write_status(twin: Twin, name: str, namespace: str, status: dict) -> dict:
    api = twin.api
    res = api.catalog.lookup("", "v1", "pods")
    pod = clone(api.get(res, namespace, name))
    pod["status"] = {**pod.get("status", {}), **status}
    return api.update(res, namespace, name, pod, twin.admin_ctx, subresource="status")


def run(twin: Twin, name: str, namespace: str = "default", *, ready: bool = True) -> dict:
    """Report the pod Running with every container started (and ready, unless ``ready`` is False)."""
    pod = twin.api.get(twin.api.catalog.lookup("", "v1", "pods"), namespace, name)
    now = twin.clock.timestamp()
    flag = "True" if ready else "False"
    containers = [{"name": c["name"], "image": c["image"], "imageID": "", "ready": ready, "restartCount": 0,
                   "started": True, "state": {"running": {"startedAt": now}},
                   "containerID": f"containerd://{name}-{c['name']}"}
                  for c in pod["spec"]["containers"]]
    conditions = [{"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": now}
                  for t, s in (("PodReadyToStartContainers", "True"), ("Initialized", "True"), ("Ready", flag),
                               ("ContainersReady", flag), ("PodScheduled", "True"))]
    return _write_status(twin, name, namespace, {
        "phase": "Running", "conditions": conditions, "containerStatuses": containers, "startTime": now,
        "hostIP": "172.18.0.3", "podIP": "10.244.1.9", "podIPs": [{"ip": "10.244.1.9"}]})


def run_all(twin: Twin, namespace: str = "default", *, prefix: str = "") -> list[str]:
    """Run every pod of the namespace (with ``prefix``) that is not running yet; their names."""
    started = []
    for pod in pods(twin, namespace, prefix=prefix):
        if pod.get("status", {}).get("phase") == "Pending" and not pod["metadata"].get("deletionTimestamp"):
            run(twin, pod["metadata"]["name"], namespace)
            started.append(pod["metadata"]["name"])
    return started


def finish(twin: Twin, name: str, namespace: str = "default", *, exit_code: int = 0) -> dict:
    """Report the pod's containers exited with ``exit_code``: phase Succeeded for 0, else Failed."""
    pod = twin.api.get(twin.api.catalog.lookup("", "v1", "pods"), namespace, name)
    now = twin.clock.timestamp()
    reason = "Completed" if exit_code == 0 else "Error"
    containers = [{"name": c["name"], "image": c["image"], "imageID": "", "ready": False, "restartCount": 0,
                   "started": False, "containerID": f"containerd://{name}-{c['name']}",
                   "state": {"terminated": {"exitCode": exit_code, "reason": reason, "startedAt": now,
                                            "finishedAt": now, "containerID": f"containerd://{name}-{c['name']}"}}}
                  for c in pod["spec"]["containers"]]
    conditions = [{"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": now,
                   **({"reason": "PodCompleted"} if t in ("Ready", "ContainersReady") else {})}
                  for t, s in (("PodReadyToStartContainers", "False"), ("Initialized", "True"), ("Ready", "False"),
                               ("ContainersReady", "False"), ("PodScheduled", "True"))]
    return _write_status(twin, name, namespace, {
        "phase": "Succeeded" if exit_code == 0 else "Failed", "conditions": conditions,
        "containerStatuses": containers, "startTime": now})


def complete_pods(twin: Twin, namespace: str = "default", *, exit_code: int = 0) -> list[str]:
    """Run every unfinished pod of the namespace and let its containers exit; their names."""
    done = []
    for pod in pods(twin, namespace):
        unfinished = pod.get("status", {}).get("phase") in ("Pending", "Running")
        if unfinished and not pod["metadata"].get("deletionTimestamp"):
            run(twin, pod["metadata"]["name"], namespace)
            finish(twin, pod["metadata"]["name"], namespace, exit_code=exit_code)
            done.append(pod["metadata"]["name"])
    return done


def events(twin: Twin, name: str, namespace: str = "default") -> list[tuple[str, str, str]]:
    """(type, reason, message) of the events about the object ``name``, oldest first."""
    items = [e for e in twin.store.list("events", namespace)[0] if e["involvedObject"]["name"] == name]
    items.sort(key=lambda e: (e.get("firstTimestamp") or e.get("eventTime") or "", e["metadata"]["name"]))
    return [(e["type"], e["reason"], e["message"]) for e in items]


def messages(twin: Twin, name: str, namespace: str = "default") -> list[str]:
    return [message for _, _, message in events(twin, name, namespace)]
