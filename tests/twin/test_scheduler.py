"""The scheduler alone: placement, every unschedulable cause with kube-scheduler's words, and the repairs.

Pods are created directly through the API, as a controller would; only the
scheduler (and, for claims, the PV binder) runs, so whatever binds a pod is
the scheduler.
"""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from tests.conftest import KUBECTL, Kubectl, RawAPI

START = 1_800_000_000
PREEMPTION_NOT_HELPFUL = "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
NO_VICTIMS = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
WORKERS = ("itbench-worker", "itbench-worker2", "itbench-worker3")


def make_twin(nodes: int = 3, *extra: str, seed: int = 3) -> Twin:
    return Twin(seed=seed, nodes=nodes, start_time=START, controllers={"scheduler", *extra})


def res(twin: Twin, plural: str, group: str = "", version: str = "v1"):
    return twin.api.catalog.lookup(group, version, plural)


def create_pod(twin: Twin, name: str, *, cpu: str | None = None, memory: str | None = None, labels=None,
               namespace: str = "default", **spec) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container = {"name": "app", "image": "nginx:1.27", "resources": {"requests": requests} if requests else {}}
    body = {"metadata": {"name": name, "labels": labels or {"app": name}},
            "spec": {"containers": [container], **spec}}
    return twin.api.create(res(twin, "pods"), namespace, body, twin.admin_ctx)


def pod(twin: Twin, name: str, namespace: str = "default") -> dict:
    return twin.store.get("pods", namespace, name)


def node_of(twin: Twin, name: str) -> str | None:
    return pod(twin, name)["spec"].get("nodeName")


def scheduled_condition(twin: Twin, name: str) -> dict:
    return next(c for c in pod(twin, name)["status"]["conditions"] if c["type"] == "PodScheduled")


def events(twin: Twin, name: str, reason: str | None = None, namespace: str = "default") -> list[dict]:
    return [e for e in twin.store.list("events", namespace)[0]
            if e["involvedObject"]["name"] == name and (reason is None or e["reason"] == reason)]


def assert_unschedulable(twin: Twin, name: str, message: str) -> None:
    """The pod is Pending with PodScheduled=False, and a FailedScheduling event says the same."""
    assert node_of(twin, name) is None
    condition = scheduled_condition(twin, name)
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", message)
    failed = events(twin, name, "FailedScheduling")
    assert [e["message"] for e in failed] == [message]
    event = failed[0]
    assert event["type"] == "Warning" and event["reportingComponent"] == "default-scheduler"
    assert event["action"] == "Scheduling"


def patch_node(twin: Twin, name: str, change) -> None:
    nodes = res(twin, "nodes")
    node = twin.api.get(nodes, "", name)
    change(node)
    twin.api.update(nodes, None, name, node, twin.admin_ctx)


# ---- placement ---------------------------------------------------------------------------------------------

def test_feasible_pods_bind_spread_and_are_marked_scheduled():
    with make_twin() as twin:
        for i in range(6):
            create_pod(twin, f"web-{i}", cpu="500m", labels={"app": "web"})
        assert all(node_of(twin, f"web-{i}") is None for i in range(6))  # nothing happens between ticks
        twin.warp(1)
        placed = [node_of(twin, f"web-{i}") for i in range(6)]
        assert sorted(placed) == sorted(WORKERS * 2)  # least allocated: two per node
        condition = scheduled_condition(twin, "web-0")
        assert condition["status"] == "True" and condition["lastTransitionTime"] == twin.clock.timestamp()
        (event,) = events(twin, "web-0", "Scheduled")
        assert event["message"] == f"Successfully assigned default/web-0 to {placed[0]}"
        assert (event["type"], event["action"], event["reportingComponent"]) == ("Normal", "Binding",
                                                                                  "default-scheduler")


def test_replicas_of_a_service_spread_over_nodes_even_when_one_node_is_much_larger():
    with make_twin(2) as twin:
        twin.add_node(capacity={"cpu": "64", "memory": "256Gi"})
        twin.api.create(res(twin, "services"), "default", {"metadata": {"name": "cart"}, "spec": {
            "selector": {"app": "cart"}, "ports": [{"port": 80}]}}, twin.admin_ctx)
        for i in range(6):
            create_pod(twin, f"cart-{i}", cpu="1", memory="1Gi", labels={"app": "cart"})
            twin.warp(1)
        placed = [node_of(twin, f"cart-{i}") for i in range(6)]
        # Least allocated alone would put every replica on the large node; default topology spread limits it.
        assert len(set(placed)) == 3 and placed.count("itbench-worker3") < 6


def test_pods_bound_by_name_and_finished_pods_count_as_kube_scheduler_counts_them():
    with make_twin(1) as twin:
        twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": "pinned"}, "spec": {
            "nodeName": "itbench-worker", "containers": [{"name": "c", "image": "nginx", "resources": {
                "requests": {"cpu": "7"}}}]}}, twin.admin_ctx)
        create_pod(twin, "big", cpu="2")
        twin.warp(1)
        assert_unschedulable(twin, "big", f"0/1 nodes are available: 1 Insufficient cpu. "
                                          f"preemption: 0/1 nodes are available: 1 No preemption victims found "
                                          f"for incoming pod.")
        pods = res(twin, "pods")
        done = twin.api.get(pods, "default", "pinned")
        done["status"]["phase"] = "Succeeded"
        twin.api.update(pods, "default", "pinned", done, twin.admin_ctx, subresource="status")
        twin.warp(2)
        assert node_of(twin, "big") == "itbench-worker"


def test_the_same_seed_and_actions_place_pods_the_same_way():
    def placement(seed: int) -> list[str]:
        with make_twin(5, seed=seed) as twin:
            for i in range(20):
                create_pod(twin, f"p{i}")
            twin.warp(1)
            return [node_of(twin, f"p{i}") for i in range(20)]

    assert placement(5) == placement(5)


# ---- why a pod stays Pending, and what repairs it --------------------------------------------------------------

def test_cordoned_nodes_hold_pods_until_one_is_uncordoned():
    with make_twin() as twin:
        for name in WORKERS:
            patch_node(twin, name, lambda n: n["spec"].update(unschedulable=True))
        create_pod(twin, "api")
        twin.warp(1)
        assert_unschedulable(twin, "api", f"0/3 nodes are available: 3 node(s) were unschedulable. "
                                          f"{PREEMPTION_NOT_HELPFUL}")
        patch_node(twin, "itbench-worker2", lambda n: n["spec"].pop("unschedulable"))
        twin.warp(2)
        assert node_of(twin, "api") == "itbench-worker2"


def test_the_unschedulable_taint_and_a_node_selector_are_counted_per_node():
    with make_twin() as twin:
        patch_node(twin, "itbench-worker", lambda n: n["spec"].update(taints=[
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]))
        create_pod(twin, "api", nodeSelector={"kubernetes.io/hostname": "itbench-worker"})
        twin.warp(1)
        assert_unschedulable(twin, "api", "0/3 nodes are available: 1 node(s) had untolerated taint "
                                          "{node.kubernetes.io/unschedulable: }, 2 node(s) didn't match Pod's node "
                                          f"affinity/selector. {PREEMPTION_NOT_HELPFUL}")
        patch_node(twin, "itbench-worker", lambda n: n["spec"].pop("taints"))
        twin.warp(2)
        assert node_of(twin, "api") == "itbench-worker"


def test_a_node_is_counted_under_the_first_filter_that_rejects_it():
    unschedulable_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    with make_twin() as twin:
        patch_node(twin, "itbench-worker", lambda n: n["spec"].update(unschedulable=True, taints=[unschedulable_taint]))
        patch_node(twin, "itbench-worker2", lambda n: n["spec"].update(taints=[unschedulable_taint]))
        create_pod(twin, "api", nodeSelector={"disktype": "ssd"})  # no node has it
        twin.warp(1)
        # NodeUnschedulable, then TaintToleration, then NodeAffinity.
        assert_unschedulable(twin, "api", "0/3 nodes are available: 1 node(s) didn't match Pod's node "
                                          "affinity/selector, 1 node(s) had untolerated taint "
                                          "{node.kubernetes.io/unschedulable: }, 1 node(s) were unschedulable. "
                                          f"{PREEMPTION_NOT_HELPFUL}")


def test_a_toleration_added_to_the_pod_lets_it_onto_a_tainted_node():
    with make_twin(1) as twin:
        patch_node(twin, "itbench-worker", lambda n: n["spec"].update(taints=[
            {"key": "dedicated", "value": "db", "effect": "NoSchedule"}]))
        create_pod(twin, "db")
        twin.warp(1)
        assert_unschedulable(twin, "db", "0/1 nodes are available: 1 node(s) had untolerated taint "
                                         "{dedicated: db}. preemption: 0/1 nodes are available: 1 Preemption is "
                                         "not helpful for scheduling.")
        pods = res(twin, "pods")
        current = twin.api.get(pods, "default", "db")
        current["spec"]["tolerations"].append({"key": "dedicated", "operator": "Equal", "value": "db",
                                               "effect": "NoSchedule"})
        twin.api.update(pods, "default", "db", current, twin.admin_ctx)
        twin.warp(2)
        assert node_of(twin, "db") == "itbench-worker"


def test_a_node_selector_no_node_matches_is_repaired_by_labelling_a_node():
    with make_twin() as twin:
        create_pod(twin, "ml", nodeSelector={"accelerator": "gpu"})
        twin.warp(1)
        assert_unschedulable(twin, "ml", f"0/3 nodes are available: 3 node(s) didn't match Pod's node "
                                         f"affinity/selector. {PREEMPTION_NOT_HELPFUL}")
        patch_node(twin, "itbench-worker3", lambda n: n["metadata"]["labels"].update(accelerator="gpu"))
        twin.warp(2)
        assert node_of(twin, "ml") == "itbench-worker3"


def test_required_and_preferred_node_affinity_with_every_operator():
    with make_twin() as twin:
        for name, labels in zip(WORKERS, ({"tier": "1", "zone": "a"}, {"tier": "5", "zone": "b"},
                                          {"tier": "9", "zone": "c", "ssd": "yes"})):
            patch_node(twin, name, lambda n, labels=labels: n["metadata"]["labels"].update(labels))

        def affinity(required: list[dict], preferred: list[dict] | None = None) -> dict:
            node_affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": required}}
            if preferred:
                node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
            return {"nodeAffinity": node_affinity}

        create_pod(twin, "gt", affinity=affinity([{"matchExpressions": [
            {"key": "tier", "operator": "Gt", "values": ["3"]}, {"key": "tier", "operator": "Lt", "values": ["7"]}]}]))
        create_pod(twin, "exists", affinity=affinity([{"matchExpressions": [
            {"key": "ssd", "operator": "Exists"}, {"key": "zone", "operator": "NotIn", "values": ["a", "b"]}]}]))
        create_pod(twin, "fields", affinity=affinity([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["itbench-worker"]}]}]))
        create_pod(twin, "preferred", affinity=affinity(
            [{"matchExpressions": [{"key": "ssd", "operator": "DoesNotExist"}]}],
            [{"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}}]))
        create_pod(twin, "nowhere", affinity=affinity([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["itbench-worker9"]}]}]))
        twin.warp(1)
        assert [node_of(twin, n) for n in ("gt", "exists", "fields", "preferred")] == [
            "itbench-worker2", "itbench-worker3", "itbench-worker", "itbench-worker2"]
        # Nodes the PreFilter result leaves out are reported as such (v1.31 wording).
        assert_unschedulable(twin, "nowhere", f"0/3 nodes are available: 3 node is filtered out by the prefilter "
                                              f"result. {PREEMPTION_NOT_HELPFUL}")


def test_resource_fit_counts_requests_exactly_with_init_containers_sidecars_and_overhead():
    with make_twin(1) as twin:
        patch_node(twin, "itbench-worker", lambda n: n["status"].update(allocatable={
            "cpu": "2", "memory": "4Gi", "pods": "110", "ephemeral-storage": "10Gi"}))
        create_pod(twin, "a", cpu="1500m", memory="3Gi")
        twin.warp(1)
        assert node_of(twin, "a") == "itbench-worker"
        # 500m left: an init container of 600m does not fit, even though the app container asks for less.
        twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": "init"}, "spec": {
            "initContainers": [{"name": "setup", "image": "busybox", "resources": {"requests": {"cpu": "600m"}}}],
            "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}},
            twin.admin_ctx)
        # A sidecar adds to the app containers: 300m + 250m > 500m.
        twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": "sidecar"}, "spec": {
            "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                                "resources": {"requests": {"cpu": "250m"}}}],
            "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "300m"}}}]}},
            twin.admin_ctx)
        # Overhead counts too: 400m + 200m.
        twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": "overhead"}, "spec": {
            "overhead": {"cpu": "200m"},
            "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "400m"}}}]}},
            twin.admin_ctx)
        create_pod(twin, "mem", memory="1025Mi")
        twin.warp(1)
        for name in ("init", "sidecar", "overhead"):
            assert_unschedulable(twin, name, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
                                             "are available: 1 No preemption victims found for incoming pod.")
        assert_unschedulable(twin, "mem", "0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes "
                                          "are available: 1 No preemption victims found for incoming pod.")
        create_pod(twin, "exact", cpu="0.5", memory="1Gi")  # exactly what is left
        twin.warp(1)
        assert node_of(twin, "exact") == "itbench-worker"


def test_several_reasons_on_one_node_are_each_counted_and_extended_resources_are_checked():
    with make_twin() as twin:
        create_pod(twin, "huge", cpu="100", memory="1Ti")
        twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": "gpu"}, "spec": {"containers": [
            {"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}, twin.admin_ctx)
        twin.warp(1)
        victims = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        assert_unschedulable(twin, "huge", f"0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. "
                                           f"{victims}")
        assert_unschedulable(twin, "gpu", f"0/3 nodes are available: 3 Insufficient nvidia.com/gpu. {victims}")


def test_too_many_pods():
    with make_twin(1) as twin:
        patch_node(twin, "itbench-worker", lambda n: n["status"]["allocatable"].update(pods="2"))
        for name in ("a", "b", "c"):
            create_pod(twin, name)
        twin.warp(1)
        assert_unschedulable(twin, "c", "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are "
                                        "available: 1 No preemption victims found for incoming pod.")
        twin.api.delete(res(twin, "pods"), "default", "a", _delete_options(), twin.admin_ctx)
        twin.warp(2)
        assert node_of(twin, "c") == "itbench-worker"


def _delete_options():
    """Delete at once, as the kubelet finishes a deletion (no kubelet runs here)."""
    return DeleteOptions(grace_period=0)


def test_host_ports_conflict():
    with make_twin(1) as twin:
        def with_port(name: str, port: dict) -> None:
            twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": name}, "spec": {"containers": [
                {"name": "c", "image": "nginx", "ports": [dict(containerPort=80, **port)]}]}}, twin.admin_ctx)

        with_port("first", {"hostPort": 8080})
        with_port("udp", {"hostPort": 8080, "protocol": "UDP"})
        with_port("second", {"hostPort": 8080, "hostIP": "172.18.0.3"})
        twin.warp(1)
        assert node_of(twin, "first") == node_of(twin, "udp") == "itbench-worker"
        assert_unschedulable(twin, "second", "0/1 nodes are available: 1 node(s) didn't have free ports for the "
                                             "requested pod ports. preemption: 0/1 nodes are available: 1 No "
                                             "preemption victims found for incoming pod.")


def test_a_missing_claim_keeps_the_pod_pending_until_the_claim_is_created():
    with make_twin(3, "persistentvolume-binder") as twin:
        create_pod(twin, "db", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
        twin.warp(1)
        assert_unschedulable(twin, "db", f'0/3 nodes are available: persistentvolumeclaim "data" not found. '
                                         f"{PREEMPTION_NOT_HELPFUL}")
        twin.api.create(res(twin, "persistentvolumeclaims"), "default", {"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}, twin.admin_ctx)
        twin.warp(2)
        node = node_of(twin, "db")
        assert node in WORKERS
        claim = twin.store.get("persistentvolumeclaims", "default", "data")
        assert claim["status"]["phase"] == "Bound"
        assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node


def test_an_unbound_claim_of_an_immediate_class_blocks_the_pod():
    with make_twin() as twin:
        twin.api.create(res(twin, "persistentvolumeclaims"), "default", {"metadata": {"name": "fast"}, "spec": {
            "storageClassName": "ssd", "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}, twin.admin_ctx)
        create_pod(twin, "db", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "fast"}}])
        twin.warp(1)
        assert_unschedulable(twin, "db", f"0/3 nodes are available: pod has unbound immediate "
                                         f"PersistentVolumeClaims. {PREEMPTION_NOT_HELPFUL}")


def test_required_anti_affinity_that_cannot_be_met_and_its_repair():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    with make_twin() as twin:
        for i in range(4):
            create_pod(twin, f"cache-{i}", labels={"app": "cache"}, affinity=anti)
        twin.warp(1)
        placed = [node_of(twin, f"cache-{i}") for i in range(3)]
        assert sorted(placed) == sorted(WORKERS)
        assert_unschedulable(twin, "cache-3", "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity "
                                              f"rules. {NO_VICTIMS}")
        twin.api.delete(res(twin, "pods"), "default", "cache-1", _delete_options(), twin.admin_ctx)
        twin.warp(2)
        assert node_of(twin, "cache-3") == placed[1]
        # A pod without affinity of its own is kept off too: the existing pods' anti-affinity matches it.
        create_pod(twin, "intruder", labels={"app": "cache"})
        twin.warp(1)
        assert_unschedulable(twin, "intruder", "0/3 nodes are available: 3 node(s) didn't satisfy existing pods "
                                               f"anti-affinity rules. {NO_VICTIMS}")


def test_pod_affinity_follows_its_target_and_the_first_replica_may_go_anywhere():
    with make_twin() as twin:
        follow = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        create_pod(twin, "sidecar", labels={"app": "metrics"}, affinity=follow)
        self_affine = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "group"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        create_pod(twin, "group-0", labels={"app": "group"}, affinity=self_affine)
        twin.warp(1)
        assert_unschedulable(twin, "sidecar", "0/3 nodes are available: 3 node(s) didn't match pod affinity "
                                              f"rules. {PREEMPTION_NOT_HELPFUL}")
        first = node_of(twin, "group-0")
        assert first is not None
        create_pod(twin, "group-1", labels={"app": "group"}, affinity=self_affine)
        create_pod(twin, "db", labels={"app": "db"}, nodeSelector={"kubernetes.io/hostname": "itbench-worker2"})
        twin.warp(2)
        assert node_of(twin, "group-1") == first
        assert node_of(twin, "sidecar") == "itbench-worker2"


def test_affinity_terms_reach_other_namespaces_through_namespace_selectors_and_preferences_score():
    with make_twin() as twin:
        namespaces = res(twin, "namespaces")
        for name, team in (("payments", "money"), ("ledger", "money"), ("blog", "content")):
            twin.api.create(namespaces, None, {"metadata": {"name": name, "labels": {"team": team}}},
                            twin.admin_ctx)
        create_pod(twin, "db", namespace="ledger", labels={"app": "db"},
                   nodeSelector={"kubernetes.io/hostname": "itbench-worker2"})
        create_pod(twin, "cms", namespace="blog", labels={"app": "db"},
                   nodeSelector={"kubernetes.io/hostname": "itbench-worker3"})
        twin.warp(1)
        away_from_money = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname",
            "namespaceSelector": {"matchLabels": {"team": "money"}}}]}}
        near_any_db = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}},
                                               "topologyKey": "kubernetes.io/hostname", "namespaces": ["blog"]}}]}}
        create_pod(twin, "worker", namespace="payments", affinity={**away_from_money, **near_any_db})
        twin.warp(1)
        # Not beside the ledger's database (a "money" namespace), preferably beside the blog's.
        assert twin.store.get("pods", "payments", "worker")["spec"]["nodeName"] == "itbench-worker3"
        create_pod(twin, "auditor", namespace="payments", affinity=away_from_money,
                   nodeSelector={"kubernetes.io/hostname": "itbench-worker2"})
        twin.warp(1)
        condition = twin.store.get("pods", "payments", "auditor")["status"]["conditions"][0]
        assert condition["message"].startswith("0/3 nodes are available: 1 node(s) didn't match pod anti-affinity "
                                               "rules, 2 node(s) didn't match Pod's node affinity/selector.")


def test_topology_spread_do_not_schedule_and_missing_topology_labels():
    with make_twin() as twin:
        for name, zone in zip(WORKERS[:2], ("a", "b")):
            patch_node(twin, name, lambda n, zone=zone: n["metadata"]["labels"].update(
                {"topology.kubernetes.io/zone": zone}))
        spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                   "labelSelector": {"matchLabels": {"app": "web"}}}]
        for i in range(2):
            create_pod(twin, f"web-{i}", labels={"app": "web"}, topologySpreadConstraints=spread,
                       nodeSelector={"kubernetes.io/hostname": "itbench-worker"} if i == 0 else {})
            twin.warp(1)
        assert node_of(twin, "web-1") == "itbench-worker2"
        create_pod(twin, "web-2", labels={"app": "web"}, topologySpreadConstraints=spread,
                   nodeSelector={"kubernetes.io/hostname": "itbench-worker"})
        twin.warp(1)
        # Only the nodes the pod may go to count (nodeAffinityPolicy Honor): no skew at all.
        assert node_of(twin, "web-2") == "itbench-worker"
        # Counting every zone (not only the nodes the pod may go to), zone a is one ahead already.
        create_pod(twin, "web-3", labels={"app": "web"}, nodeSelector={"topology.kubernetes.io/zone": "a"},
                   topologySpreadConstraints=[dict(spread[0], nodeAffinityPolicy="Ignore")])
        twin.warp(1)
        assert_unschedulable(twin, "web-3", "0/3 nodes are available: 1 node(s) didn't match pod topology spread "
                                            "constraints, 2 node(s) didn't match Pod's node affinity/selector. "
                                            "preemption: 0/3 nodes are available: 1 No preemption victims found "
                                            "for incoming pod, 2 Preemption is not helpful for scheduling.")
        create_pod(twin, "web-4", labels={"app": "web"}, topologySpreadConstraints=spread,
                   nodeSelector={"kubernetes.io/hostname": "itbench-worker3"})
        twin.warp(1)
        assert_unschedulable(twin, "web-4", "0/3 nodes are available: 1 node(s) didn't match pod topology spread "
                                            "constraints (missing required label), 2 node(s) didn't match Pod's "
                                            f"node affinity/selector. {PREEMPTION_NOT_HELPFUL}")


def test_no_nodes_at_all():
    with make_twin(0) as twin:
        create_pod(twin, "lonely")
        twin.warp(1)
        condition = scheduled_condition(twin, "lonely")
        assert (condition["reason"], condition["message"]) == ("Unschedulable", "no nodes available to schedule pods")
        twin.add_node()
        twin.warp(2)
        assert node_of(twin, "lonely") == "itbench-worker"


# ---- when the scheduler tries again -------------------------------------------------------------------------------

def test_unschedulable_pods_wait_for_a_relevant_change_or_five_minutes():
    with make_twin() as twin:
        create_pod(twin, "ml", nodeSelector={"accelerator": "gpu"})
        twin.warp(1)
        (event,) = events(twin, "ml", "FailedScheduling")
        assert "series" not in event
        create_pod(twin, "other")  # binding another pod does not help a node-selector failure
        twin.warp(120)
        (event,) = events(twin, "ml", "FailedScheduling")
        assert "series" not in event
        twin.warp(200)  # past five minutes in the unschedulable queue: one more attempt
        (event,) = events(twin, "ml", "FailedScheduling")
        assert event["series"]["count"] == 2


def test_retries_after_relevant_changes_back_off_exponentially():
    with make_twin(1) as twin:
        patch_node(twin, "itbench-worker", lambda n: n["spec"].update(unschedulable=True))
        create_pod(twin, "api")
        twin.warp(1)  # attempt 1 at t=1
        attempts = [1]
        for second in range(2, 40):
            # A taint change is an event NodeUnschedulable listens to; this taint does not keep pods off.
            patch_node(twin, "itbench-worker", lambda n, s=second: n["spec"].update(taints=[
                {"key": "touched", "value": str(s), "effect": "PreferNoSchedule"}]))
            twin.warp(1)
            (event,) = events(twin, "api", "FailedScheduling")
            count = (event.get("series") or {}).get("count", 1)
            if count > len(attempts):
                attempts.append(second)
        gaps = [b - a for a, b in zip(attempts, attempts[1:])]
        assert gaps[:5] == [1, 2, 4, 8, 10] and set(gaps[5:]) <= {10}


def test_higher_priority_pods_are_scheduled_first():
    with make_twin(1) as twin:
        twin.api.create(res(twin, "priorityclasses", "scheduling.k8s.io"), None, {
            "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}, twin.admin_ctx)
        patch_node(twin, "itbench-worker", lambda n: n["status"]["allocatable"].update(cpu="1"))
        create_pod(twin, "low", cpu="1")
        create_pod(twin, "high", cpu="1", priorityClassName="high")
        twin.warp(1)
        assert node_of(twin, "high") == "itbench-worker" and node_of(twin, "low") is None


def test_gated_pods_are_not_tried():
    with make_twin(1) as twin:
        create_pod(twin, "gated", schedulingGates=[{"name": "example.com/wait"}])
        twin.warp(5)
        assert node_of(twin, "gated") is None and events(twin, "gated") == []


# ---- the binding subresource ---------------------------------------------------------------------------------

def test_a_binding_from_a_client_marks_the_pod_scheduled():
    # No start time in the future: the serving certificate is valid from the twin's start.
    with Twin(seed=1, nodes=2, controllers=()) as twin:
        create_pod(twin, "manual")
        raw = RawAPI(twin, twin.token())
        status, body = raw.json("POST", "/api/v1/namespaces/default/pods/manual/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
            "target": {"kind": "Node", "name": "itbench-worker2"}})
        assert status == 201, body
        assert node_of(twin, "manual") == "itbench-worker2"
        assert scheduled_condition(twin, "manual")["status"] == "True"
        status, body = raw.json("POST", "/api/v1/namespaces/default/pods/manual/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "manual"},
            "target": {"kind": "Node", "name": "itbench-worker"}})
        assert status == 409
        assert body["message"] == ('Operation cannot be fulfilled on pods/binding "manual": pod manual is already '
                                   'assigned to node "itbench-worker2"')


# ---- what kubectl shows -------------------------------------------------------------------------------------

@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
def test_kubectl_describe_shows_the_failed_scheduling_event(tmp_path):
    with Twin(seed=3, nodes=3, controllers={"scheduler"}) as twin:
        kubectl = Kubectl(twin, tmp_path)
        twin.api.create(res(twin, "pods"), "default", {"metadata": {"name": "stuck"}, "spec": {
            "nodeSelector": {"disktype": "ssd"}, "containers": [{"name": "c", "image": "nginx"}]}}, twin.admin_ctx)
        twin.warp(1)
        out = kubectl("describe", "pod", "stuck")
        message = ("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
                   f"{PREEMPTION_NOT_HELPFUL}")
        assert "Status:           Pending" in out
        assert "PodScheduled   False" in out
        events_section = out.split("Events:")[1]
        line = next(line for line in events_section.splitlines() if "FailedScheduling" in line)
        assert line.split()[:2] == ["Warning", "FailedScheduling"]
        assert "default-scheduler" in line and line.rstrip().endswith(message)
        wide = kubectl("get", "pod", "stuck", "-o", "wide").splitlines()[1].split()
        assert wide[1:3] == ["0/1", "Pending"] and wide[6] == "<none>"
