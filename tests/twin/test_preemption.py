"""Preemption: a pending pod of higher priority evicts lower-priority pods, as kube-scheduler's DefaultPreemption.

Only the scheduler runs. Its victims are deleted gracefully, so they stay
Terminating until the kubelet would finish them; the tests finish them
(deletion with no grace period) where the kubelet would.
"""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions

START = 1_800_000_000


def res(twin: Twin, plural: str, group: str = ""):
    return twin.api.catalog.lookup(group, "v1", plural)


def setup(nodes: int, cpu: str = "2") -> Twin:
    twin = Twin(seed=4, nodes=nodes, start_time=START, controllers={"scheduler"})
    for name, value, policy in (("low", 100, None), ("mid", 500, None), ("high", 1000, None),
                                ("polite", 1000, "Never")):
        body = {"metadata": {"name": name}, "value": value}
        if policy:
            body["preemptionPolicy"] = policy
        twin.api.create(res(twin, "priorityclasses", "scheduling.k8s.io"), None, body, twin.admin_ctx)
    nodes_res = res(twin, "nodes")
    for node in twin.store.list("nodes")[0]:
        current = twin.api.get(nodes_res, "", node["metadata"]["name"])
        current["status"]["allocatable"]["cpu"] = cpu
        twin.api.update(nodes_res, None, node["metadata"]["name"], current, twin.admin_ctx)
    return twin


def create_pod(twin: Twin, name: str, priority_class: str, cpu: str, node: str | None = None,
               labels: dict | None = None) -> dict:
    spec = {"priorityClassName": priority_class,
            "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": name, "labels": labels or {}},
                                                          "spec": spec}, twin.admin_ctx)


def pod(twin: Twin, name: str) -> dict | None:
    return twin.store.get("pods", "default", name)


def events(twin: Twin, name: str, reason: str) -> list[dict]:
    return [e for e in twin.store.list("events", "default")[0]
            if e["involvedObject"]["name"] == name and e["reason"] == reason]


def scheduled_message(twin: Twin, name: str) -> str:
    return next(c for c in pod(twin, name)["status"]["conditions"] if c["type"] == "PodScheduled")["message"]


def finish_deletion(twin: Twin, name: str) -> None:
    """What the kubelet does once a deleted pod's containers stopped."""
    twin.api.delete(res(twin, "pods"), "default", name, DeleteOptions(grace_period=0), twin.admin_ctx)


def test_a_higher_priority_pod_preempts_a_lower_one_and_lands_on_its_node():
    with setup(1) as twin:
        create_pod(twin, "batch-a", "low", "1")
        create_pod(twin, "batch-b", "low", "1")
        twin.warp(1)
        preemptor = create_pod(twin, "checkout", "high", "1")
        twin.warp(1)

        victims = [n for n in ("batch-a", "batch-b") if pod(twin, n)["metadata"].get("deletionTimestamp")]
        assert len(victims) == 1  # one victim is enough
        victim = pod(twin, victims[0])
        disruption = next(c for c in victim["status"]["conditions"] if c["type"] == "DisruptionTarget")
        assert (disruption["status"], disruption["reason"], disruption["message"]) == (
            "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
        (preempted,) = events(twin, victims[0], "Preempted")
        assert preempted["message"] == f"Preempted by pod {preemptor['metadata']['uid']} on node itbench-worker"
        assert (preempted["type"], preempted["action"], preempted["reportingComponent"]) == (
            "Normal", "Preempting", "default-scheduler")
        assert preempted["related"]["name"] == "checkout"

        waiting = pod(twin, "checkout")
        assert waiting["status"]["nominatedNodeName"] == "itbench-worker"
        assert waiting["spec"].get("nodeName") is None
        assert scheduled_message(twin, "checkout") == "0/1 nodes are available: 1 Insufficient cpu."

        twin.warp(3)  # the victim is still terminating: the preemptor waits rather than preempting again
        assert scheduled_message(twin, "checkout") == ("0/1 nodes are available: 1 Insufficient cpu. preemption: "
                                                       "not eligible due to a terminating pod on the nominated node.")
        create_pod(twin, "batch-c", "low", "1")  # a lower-priority newcomer must not take the freed room
        finish_deletion(twin, victims[0])
        twin.warp(2)
        assert pod(twin, "checkout")["spec"].get("nodeName") == "itbench-worker"
        assert pod(twin, "batch-c")["spec"].get("nodeName") is None


def test_preemption_policy_never_waits_instead():
    with setup(1) as twin:
        create_pod(twin, "batch-a", "low", "2")
        twin.warp(1)
        create_pod(twin, "report", "polite", "1")
        twin.warp(1)
        assert pod(twin, "batch-a")["metadata"].get("deletionTimestamp") is None
        assert scheduled_message(twin, "report") == ("0/1 nodes are available: 1 Insufficient cpu. preemption: not "
                                                     "eligible due to preemptionPolicy=Never.")
        (event,) = events(twin, "report", "FailedScheduling")
        assert event["message"] == scheduled_message(twin, "report")


def test_victims_are_the_lowest_priority_pods_even_when_more_of_them_go():
    with setup(2) as twin:
        create_pod(twin, "cache", "mid", "2", node="itbench-worker")
        create_pod(twin, "job-1", "low", "1", node="itbench-worker2")
        create_pod(twin, "job-2", "low", "1", node="itbench-worker2")
        twin.warp(1)
        create_pod(twin, "api", "high", "2")
        twin.warp(1)
        assert pod(twin, "cache")["metadata"].get("deletionTimestamp") is None
        assert all(pod(twin, n)["metadata"].get("deletionTimestamp") for n in ("job-1", "job-2"))
        assert pod(twin, "api")["status"]["nominatedNodeName"] == "itbench-worker2"


def test_a_pod_protected_by_a_disruption_budget_is_spared_when_another_will_do():
    with setup(2) as twin:
        create_pod(twin, "ledger", "low", "2", node="itbench-worker", labels={"app": "ledger"})
        create_pod(twin, "scratch", "low", "2", node="itbench-worker2", labels={"app": "scratch"})
        twin.warp(1)
        pdbs = res(twin, "poddisruptionbudgets", "policy")
        twin.api.create(pdbs, "default", {"metadata": {"name": "ledger"}, "spec": {
            "minAvailable": 1, "selector": {"matchLabels": {"app": "ledger"}}}}, twin.admin_ctx)
        budget = twin.api.get(pdbs, "default", "ledger")
        budget["status"] = {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1,
                            "observedGeneration": 1}
        twin.api.update(pdbs, "default", "ledger", budget, twin.admin_ctx, subresource="status")
        create_pod(twin, "api", "high", "2")
        twin.warp(1)
        assert pod(twin, "ledger")["metadata"].get("deletionTimestamp") is None
        assert pod(twin, "scratch")["metadata"].get("deletionTimestamp") is not None
        assert pod(twin, "api")["status"]["nominatedNodeName"] == "itbench-worker2"


def test_what_preemption_could_not_do_is_said_node_by_node():
    with setup(3) as twin:
        create_pod(twin, "same-1", "high", "2", node="itbench-worker")
        create_pod(twin, "same-2", "high", "2", node="itbench-worker2")
        nodes = res(twin, "nodes")
        tainted = twin.api.get(nodes, "", "itbench-worker3")
        tainted["spec"]["taints"] = [{"key": "maintenance", "effect": "NoSchedule"}]
        twin.api.update(nodes, None, "itbench-worker3", tainted, twin.admin_ctx)
        twin.warp(1)
        create_pod(twin, "api", "high", "2")
        twin.warp(1)
        assert scheduled_message(twin, "api") == (
            "0/3 nodes are available: 1 node(s) had untolerated taint {maintenance: }, 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption "
            "victims found for incoming pod.")
        assert "nominatedNodeName" not in pod(twin, "api")["status"]
