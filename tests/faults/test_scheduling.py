"""The scheduling and capacity faults on a running hotel reservation application: each injected through the official
client leaves the workload's new pods without a place (or, for the quota, without a pod at all), fires its expected
alerts, and once removed every alert clears and the workload runs again.

One application serves the whole module, a fault at a time (``bench.py``).
"""

from __future__ import annotations

import pytest
from kubernetes import client as k8s

from pytest_itbench.faults import get

from .bench import Bench

LABEL = "io.kompose.service"


@pytest.fixture(scope="module")
def hotel(tmp_path_factory):
    bench = Bench.start("hotel-reservation", tmp_path_factory.mktemp("hotel"))
    yield bench
    bench.close()


def events(bench: Bench, name: str) -> list[str]:
    found = k8s.CoreV1Api(bench.api).list_namespaced_event(bench.namespace,
                                                           field_selector=f"involvedObject.name={name}").items
    return [f"{e.reason}: {e.message}" for e in found]


def pending(bench: Bench, workload: str) -> dict:
    pods = [p for p in bench.pods(workload, LABEL) if p["status"]["phase"] == "Pending"]
    assert len(pods) == 1 and not pods[0]["spec"].get("nodeName"), [p["metadata"]["name"] for p in pods]
    return pods[0]


def cycle(bench: Bench, fault: str, workload: str, check=None, **args) -> None:
    record = bench.inject(fault, workload, **args)
    try:
        bench.until_firing(get(fault).expected_alerts, workload)
        if check is not None:
            check()
    finally:
        bench.remove(record)
    bench.until_clear()
    pods = bench.pods(workload, LABEL)
    assert pods and all(p["status"]["phase"] == "Running" for p in pods)


def test_cordoned_nodes(hotel):
    nodes = k8s.CoreV1Api(hotel.api)

    def check():
        assert all(n.spec.unschedulable for n in nodes.list_node().items)
        pod = pending(hotel, "geo")
        assert any("node(s) were unschedulable" in e for e in events(hotel, pod["metadata"]["name"]))
        # The running pods of other services stay where they are: a cordon only keeps new pods off.
        assert all(p["status"]["phase"] == "Running" for p in hotel.pods("search", LABEL))
    cycle(hotel, "cordoned-kubernetes-worker-node", "geo", check)
    assert not any(n.spec.unschedulable for n in nodes.list_node().items)


def test_nonexistent_node(hotel):
    def check():
        pod = pending(hotel, "rate")
        assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "worker-node-retired"}
        assert any("didn't match Pod's node affinity/selector" in e for e in events(hotel, pod["metadata"]["name"]))
    cycle(hotel, "nonexistent-kubernetes-workload-node", "rate", check)
    assert "nodeSelector" not in hotel.deployment("rate")["spec"]["template"]["spec"]


def test_unschedulable_anti_affinity(hotel):
    def check():
        pod = pending(hotel, "profile")
        assert any("didn't match pod anti-affinity rules" in e for e in events(hotel, pod["metadata"]["name"]))
    cycle(hotel, "unschedulable-kubernetes-workload-pod-anti-affinity-rule", "profile", check)
    assert "affinity" not in hotel.deployment("profile")["spec"]["template"]["spec"]


def test_insufficient_quota_refuses_the_new_pod(hotel):
    def check():
        assert hotel.pods("search", LABEL) == []
        replica_sets = k8s.AppsV1Api(hotel.api).list_namespaced_replica_set(
            hotel.namespace, label_selector=f"{LABEL}=search").items
        messages = [m for rs in replica_sets for m in events(hotel, rs.metadata.name)]
        assert any("exceeded quota: hotel-reservation-resource-quota" in m for m in messages), messages
    cycle(hotel, "insufficient-kubernetes-resource-quota", "search", check)
    assert k8s.CoreV1Api(hotel.api).list_namespaced_resource_quota(hotel.namespace).items == []


def test_priority_preemption(hotel):
    def check():
        pod = pending(hotel, "reservation")
        assert pod["spec"]["priority"] == -1000 and pod["spec"]["priorityClassName"] == "low-priority"
        batch = [p for p in k8s.CoreV1Api(hotel.api).list_namespaced_pod(
            hotel.namespace, label_selector="app.kubernetes.io/name=eviction-pods").items]
        assert len(batch) == 3 and all(p.status.phase == "Running" for p in batch)
        preempted = [m for rs in k8s.AppsV1Api(hotel.api).list_namespaced_replica_set(
            hotel.namespace, label_selector=f"{LABEL}=reservation").items for m in events(hotel, rs.metadata.name)]
        assert any("Insufficient cpu" in e for e in events(hotel, pod["metadata"]["name"])), preempted
    cycle(hotel, "priority-kubernetes-workload-priority-preemption", "reservation", check)
    assert k8s.AppsV1Api(hotel.api).list_namespaced_deployment(
        hotel.namespace, label_selector="app.kubernetes.io/name=eviction-pods").items == []
    assert "priorityClassName" not in hotel.deployment("reservation")["spec"]["template"]["spec"]
