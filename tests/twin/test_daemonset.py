"""The DaemonSet controller, run alone: the tests play kube-scheduler (binding pods to the node their affinity
pins them to) and the kubelet (pods Running and Ready, or failed)."""

from __future__ import annotations

import pytest
import yaml

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.store import clone

from .kubelet_standin import bind_pinned, events, finish, messages, names, pods, reap, run_all

START = 1_700_000_000.0


def make_twin(nodes: int = 3, seed: int = 4) -> Twin:
    return Twin(seed=seed, nodes=nodes, start_time=START, controllers={"daemonset"})


def manifest(name: str = "agent", **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "agent", "image": "fluentd:1.16"}]}},
                     **spec}}


def daemonsets(twin: Twin):
    return twin.api.catalog.lookup("apps", "v1", "daemonsets")


def change(twin: Twin, edit, name: str = "agent") -> None:
    obj = clone(twin.api.get(daemonsets(twin), "default", name))
    edit(obj["spec"])
    twin.api.update(daemonsets(twin), "default", name, obj, twin.admin_ctx)


def new_image(spec: dict) -> None:
    spec["template"]["spec"]["containers"][0]["image"] = "fluentd:1.17"


def edit_node(twin: Twin, name: str, edit) -> None:
    nodes = twin.api.catalog.lookup("", "v1", "nodes")
    node = clone(twin.api.get(nodes, "", name))
    edit(node)
    twin.api.update(nodes, "", name, node, twin.admin_ctx)


def status(twin: Twin, name: str = "agent") -> dict:
    return twin.store.get("daemonsets.apps", "default", name)["status"]


def node_of(pod: dict) -> str:
    term = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]
    return term["matchFields"][0]["values"][0]


def placement(twin: Twin) -> dict[str, str]:
    """node -> pod, for the pods not being deleted."""
    return {node_of(p): p["metadata"]["name"] for p in pods(twin) if not p["metadata"].get("deletionTimestamp")}


def terminating(twin: Twin) -> list[str]:
    return [p["metadata"]["name"] for p in pods(twin) if p["metadata"].get("deletionTimestamp")]


def settle(twin: Twin, seconds: int = 1) -> None:
    """Let the controller act, then schedule and start what it created."""
    for _ in range(seconds):
        twin.warp(1)
        reap(twin)
        bind_pinned(twin)
        run_all(twin)
    twin.warp(1)


def test_one_pod_per_node_pinned_by_affinity_with_the_daemon_tolerations():
    twin = make_twin()
    twin.api.create(daemonsets(twin), "default", manifest(), twin.admin_ctx)
    twin.warp(1)
    assert sorted(placement(twin)) == ["itbench-worker", "itbench-worker2", "itbench-worker3"]
    pod = pods(twin)[0]
    ds = twin.store.get("daemonsets.apps", "default", "agent")
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    labels = pod["metadata"]["labels"]
    assert labels["app"] == "agent" and labels["pod-template-generation"] == "1"
    revision = twin.store.get("controllerrevisions.apps", "default", f"agent-{labels['controller-revision-hash']}")
    assert revision["revision"] == 1 and revision["metadata"]["labels"]["controller-revision-hash"] == \
        labels["controller-revision-hash"]
    assert [(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]] == [
        ("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule")]
    assert all(t["operator"] == "Exists" and "tolerationSeconds" not in t for t in pod["spec"]["tolerations"])
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert pod["metadata"]["name"].startswith("agent-") and len(pod["metadata"]["name"]) == len("agent-") + 5
    assert status(twin) == {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                            "numberReady": 0, "observedGeneration": 1, "updatedNumberScheduled": 3,
                            "numberUnavailable": 3}
    assert sorted(messages(twin, "agent")) == sorted(f"Created pod: {name}" for name in names(twin))
    settle(twin)
    assert status(twin) == {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                            "numberReady": 3, "observedGeneration": 1, "updatedNumberScheduled": 3,
                            "numberAvailable": 3}


def test_pods_follow_nodes_joining_leaving_and_tainted():
    twin = make_twin()
    twin.api.create(daemonsets(twin), "default", manifest(), twin.admin_ctx)
    settle(twin)
    twin.add_node()
    twin.warp(1)
    assert "itbench-worker4" in placement(twin)
    assert status(twin)["desiredNumberScheduled"] == 4

    # A NoExecute taint the pods do not tolerate evicts them; a NoSchedule one keeps the pod that runs there.
    edit_node(twin, "itbench-worker2", lambda n: n["spec"].update(
        taints=[{"key": "dedicated", "value": "db", "effect": "NoExecute"}]))
    edit_node(twin, "itbench-worker3", lambda n: n["spec"].update(
        taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]))
    twin.warp(1)
    assert sorted(placement(twin)) == ["itbench-worker", "itbench-worker3", "itbench-worker4"]
    assert len(terminating(twin)) == 1
    assert status(twin)["numberMisscheduled"] == 2, "the evicted pod counts until its kubelet has stopped it"
    reap(twin)
    twin.warp(1)
    st = status(twin)
    assert (st["desiredNumberScheduled"], st["numberMisscheduled"]) == (2, 1)

    # Cordoning (the unschedulable taint) does not move daemon pods.
    edit_node(twin, "itbench-worker", lambda n: (n["spec"].update(unschedulable=True, taints=[
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])))
    twin.warp(1)
    assert "itbench-worker" in placement(twin) and status(twin)["desiredNumberScheduled"] == 2

    # Untainting brings the pod back; a node that leaves before its pod was scheduled takes the pod with it.
    edit_node(twin, "itbench-worker2", lambda n: n["spec"].pop("taints"))
    twin.warp(1)
    assert "itbench-worker2" in placement(twin)
    twin.api.delete(twin.api.catalog.lookup("", "v1", "nodes"), "", "itbench-worker2", DeleteOptions(),
                    twin.admin_ctx)
    twin.warp(1)
    assert "itbench-worker2" not in placement(twin)
    assert status(twin)["desiredNumberScheduled"] == 2


def test_node_selector_limits_the_nodes_and_follows_labels():
    twin = make_twin()
    spec = manifest()
    spec["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    twin.api.create(daemonsets(twin), "default", spec, twin.admin_ctx)
    twin.warp(1)
    assert placement(twin) == {}
    edit_node(twin, "itbench-worker3", lambda n: n["metadata"]["labels"].update(disk="ssd"))
    twin.warp(1)
    assert list(placement(twin)) == ["itbench-worker3"]
    edit_node(twin, "itbench-worker3", lambda n: n["metadata"]["labels"].pop("disk"))
    twin.warp(1)
    assert placement(twin) == {} and status(twin)["desiredNumberScheduled"] == 0


def test_rolling_update_with_max_unavailable_replaces_that_many_nodes_at_a_time():
    twin = make_twin(nodes=4)
    twin.api.create(daemonsets(twin), "default",
                    manifest(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}),
                    twin.admin_ctx)
    settle(twin)
    old = {p["metadata"]["name"] for p in pods(twin)}
    change(twin, new_image)
    twin.warp(1)
    assert len(terminating(twin)) == 2 and names(twin) == sorted(old), "two old pods stop at once"
    reap(twin)
    twin.warp(1)
    fresh = [p for p in pods(twin) if p["metadata"]["name"] not in old]
    assert len(fresh) == 2 and len([p for p in pods(twin) if p["metadata"]["name"] in old]) == 2
    assert all(p["metadata"]["labels"]["pod-template-generation"] == "2" for p in fresh)
    twin.warp(3)
    assert terminating(twin) == [], "the other two wait until the new pods are available"
    settle(twin, 4)
    assert not old & {p["metadata"]["name"] for p in pods(twin)}
    st = status(twin)
    assert (st["updatedNumberScheduled"], st["numberAvailable"], st["observedGeneration"]) == (4, 4, 2)
    assert len(twin.store.list("controllerrevisions.apps", "default")[0]) == 2


def test_rolling_update_with_max_surge_starts_the_new_pod_before_removing_the_old_one():
    twin = make_twin(nodes=2)
    twin.api.create(daemonsets(twin), "default", manifest(updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}), twin.admin_ctx)
    settle(twin)
    old = {p["metadata"]["name"]: node_of(p) for p in pods(twin)}
    change(twin, new_image)
    twin.warp(1)
    current = {p["metadata"]["name"]: node_of(p) for p in pods(twin)}
    assert len(current) == 3 and set(old) < set(current), "one new pod beside the old ones"
    (surged,) = set(current) - set(old)
    twin.warp(3)
    assert terminating(twin) == [], "both old pods run while the new one is not available"
    bind_pinned(twin)
    run_all(twin)
    twin.warp(1)
    assert [old[g] for g in terminating(twin)] == [current[surged]], "the old pod beside the new one goes"
    settle(twin, 4)
    assert not set(old) & {p["metadata"]["name"] for p in pods(twin)} and len(pods(twin)) == 2


def test_on_delete_leaves_old_pods_until_they_are_deleted():
    twin = make_twin(nodes=2)
    twin.api.create(daemonsets(twin), "default", manifest(updateStrategy={"type": "OnDelete"}), twin.admin_ctx)
    settle(twin)
    before = sorted(names(twin))
    change(twin, new_image)
    settle(twin, 3)
    assert sorted(names(twin)) == before
    assert "updatedNumberScheduled" not in status(twin), "none is updated (Go leaves the zero out)"


def test_a_failed_daemon_pod_is_replaced():
    twin = make_twin(nodes=1)
    twin.api.create(daemonsets(twin), "default", manifest(), twin.admin_ctx)
    settle(twin)
    (first,) = names(twin)
    finish(twin, first, exit_code=1)
    twin.warp(1)
    assert first not in names(twin) and len(names(twin)) == 1
    assert ("Warning", "FailedDaemonPod",
            f"Found failed daemon pod default/{first} on node itbench-worker, will try to kill it") in events(twin,
                                                                                                            "agent")
    assert f"Deleted pod: {first}" in messages(twin, "agent")


def test_the_same_seed_and_actions_give_the_same_daemonset():
    def scenario() -> list:
        twin = make_twin(seed=21)
        twin.api.create(daemonsets(twin), "default", manifest(), twin.admin_ctx)
        settle(twin)
        change(twin, new_image)
        settle(twin, 4)
        return [[(p["metadata"]["name"], p["metadata"]["uid"], node_of(p)) for p in pods(twin)], status(twin),
                events(twin, "agent")]

    assert scenario() == scenario()


@pytest.fixture
def twin():
    """For kubectl: a clock at wall time, which the twin's certificates are valid for."""
    with Twin(seed=6, nodes=2, controllers={"daemonset"}) as t:
        yield t


def test_kubectl_rollout_status_and_history(twin, kubectl):
    kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest()))
    twin.warp(1)
    assert kubectl("rollout", "status", "ds/agent", "--watch=false") == \
        'Waiting for daemon set "agent" rollout to finish: 0 of 2 updated pods are available...\n'
    settle(twin)
    assert kubectl("rollout", "status", "ds/agent", "--watch=false") == 'daemon set "agent" successfully rolled out\n'
    assert kubectl("get", "ds", "agent", "--no-headers").split()[:6] == ["agent", "2", "2", "2", "2", "2"]
    kubectl("set", "image", "ds/agent", "agent=fluentd:1.17")
    twin.warp(1)
    reap(twin)
    twin.warp(1)
    assert kubectl("rollout", "status", "ds/agent", "--watch=false") == \
        'Waiting for daemon set "agent" rollout to finish: 1 out of 2 new pods have been updated...\n'
    settle(twin, 3)
    history = kubectl("rollout", "history", "ds/agent").splitlines()
    assert history[0] == "daemonset.apps/agent " and [line.split()[0] for line in history[2:] if line] == ["1", "2"]
    assert kubectl("rollout", "undo", "ds/agent") == "daemonset.apps/agent rolled back\n"
    settle(twin, 3)
    assert {p["spec"]["containers"][0]["image"] for p in pods(twin)} == {"fluentd:1.16"}
