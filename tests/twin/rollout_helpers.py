"""Stand-ins for the scheduler and the kubelet, and readers, for tests of the workload controllers.

Tests of the deployment and replicaset controllers run those two alone; the
test plays the rest of the cluster: it binds pods to a node through the
binding subresource, as the scheduler does, reports their containers
running and ready through the status subresource with the conditions and
container statuses a kubelet writes, and, as the kubelet does once it has
stopped a deleted pod's containers, removes terminating pods for good.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.store import clone

NS = "default"
NODE = "itbench-worker"
WORKLOAD_CONTROLLERS = {"deployment", "replicaset"}


def resource(twin: Twin, group: str, plural: str):
    return twin.api.catalog.lookup(group, "v1", plural)


def deployment(name: str = "web", replicas: int = 3, image: str = "nginx:1.25", **spec) -> dict:
    template = {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template, **spec}}


def replica_set(name: str = "web", replicas: int = 3, labels: dict | None = None, **spec) -> dict:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}, **spec}}


def create(twin: Twin, group: str, plural: str, manifest: dict, ns: str = NS) -> dict:
    return twin.api.create(resource(twin, group, plural), ns, manifest, twin.admin_ctx)


def edit(twin: Twin, group: str, plural: str, name: str, change, ns: str = NS) -> dict:
    """Read, change (``change(obj)`` edits a copy in place), write back."""
    res = resource(twin, group, plural)
    obj = twin.api.get(res, ns, name)
    change(obj)
    return twin.api.update(res, ns, name, obj, twin.admin_ctx)


def set_replicas(twin: Twin, plural: str, name: str, replicas: int) -> dict:
    return edit(twin, "apps", plural, name, lambda o: o["spec"].__setitem__("replicas", replicas))


def set_image(twin: Twin, name: str, image: str) -> dict:
    return edit(twin, "apps", "deployments", name,
                lambda d: d["spec"]["template"]["spec"]["containers"][0].__setitem__("image", image))


def get(twin: Twin, bucket: str, name: str, ns: str = NS) -> dict | None:
    return twin.store.get(bucket, ns, name)


def pods(twin: Twin, owner: str | None = None, ns: str = NS, *, terminating: bool = True) -> list[dict]:
    """Pods in the namespace (without the terminating ones if asked), optionally only those a ReplicaSet controls."""
    out = [p for p in twin.store.list("pods", ns)[0] if terminating or not p["metadata"].get("deletionTimestamp")]
    if owner is None:
        return out
    return [p for p in out if any(r.get("controller") and r["name"] == owner
                                  for r in p["metadata"].get("ownerReferences") or ())]


def replica_sets(twin: Twin, ns: str = NS) -> list[dict]:
    return twin.store.list("replicasets.apps", ns)[0]


def replica_set_of(twin: Twin, deployment_name: str, ns: str = NS) -> dict:
    """The ReplicaSet of a Deployment with the highest revision."""
    owned = [rs for rs in replica_sets(twin, ns) if any(r["name"] == deployment_name
                                                        for r in rs["metadata"].get("ownerReferences") or ())]
    return max(owned, key=lambda rs: int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]))


def events(twin: Twin, name: str | None = None, reason: str | None = None, ns: str = NS) -> list[dict]:
    return [e for e in twin.store.list("events", ns)[0]
            if (name is None or e["involvedObject"]["name"] == name) and (reason is None or e["reason"] == reason)]


def messages(twin: Twin, name: str | None = None, reason: str | None = None, ns: str = NS) -> list[str]:
    return [e["message"] for e in sorted(events(twin, name, reason, ns),
                                         key=lambda e: (e.get("lastTimestamp") or "", e["metadata"]["name"]))]


def condition(obj: dict, type_: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == type_), None)


def bind(twin: Twin, pod: dict, node: str = NODE) -> None:
    """What the scheduler does: bind the pod to a node."""
    meta = pod["metadata"]
    twin.server.subresources.bind(meta["namespace"], meta["name"], {"target": {"name": node}}, twin.admin_ctx)


def report(twin: Twin, pod: dict, *, ready: bool, phase: str = "Running", restarts: int = 0) -> dict:
    """What the kubelet reports for a pod whose containers run, ready or not."""
    now = twin.clock.timestamp()
    current = twin.store.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
    if not current["spec"].get("nodeName"):
        bind(twin, current)
    updated = clone(twin.store.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"]))
    old = {c["type"]: c for c in updated.get("status", {}).get("conditions") or ()}

    def cond(type_: str, true: bool) -> dict:
        status = "True" if true else "False"
        before = old.get(type_)
        since = before["lastTransitionTime"] if before and before["status"] == status else now
        out = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": since}
        if not true:
            out["reason"] = "ContainersNotReady"
        return out

    containers = updated["spec"]["containers"]
    running = phase == "Running"
    updated["status"] = {
        "phase": phase,
        "conditions": [cond("PodReadyToStartContainers", True), cond("Initialized", True),
                       cond("Ready", ready), cond("ContainersReady", ready), cond("PodScheduled", True)],
        "hostIP": "172.18.0.3", "hostIPs": [{"ip": "172.18.0.3"}],
        "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}],
        "startTime": updated.get("status", {}).get("startTime") or now,
        "qosClass": updated.get("status", {}).get("qosClass", "BestEffort"),
        "containerStatuses": [
            {"name": c["name"], "image": c["image"], "imageID": f"docker.io/library/{c['image']}@sha256:0",
             "containerID": f"containerd://{c['name']}", "ready": ready, "started": running,
             "restartCount": restarts,
             "state": {"running": {"startedAt": now}} if running else {"waiting": {"reason": "ContainerCreating"}}}
            for c in containers],
    }
    meta = updated["metadata"]
    return twin.api.update(resource(twin, "", "pods"), meta["namespace"], meta["name"], updated, twin.admin_ctx,
                           subresource="status")


def make_ready(twin: Twin, pod_list: list[dict] | None = None, limit: int | None = None) -> int:
    """Report not-yet-ready pods (all of the namespace by default, at most ``limit``) ready; how many."""
    done = 0
    for pod in pod_list if pod_list is not None else pods(twin):
        if limit is not None and done >= limit:
            break
        current = twin.store.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        if current is None or current["metadata"].get("deletionTimestamp") or is_ready(current):
            continue
        report(twin, current, ready=True)
        done += 1
    return done


def is_ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions") or ())


def finish_terminating(twin: Twin, ns: str = NS) -> int:
    """What the kubelet does with a pod being deleted: stop its containers, then delete it with no grace left."""
    done = 0
    for pod in pods(twin, ns=ns):
        meta = pod["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            twin.api.delete(resource(twin, "", "pods"), ns, meta["name"],
                            DeleteOptions(grace_period=0, uid=meta["uid"]), twin.admin_ctx)
            done += 1
    return done


def settle(twin: Twin, rounds: int = 10) -> None:
    """Let the cluster converge, the test playing kubelet: pods are made ready as they appear and go when deleted."""
    for _ in range(rounds):
        twin.warp(1)
        finish_terminating(twin)
        make_ready(twin)
    twin.warp(1)
    finish_terminating(twin)
