"""The pod-template faults on a running astronomy shop: each injected through the official client fires its
expected alerts with the cause visible in the pods' status, and once removed every alert clears.

One shop serves the whole module, a fault at a time (``bench.py``).
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from pytest_itbench.faults import get

from .bench import Bench

LABEL = "opentelemetry.io/name"
GROUP, VERSION = "chaos-mesh.org", "v1alpha1"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    bench = Bench.start("astronomy-shop", tmp_path_factory.mktemp("shop"))
    yield bench
    bench.close()


def newest(bench: Bench, workload: str) -> dict:
    return max(bench.pods(workload, LABEL), key=lambda p: p["metadata"]["creationTimestamp"])


def status_of(pod: dict, name: str, init: bool = False) -> dict:
    key = "initContainerStatuses" if init else "containerStatuses"
    return next(s for s in pod["status"].get(key) or () if s["name"] == name)


def cycle(bench: Bench, fault: str, workload: str, check=None, **args) -> None:
    """Inject, see the fault's expected alerts fire about the workload, check the evidence, remove, see all clear."""
    record = bench.inject(fault, workload, **args)
    try:
        bench.until_firing(get(fault).expected_alerts, workload)
        if check is not None:
            check(newest(bench, workload))
    finally:
        bench.remove(record)
    bench.until_clear()
    assert all(p["status"]["phase"] == "Running" for p in bench.pods(workload, LABEL))


def test_crashing_init_container(shop):
    def check(pod):
        init = status_of(pod, "verify-config", init=True)
        assert init["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert init["lastState"]["terminated"]["exitCode"] == 1
        assert status_of(pod, "ad")["state"]["waiting"]["reason"] == "PodInitializing"
        assert pod["status"]["phase"] == "Pending"
    cycle(shop, "crashing-kubernetes-workload-init-container", "ad", check)


def test_hanging_init_container(shop):
    def check(pod):
        assert "running" in status_of(pod, "verify-config", init=True)["state"]
        assert status_of(pod, "email")["state"]["waiting"]["reason"] == "PodInitializing"
    cycle(shop, "hanging-kubernetes-workload-init-container", "email", check)


def test_invalid_command(shop):
    def check(pod):
        status = status_of(pod, "currency")
        assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert status["restartCount"] >= 2
    cycle(shop, "invalid-kubernetes-workload-container-command", "currency", check)
    spec = shop.deployment("currency")["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in spec  # remove() put the image's own entrypoint back


def test_insufficient_memory_is_oom_killed(shop):
    def check(pod):
        status = status_of(pod, "cart")
        assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
        assert pod["spec"]["containers"][0]["resources"]["limits"]["memory"] == "20Mi"
    cycle(shop, "insufficient-kubernetes-workload-container-resources", "cart", check, container="cart",
          memory="20Mi")
    assert shop.deployment("cart")["spec"]["template"]["spec"]["containers"][0]["resources"] == \
        {"limits": {"memory": "160Mi"}}


def test_unsupported_architecture_image(shop):
    def check(pod):
        status = status_of(pod, "quote")
        assert status["image"].endswith("arm64v8/nginx:1.27")
        assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    cycle(shop, "unsupported-architecture-kubernetes-workload-container-image", "quote", check)


def test_nonexistent_claim(shop):
    def check(pod):
        events = k8s.CoreV1Api(shop.api).list_namespaced_event(
            shop.namespace, field_selector=f"involvedObject.name={pod['metadata']['name']}").items
        assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
        assert any('persistentvolumeclaim "shipping-data" not found' in (e.message or "") for e in events), \
            [e.message for e in events]
    cycle(shop, "nonexistent-kubernetes-workload-persistent-volume-claim", "shipping", check)


def test_unassigned_limits_let_a_stressor_drain_the_node_and_the_kubelet_evicts(shop):
    """Without its limit, a memory stressor larger than the node (ITBench's scenario 41 pairs the fault with
    stress) takes the node below the kubelet's memory.available<100Mi threshold: the kubelet evicts the pod,
    left Failed with reason Evicted, and FailedPodsDetected fires. With the limit back, the stressor gone and
    the evicted pods deleted, every alert clears."""
    record = shop.inject("unassigned-kubernetes-workload-container-resource-limits", "recommendation")
    stress = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "StressChaos",
              "metadata": {"name": "rec-memory", "namespace": shop.namespace},
              "spec": {"mode": "one", "selector": {"namespaces": [shop.namespace],
                                                   "labelSelectors": {LABEL: "recommendation"}},
                       "containerNames": ["recommendation"], "stressors": {"memory": {"workers": 1, "size": "34GB"}},
                       "duration": "10m"}}
    custom = k8s.CustomObjectsApi(shop.api)
    core = k8s.CoreV1Api(shop.api)
    try:
        shop.twin.warp(60)  # the rollout without limits
        assert "limits" not in (newest(shop, "recommendation")["spec"]["containers"][0].get("resources") or {})
        custom.create_namespaced_custom_object(GROUP, VERSION, shop.namespace, "stresschaos", stress)
        shop.until_firing(get("unassigned-kubernetes-workload-container-resource-limits").expected_alerts, None)
        evicted = [p for p in core.list_namespaced_pod(shop.namespace, label_selector=f"{LABEL}=recommendation").items
                   if p.status.reason == "Evicted"]
        assert evicted and all(p.status.phase == "Failed" for p in evicted)
        assert evicted[0].status.message.startswith("The node was low on resource: memory. Threshold quantity: 100Mi")
    finally:
        custom.delete_namespaced_custom_object(GROUP, VERSION, shop.namespace, "stresschaos", "rec-memory",
                                               _preload_content=False)
        shop.remove(record)
    shop.twin.warp(60)
    core.delete_collection_namespaced_pod(shop.namespace, field_selector="status.phase=Failed")
    pod = newest(shop, "recommendation")
    assert pod["spec"]["containers"][0]["resources"]["limits"]["memory"] == "500Mi"
    shop.until_clear()
