"""Node heartbeats, node health, cordon taints and taint-based eviction; the tests play the pod kubelet."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.controllers.node_heartbeat import KUBELET_ANNOTATION
from tests.twin.node_agent import delete, events, patch, ready_pod

T0 = 1_700_000_000
NODE = "itbench-worker"
LEASES = "leases.coordination.k8s.io"


def _twin(start_time: float | None = T0) -> Twin:
    return Twin(seed=5, nodes=2, start_time=start_time, controllers={"node-heartbeat", "node-lifecycle"})


@pytest.fixture
def twin():
    """For kubectl: the node agents alone, on a clock near wall time."""
    with _twin(start_time=None) as t:
        yield t


def _node(twin, name=NODE) -> dict:
    return twin.store.get("nodes", "", name)


def _conditions(twin, name=NODE) -> dict[str, dict]:
    return {c["type"]: c for c in _node(twin, name)["status"]["conditions"]}


def _taints(twin, name=NODE) -> list[tuple[str, str]]:
    return [(t["key"], t["effect"]) for t in _node(twin, name)["spec"].get("taints") or ()]


def _stop_kubelet(twin, name=NODE, stopped=True) -> None:
    def change(node):
        annotations = node["metadata"].setdefault("annotations", {})
        if stopped:
            annotations[KUBELET_ANNOTATION] = "stopped"
        else:
            annotations.pop(KUBELET_ANNOTATION, None)
    patch(twin, "", "v1", "nodes", name, change)


def test_the_lease_is_renewed_every_10_s_and_the_status_posted_every_5_minutes():
    with _twin() as twin:
        twin.warp(1)
        renewals = []
        for _ in range(40):
            twin.warp(1)
            renewals.append(twin.store.get(LEASES, "kube-node-lease", NODE)["spec"]["renewTime"])
        distinct = sorted(set(renewals))
        assert [parse_time(b) - parse_time(a) for a, b in zip(distinct, distinct[1:])] == [10.0] * 4
        lease = twin.store.get(LEASES, "kube-node-lease", NODE)
        assert lease["spec"]["holderIdentity"] == NODE and lease["spec"]["leaseDurationSeconds"] == 40
        assert lease["metadata"]["managedFields"][-1]["manager"] == "kubelet"

        heartbeat = _conditions(twin)["Ready"]["lastHeartbeatTime"]
        twin.warp(250)
        assert _conditions(twin)["Ready"]["lastHeartbeatTime"] == heartbeat  # nothing changed: no post
        twin.warp(60)
        ready = _conditions(twin)["Ready"]
        assert 300 <= parse_time(ready["lastHeartbeatTime"]) - parse_time(heartbeat) < 310  # checked every 10 s
        assert (ready["status"], ready["reason"], ready["message"]) == ("True", "KubeletReady",
                                                                        "kubelet is posting ready status")
        assert ready["lastTransitionTime"] != ready["lastHeartbeatTime"]


def test_a_new_node_reports_its_start_and_registration_in_events():
    with _twin() as twin:
        twin.warp(1)
        node_events = {(e["reason"], e["source"].get("component")): e for e in events(twin, name=NODE)}
        assert set(node_events) >= {("Starting", "kubelet"), ("NodeHasSufficientMemory", "kubelet"),
                                    ("NodeHasNoDiskPressure", "kubelet"), ("NodeHasSufficientPID", "kubelet"),
                                    ("NodeReady", "kubelet"), ("NodeAllocatableEnforced", "kubelet"),
                                    ("RegisteredNode", "node-controller")}
        assert node_events[("Starting", "kubelet")]["message"] == "Starting kubelet."
        assert node_events[("NodeReady", "kubelet")]["message"] == f"Node {NODE} status is now: NodeReady"
        assert node_events[("RegisteredNode", "node-controller")]["message"] == \
            f"Node {NODE} event: Registered Node {NODE} in Controller"
        # The kubelet refers to its node with the node's name as uid, as a real kubelet does.
        assert node_events[("Starting", "kubelet")]["involvedObject"]["uid"] == NODE


def test_a_deleted_lease_is_created_again():
    with _twin() as twin:
        twin.warp(5)
        delete(twin, "coordination.k8s.io", "v1", "leases", NODE, namespace="kube-node-lease")
        twin.warp(10)
        lease = twin.store.get(LEASES, "kube-node-lease", NODE)
        assert lease is not None and lease["metadata"]["ownerReferences"][0]["kind"] == "Node"


def test_a_stopped_kubelet_makes_the_node_unknown_and_its_pods_are_evicted_after_their_toleration():
    with _twin() as twin:
        ready_pod(twin, "web", labels={"app": "web"}, ip="10.244.1.5")
        ready_pod(twin, "patient", labels={"app": "patient"}, ip="10.244.1.6",
                  tolerations=[{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}])
        ready_pod(twin, "elsewhere", labels={"app": "web"}, ip="10.244.2.5", node="itbench-worker2")
        twin.warp(5)
        _stop_kubelet(twin)
        twin.warp(35)
        assert _conditions(twin)["Ready"]["status"] == "True"  # still within the 40 s grace period
        twin.warp(15)
        conditions = _conditions(twin)
        assert {t: c["status"] for t, c in conditions.items()} == {
            "MemoryPressure": "Unknown", "DiskPressure": "Unknown", "PIDPressure": "Unknown", "Ready": "Unknown"}
        assert (conditions["Ready"]["reason"], conditions["Ready"]["message"]) == (
            "NodeStatusUnknown", "Kubelet stopped posting node status.")
        assert _taints(twin) == [("node.kubernetes.io/unreachable", "NoSchedule"),
                                 ("node.kubernetes.io/unreachable", "NoExecute")]
        assert _conditions(twin, "itbench-worker2")["Ready"]["status"] == "True"
        web = twin.store.get("pods", "default", "web")
        assert next(c for c in web["status"]["conditions"] if c["type"] == "Ready")["status"] == "False"
        assert [e["message"] for e in events(twin, reason="NodeNotReady")] == [
            f"Node {NODE} status is now: NodeNotReady", "Node is not ready", "Node is not ready"]
        went_unknown = parse_time(conditions["Ready"]["lastTransitionTime"])

        twin.clock.warp_until(went_unknown + 299)
        assert not twin.store.get("pods", "default", "web")["metadata"].get("deletionTimestamp")
        twin.warp(1)
        web = twin.store.get("pods", "default", "web")
        assert web is None or web["metadata"].get("deletionTimestamp")
        (marked,) = events(twin, reason="TaintManagerEviction")
        assert marked["message"] == "Marking for deletion Pod default/web"
        assert marked["source"] == {"component": "taint-eviction-controller"}
        assert parse_time(marked["firstTimestamp"]) - went_unknown == 300
        if web is not None:
            target = next(c for c in web["status"]["conditions"] if c["type"] == "DisruptionTarget")
            assert (target["reason"], target["message"]) == ("DeletionByTaintManager",
                                                             "Taint manager: deleting due to NoExecute taint")
        for name in ("patient", "elsewhere"):  # tolerates for ever / on a healthy node
            assert not twin.store.get("pods", "default", name)["metadata"].get("deletionTimestamp")


def test_a_pod_that_does_not_tolerate_a_no_execute_taint_goes_at_once_and_a_restarted_kubelet_heals_the_node():
    with _twin() as twin:
        ready_pod(twin, "web", labels={"app": "web"}, ip="10.244.1.5")
        twin.warp(2)
        patch(twin, "", "v1", "nodes", NODE,
              lambda n: n["spec"].update(taints=[{"key": "dedicated", "value": "db", "effect": "NoExecute"}]))
        twin.warp(1)
        web = twin.store.get("pods", "default", "web")
        assert web is None or web["metadata"].get("deletionTimestamp")

        _stop_kubelet(twin)
        twin.warp(60)
        assert _conditions(twin)["Ready"]["status"] == "Unknown"
        _stop_kubelet(twin, stopped=False)
        twin.warp(1)
        ready = _conditions(twin)["Ready"]
        assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
        assert ready["lastTransitionTime"] == ready["lastHeartbeatTime"] == twin.clock.timestamp()
        assert _taints(twin) == [("dedicated", "NoExecute")]  # the user's taint stays, the controller's go
        assert len(events(twin, name=NODE, reason="Starting")) == 1  # the same event, counted twice
        assert events(twin, name=NODE, reason="Starting")[0]["count"] == 2


def test_memory_pressure_follows_the_nodes_working_set():
    with _twin() as twin:
        capacity = 32863516 * 1024
        twin.metrics.set_node_usage(NODE, cpu="1", memory=capacity - 50 * 2 ** 20)
        twin.warp(40)
        pressure = _conditions(twin)["MemoryPressure"]
        assert (pressure["status"], pressure["reason"], pressure["message"]) == (
            "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available")
        assert ("node.kubernetes.io/memory-pressure", "NoSchedule") in _taints(twin)
        assert events(twin, name=NODE, reason="NodeHasInsufficientMemory")
        twin.metrics.set_node_usage(NODE, cpu="1", memory="2Gi")
        twin.warp(40)
        assert _conditions(twin)["MemoryPressure"]["status"] == "False"
        assert _taints(twin) == []


def test_cordon_adds_the_unschedulable_taint_and_uncordon_removes_it(twin, kubectl):
    twin.warp(1)
    kubectl("cordon", NODE)
    twin.warp(1)
    (taint,) = _node(twin)["spec"]["taints"]
    assert (taint["key"], taint["effect"]) == ("node.kubernetes.io/unschedulable", "NoSchedule")
    assert taint["timeAdded"] == twin.clock.timestamp()
    assert "Taints:             node.kubernetes.io/unschedulable:NoSchedule" in kubectl("describe", "node", NODE)
    assert kubectl("get", "node", NODE, "--no-headers").split()[1] == "Ready,SchedulingDisabled"
    kubectl("uncordon", NODE)
    twin.warp(1)
    assert "taints" not in _node(twin)["spec"]
    assert "Taints:             <none>" in kubectl("describe", "node", NODE)
