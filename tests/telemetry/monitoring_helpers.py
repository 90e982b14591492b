"""A twin without controllers whose objects and usage a test writes itself, and readers of what was scraped.

Nothing runs but the clock, the scrape loop and the rules, so a test states exactly what kube-state-metrics
and cAdvisor see: a pod's status as a kubelet would write it, a container's CPU and memory as the kubelet
would report them.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.store import clone
from pytest_itbench.twin.telemetry import labels as lbl

START = 1_800_000_000.0  # a multiple of 15 s: scrapes fall on START + 15, + 30, ...
NODE = "itbench-worker"


def quiet_twin(seed: int = 5, nodes: int = 1) -> Twin:
    """A twin with monitoring and no controllers (not served: tests read its store directly)."""
    return Twin(seed=seed, nodes=nodes, start_time=START, controllers=())


def create(twin: Twin, obj: dict) -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    return twin.api.create(res, obj["metadata"].get("namespace"), clone(obj), twin.admin_ctx)


def set_status(twin: Twin, obj: dict, status: dict) -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    meta = obj["metadata"]
    current = twin.api.get(res, meta.get("namespace", ""), meta["name"])
    current["status"] = clone(status)
    return twin.api.update(res, meta.get("namespace"), meta["name"], current, twin.admin_ctx, subresource="status")


def delete(twin: Twin, obj: dict) -> None:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    meta = obj["metadata"]
    twin.api.delete(res, meta.get("namespace"), meta["name"], DeleteOptions(grace_period=0), twin.admin_ctx)


def pod(name: str, containers: list[dict], *, namespace: str = "default", node: str = NODE, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": containers, "nodeName": node, **spec}}


def running(name: str, container_id: str, *, started: str = "2027-01-15T08:00:00Z", restarts: int = 0,
            ready: bool = True, image: str = "docker.io/library/nginx:1.27", last: dict | None = None) -> dict:
    status = {"name": name, "state": {"running": {"startedAt": started}}, "ready": ready, "restartCount": restarts,
              "image": image, "imageID": f"{image}@sha256:{'ab' * 32}", "containerID": f"containerd://{container_id}",
              "started": True}
    if last is not None:
        status["lastState"] = {"terminated": last}
    return status


def waiting(name: str, reason: str, *, restarts: int = 0, last: dict | None = None,
            image: str = "docker.io/library/nginx:1.27") -> dict:
    status = {"name": name, "state": {"waiting": {"reason": reason}}, "ready": False, "restartCount": restarts,
              "image": image, "imageID": "", "started": False}
    if last is not None:
        status["lastState"] = {"terminated": last}
    return status


def pod_status(phase: str, containers: list[dict], *, ready: bool, qos: str = "BestEffort",
               transition: str = "2027-01-15T08:00:00Z") -> dict:
    flag = "True" if ready else "False"
    return {"phase": phase, "hostIP": "172.18.0.3", "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}],
            "startTime": "2027-01-15T07:59:58Z", "qosClass": qos,
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": transition},
                           {"type": "Initialized", "status": "True", "lastTransitionTime": transition},
                           {"type": "ContainersReady", "status": flag, "lastTransitionTime": transition},
                           {"type": "Ready", "status": flag, "lastTransitionTime": transition}],
            "containerStatuses": containers}


def vector(twin: Twin, query: str) -> dict[tuple, float]:
    """An instant query at the clock's time, as {label set without __name__: value}."""
    result = twin.monitoring.engine.instant_query(query, twin.clock.now()).value
    return {lbl.without_name(sample.labels): sample.value for sample in result.samples}


def one(twin: Twin, query: str) -> tuple[dict[str, str], float]:
    """The single series a query returns, as (labels, value)."""
    found = vector(twin, query)
    assert len(found) == 1, f"{query}: {found}"
    labels, value = next(iter(found.items()))
    return dict(labels), value
