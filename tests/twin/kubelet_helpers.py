"""A twin running the kubelet alone, and readers for what it writes (pod status, events, logs).

The tests bind pods themselves (``spec.nodeName``), since the scheduler does
not run.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.tables.pods import pod_row
from pytest_itbench.twin.store import clone

START = 1_700_000_000.0
NODE = "itbench-worker"


@contextmanager
def kubelet_twin(seed: int = 11, nodes: int = 1, *, serve: bool = False) -> Iterator[Twin]:
    """A twin whose only controller is the kubelet; served on a port only when kubectl needs it.

    A served twin starts an hour before the wall clock: its certificates must be valid to kubectl, and
    kubectl computes ages from wall time. Nothing the tests assert depends on that start.
    """
    start = math.floor(time.time()) - 3600 if serve else START
    twin = Twin(seed=seed, nodes=nodes, start_time=start, controllers={"kubelet"})
    if serve:
        twin.start()
    try:
        yield twin
    finally:
        twin.stop()


def pods_resource(twin: Twin):
    return twin.api.catalog.lookup("", "v1", "pods")


def create_pod(twin: Twin, name: str, containers: list[dict], *, namespace: str = "default", node: str | None = NODE,
               init: list[dict] | None = None, **spec) -> dict:
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                "spec": clone({"containers": containers, **spec})}
    if init:
        manifest["spec"]["initContainers"] = clone(init)
    if node:
        manifest["spec"]["nodeName"] = node
    return twin.api.create(pods_resource(twin), namespace, manifest, twin.admin_ctx)


def create(twin: Twin, plural: str, obj: dict, namespace: str = "default", group: str = "", version: str = "v1"):
    res = twin.api.catalog.lookup(group, version, plural)
    return twin.api.create(res, namespace, clone(obj), twin.admin_ctx)


def pod(twin: Twin, name: str, namespace: str = "default") -> dict | None:
    return twin.store.get("pods", namespace, name)


def status(twin: Twin, name: str, namespace: str = "default") -> dict:
    return (pod(twin, name, namespace) or {}).get("status") or {}


def container(twin: Twin, name: str, container_name: str | None = None, *, init: bool = False) -> dict:
    statuses = status(twin, name).get("initContainerStatuses" if init else "containerStatuses") or []
    for entry in statuses:
        if container_name is None or entry["name"] == container_name:
            return entry
    return {}


def condition(twin: Twin, name: str, type_: str) -> dict:
    return next((c for c in status(twin, name).get("conditions") or () if c["type"] == type_), {})


def table_status(twin: Twin, name: str, namespace: str = "default") -> tuple[str, str, str]:
    """READY, STATUS and RESTARTS as ``kubectl get pods`` shows them."""
    row = pod_row(pod(twin, name, namespace), twin.clock.now())
    return row[1], row[2], row[3].split(" ")[0]


def events(twin: Twin, name: str, reason: str | None = None, namespace: str = "default") -> list[dict]:
    found = [e for e in twin.store.list("events", namespace)[0] if e["involvedObject"]["name"] == name
             and (reason is None or e["reason"] == reason)]
    return sorted(found, key=lambda e: (e["firstTimestamp"], e["metadata"]["name"]))


def messages(twin: Twin, name: str, reason: str | None = None) -> list[str]:
    return [e["message"] for e in events(twin, name, reason)]


def log_text(twin: Twin, name: str, container_name: str, *, previous: bool = False) -> str:
    return "".join(line.text + "\n" for line in twin.logs.lines("default", name, container_name, previous=previous))


def warp_until(twin: Twin, done: Callable[[], bool], limit: float, step: float = 1.0) -> float:
    """Warp in steps until ``done()``; the simulated seconds it took (fails the test after ``limit``)."""
    waited = 0.0
    while not done():
        assert waited < limit, f"not reached within {limit} simulated seconds"
        twin.warp(step)
        waited += step
    return waited


def set_node_ready(twin: Twin, node: str, ready: bool) -> None:
    """Flip the node's Ready condition, as the node lifecycle controller does when its kubelet stops."""
    nodes = twin.api.catalog.lookup("", "v1", "nodes")
    obj = clone(twin.api.get(nodes, "", node))
    for cond in obj["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"] = "True" if ready else "Unknown"
            cond["reason"] = "KubeletReady" if ready else "NodeStatusUnknown"
    twin.api.update(nodes, "", node, obj, twin.admin_ctx, subresource="status")
