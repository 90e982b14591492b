"""PodDisruptionBudget status from the disruption controller, and evictions (kubectl drain) that obey it."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.errors import TooManyRequests
from tests.twin.node_agent import create, events, patch, ready_pod, report

T0 = 1_700_000_000
PDBS = "poddisruptionbudgets.policy"


def _twin(start_time: float | None = T0) -> Twin:
    return Twin(seed=17, nodes=2, start_time=start_time, controllers={"disruption"})


@pytest.fixture
def twin():
    """For kubectl: the disruption controller alone, on a clock near wall time."""
    with _twin(start_time=None) as t:
        yield t


def _pdb(twin, name="web", selector=None, **spec) -> dict:
    return create(twin, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"selector": {"matchLabels": {"app": "web"}} if selector is None else selector,
                                  **spec}})


def _status(twin, name="web") -> dict:
    return twin.store.get(PDBS, "default", name)["status"]


def _counts(twin, name="web") -> tuple[int, int, int, int]:
    status = _status(twin, name)
    return (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"],
            status["disruptionsAllowed"])


def _allowed_condition(twin, name="web") -> tuple[str, str, str]:
    cond = next(c for c in _status(twin, name)["conditions"] if c["type"] == "DisruptionAllowed")
    return cond["status"], cond["reason"], cond["message"]


def _deployment_pods(twin, replicas: int, nodes=("itbench-worker",)) -> dict:
    """A Deployment, its ReplicaSet and its pods, as the workload controllers would have made them, all Ready."""
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}
    deployment = create(twin, {"apiVersion": "apps/v1", "kind": "Deployment",
                               "metadata": {"name": "web", "namespace": "default"},
                               "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                                        "template": template}})
    replica_set = create(twin, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-5d8f7c6b9", "namespace": "default", "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": deployment["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template}})
    for i in range(replicas):
        ready_pod(twin, f"web-{i}", labels=labels, ip=f"10.244.1.{i + 2}", owner=replica_set,
                  node=nodes[i % len(nodes)])
    return deployment


def test_min_available_counts_ready_pods_and_sets_the_condition():
    with _twin() as twin:
        _deployment_pods(twin, 3)
        pdb = _pdb(twin, minAvailable=2)
        twin.warp(1)
        assert _counts(twin) == (3, 2, 3, 1)
        status = _status(twin)
        assert status["observedGeneration"] == pdb["metadata"]["generation"]
        assert _allowed_condition(twin) == ("True", "SufficientPods", "")
        report(twin, "web-0", ip="10.244.1.2", ready=False)
        twin.warp(1)
        assert _counts(twin) == (2, 2, 3, 0)
        assert _allowed_condition(twin) == ("False", "InsufficientPods", "")


def test_percentages_and_max_unavailable_count_against_the_controllers_scale():
    with _twin() as twin:
        _deployment_pods(twin, 3)
        _pdb(twin, "half", minAvailable="50%")
        _pdb(twin, "one-down", maxUnavailable=1)
        twin.warp(1)
        assert _counts(twin, "half") == (3, 2, 3, 1)  # 50% of 3, rounded up
        assert _counts(twin, "one-down") == (3, 2, 3, 1)
        patch(twin, "apps", "v1", "deployments", "web", lambda d: d["spec"].update(replicas=5))
        twin.warp(1)
        # Five pods expected, three there: a budget that counts the scale allows nothing.
        assert _counts(twin, "one-down") == (3, 4, 5, 0)
        assert _counts(twin, "half") == (3, 3, 5, 0)


def test_budgets_that_select_nothing_or_unmanaged_pods_say_so():
    with _twin() as twin:
        _pdb(twin, "empty", selector={"matchLabels": {"app": "nothing"}}, minAvailable=1)
        ready_pod(twin, "loner", labels={"app": "web"}, ip="10.244.1.9")
        _pdb(twin, minAvailable="100%")
        twin.warp(1)
        assert _counts(twin, "empty") == (0, 1, 0, 0)
        assert events(twin, name="empty", reason="NoPods")[0]["message"] == "No matching pods found"
        (unmanaged,) = events(twin, name="web", reason="UnmanagedPods")
        assert unmanaged["message"].startswith(
            "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: "
            "web,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged.")
        assert unmanaged["source"] == {"component": "controllermanager"}


def test_a_budget_over_pods_of_a_controller_without_a_scale_fails_safe():
    with _twin() as twin:
        labels = {"app": "web"}
        daemons = create(twin, {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                "metadata": {"name": "agent", "namespace": "default"},
                                "spec": {"selector": {"matchLabels": labels}, "template": {
                                    "metadata": {"labels": labels},
                                    "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}})
        ready_pod(twin, "agent-x7k2q", labels=labels, ip="10.244.1.9", owner=daemons)
        _pdb(twin, maxUnavailable=1)
        twin.warp(1)
        assert _status(twin)["disruptionsAllowed"] == 0
        assert _allowed_condition(twin) == ("False", "SyncFailed", 'found no controllers for pod "agent-x7k2q"')
        assert events(twin, name="web", reason="CalculateExpectedPodCountFailed")[0]["message"] == \
            'Failed to calculate the number of expected pods: found no controllers for pod "agent-x7k2q"'


def test_evictions_spend_the_budget_and_are_refused_once_it_is_spent():
    with _twin() as twin:
        _deployment_pods(twin, 3)
        _pdb(twin, minAvailable=2)
        twin.warp(1)
        twin.server.subresources.evict("default", "web-0", {}, twin.admin_ctx)
        with pytest.raises(TooManyRequests):
            twin.server.subresources.evict("default", "web-1", {}, twin.admin_ctx)
        twin.warp(1)
        # web-0 is terminating (no kubelet here to finish it): not healthy, and no longer a disruption to track.
        assert _counts(twin) == (2, 2, 3, 0)
        assert "disruptedPods" not in _status(twin)


def test_an_evicted_pod_that_is_not_deleted_counts_again_after_two_minutes():
    with _twin() as twin:
        _deployment_pods(twin, 3)
        _pdb(twin, minAvailable=1)
        twin.warp(1)
        stamp = twin.clock.timestamp()
        patch(twin, "policy", "v1", "poddisruptionbudgets", "web",
              lambda p: p["status"].update(disruptedPods={"web-0": stamp}, disruptionsAllowed=1),
              subresource="status")
        twin.warp(1)
        assert _counts(twin) == (2, 1, 3, 1) and _status(twin)["disruptedPods"] == {"web-0": stamp}
        twin.warp(125)
        assert _counts(twin) == (3, 1, 3, 2) and "disruptedPods" not in _status(twin)
        (late,) = events(twin, name="web-0", reason="NotDeleted")
        assert late["message"] == "Pod was expected by PDB default/default to be deleted but it wasn't"


def test_kubectl_drain_is_refused_by_the_budget_then_allowed_when_it_has_room(twin, kubectl):
    _deployment_pods(twin, 3, nodes=("itbench-worker", "itbench-worker", "itbench-worker2"))
    _pdb(twin, minAvailable=3)
    twin.warp(1)
    assert kubectl("get", "pdb", "web", "--no-headers").split()[1:4] == ["3", "N/A", "0"]
    refused = kubectl.fails("drain", "itbench-worker", "--grace-period=0", "--timeout=2s")
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr
    assert twin.store.get("pods", "default", "web-0") is not None

    kubectl("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    twin.warp(1)
    assert kubectl("get", "pdb", "web", "--no-headers").split()[1:4] == ["1", "N/A", "2"]
    drained = kubectl("drain", "itbench-worker", "--grace-period=0", "--timeout=20s")
    assert "evicting pod default/web-0" in drained and "node/itbench-worker drained" in drained
    assert [p["metadata"]["name"] for p in twin.store.list("pods", "default")[0]] == ["web-2"]
