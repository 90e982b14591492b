"""The Deployment controller with the ReplicaSet controller; the test plays scheduler and kubelet."""

from __future__ import annotations

import re

from pytest_itbench.twin import Twin
from pytest_itbench.twin.controllers.pod_template import template_hash
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.errors import Forbidden

from .rollout_helpers import (
    NS, WORKLOAD_CONTROLLERS, condition, create, deployment, edit, finish_terminating, get, make_ready, messages,
    pods, replica_set, replica_set_of, replica_sets, report, resource, set_image, set_replicas, settle,
)

START = 1_750_000_000
REVISION = "deployment.kubernetes.io/revision"


def twin(seed: int = 5) -> Twin:
    return Twin(seed=seed, start_time=START, controllers=WORKLOAD_CONTROLLERS)


def test_creates_a_replica_set_named_by_the_pod_template_hash_with_revision_and_replica_annotations():
    with twin() as t:
        d = create(t, "apps", "deployments", deployment("web", 3))
        t.warp(1)
        (rs,) = replica_sets(t)
        pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
        assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{6,10}", pod_hash)
        assert rs["metadata"]["name"] == f"web-{pod_hash}"
        assert pod_hash == template_hash(get(t, "deployments.apps", "web")["spec"]["template"])
        assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}}
        assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
        assert rs["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                      "uid": d["metadata"]["uid"], "controller": True,
                                                      "blockOwnerDeletion": True}]
        assert rs["metadata"]["annotations"] == {REVISION: "1", "deployment.kubernetes.io/desired-replicas": "3",
                                                 "deployment.kubernetes.io/max-replicas": "4"}
        assert all(p["metadata"]["labels"]["pod-template-hash"] == pod_hash for p in pods(t))
        assert len(pods(t, rs["metadata"]["name"])) == 3
        d = get(t, "deployments.apps", "web")
        assert d["metadata"]["annotations"][REVISION] == "1"
        assert messages(t, "web", "ScalingReplicaSet") == [f"Scaled up replica set web-{pod_hash} from 0 to 3"]
        progressing = condition(d, "Progressing")
        assert (progressing["status"], progressing["reason"]) == ("True", "ReplicaSetUpdated")
        assert progressing["message"] == f'ReplicaSet "web-{pod_hash}" is progressing.'
        available = condition(d, "Available")
        assert (available["status"], available["reason"], available["message"]) == (
            "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")


def test_status_counts_and_conditions_once_pods_are_ready():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 3))
        settle(t, 2)
        d = get(t, "deployments.apps", "web")
        rs_name = replica_set_of(t, "web")["metadata"]["name"]
        assert {k: v for k, v in d["status"].items() if k != "conditions"} == {
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3}
        available, progressing = condition(d, "Available"), condition(d, "Progressing")
        assert (available["status"], available["reason"], available["message"]) == (
            "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
        assert (progressing["status"], progressing["reason"], progressing["message"]) == (
            "True", "NewReplicaSetAvailable", f'ReplicaSet "{rs_name}" has successfully progressed.')
        assert [c["type"] for c in d["status"]["conditions"]] == ["Available", "Progressing"]


def test_scaled_to_zero_all_pods_go_and_scaling_back_brings_them_back():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 3))
        settle(t, 2)
        rs_name = replica_set_of(t, "web")["metadata"]["name"]
        set_replicas(t, "deployments", "web", 0)  # the fault
        t.warp(1)
        assert pods(t, terminating=False) == [] and len(pods(t)) == 3  # Terminating until their kubelet stops them
        settle(t, 1)
        d = get(t, "deployments.apps", "web")
        assert pods(t) == []
        assert get(t, "replicasets.apps", rs_name)["spec"]["replicas"] == 0
        assert {k: v for k, v in d["status"].items() if k != "conditions"} == {"observedGeneration": 2}
        available = condition(d, "Available")  # zero wanted, zero needed: upstream calls that available
        assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
        assert messages(t, "web", "ScalingReplicaSet")[-1] == f"Scaled down replica set {rs_name} from 3 to 0"
        set_replicas(t, "deployments", "web", 3)  # the repair
        settle(t, 2)
        d = get(t, "deployments.apps", "web")
        assert len(pods(t, rs_name)) == 3 and d["status"]["availableReplicas"] == 3
        assert messages(t, "web", "ScalingReplicaSet")[-1] == f"Scaled up replica set {rs_name} from 0 to 3"
        assert len(replica_sets(t)) == 1  # scaling is not a rollout


def test_rolling_update_never_exceeds_max_surge_nor_max_unavailable():
    with twin() as t:
        create(t, "apps", "deployments", deployment(
            "web", 4, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}))
        settle(t, 2)
        old_name = replica_set_of(t, "web")["metadata"]["name"]
        set_image(t, "web", "nginx:1.26")
        seen_surge = seen_unavailable = False
        for _ in range(30):
            t.warp(1)
            all_pods = pods(t, terminating=False)
            ready = [p for p in all_pods if _ready(p)]
            d = get(t, "deployments.apps", "web")
            assert len(all_pods) <= 5 and sum(rs["spec"]["replicas"] for rs in replica_sets(t)) <= 5
            assert len(ready) >= 3 and d["status"].get("readyReplicas", 0) <= 5
            seen_surge |= len(all_pods) == 5
            seen_unavailable |= len(ready) == 3
            finish_terminating(t)
            make_ready(t, limit=1)  # one new pod turns ready a tick
        new = replica_set_of(t, "web")
        assert seen_surge and seen_unavailable
        assert new["metadata"]["name"] != old_name and new["spec"]["replicas"] == 4
        assert get(t, "replicasets.apps", old_name)["spec"]["replicas"] == 0
        assert new["metadata"]["annotations"][REVISION] == "2"
        d = get(t, "deployments.apps", "web")
        assert d["metadata"]["annotations"][REVISION] == "2"
        assert condition(d, "Progressing")["reason"] == "NewReplicaSetAvailable"
        assert d["status"]["updatedReplicas"] == 4 and d["status"]["replicas"] == 4


def test_rolling_update_with_no_unavailability_keeps_every_replica_ready():
    with twin() as t:
        create(t, "apps", "deployments", deployment(
            "web", 3, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}))
        settle(t, 2)
        set_image(t, "web", "nginx:1.26")
        for _ in range(20):
            t.warp(1)
            active = pods(t, terminating=False)
            assert sum(_ready(p) for p in active) >= 3 and len(active) <= 4
            finish_terminating(t)
            make_ready(t, limit=1)
        assert all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in pods(t)) and len(pods(t)) == 3


def test_recreate_scales_the_old_replica_set_down_and_waits_for_its_pods_before_scaling_up():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 2, strategy={"type": "Recreate"}))
        settle(t, 2)
        old_name = replica_set_of(t, "web")["metadata"]["name"]
        set_image(t, "web", "nginx:1.26")
        t.warp(2)
        assert get(t, "replicasets.apps", old_name)["spec"]["replicas"] == 0
        assert [rs["metadata"]["name"] for rs in replica_sets(t)] == [old_name]  # old pods still terminating
        assert len(pods(t)) == 2 and all(p["metadata"].get("deletionTimestamp") for p in pods(t))
        assert finish_terminating(t) == 2  # their kubelet has stopped them
        t.warp(1)
        new = replica_set_of(t, "web")
        assert new["metadata"]["name"] != old_name and new["spec"]["replicas"] == 2
        assert len(pods(t, new["metadata"]["name"])) == 2
        assert messages(t, "web", "ScalingReplicaSet")[-2:] == [
            f"Scaled down replica set {old_name} from 2 to 0",
            f"Scaled up replica set {new['metadata']['name']} from 0 to 2"]


def test_pause_stops_a_rollout_and_resume_carries_it_on():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 2))
        settle(t, 2)
        edit(t, "apps", "deployments", "web", lambda d: d["spec"].__setitem__("paused", True))
        t.warp(1)
        progressing = condition(get(t, "deployments.apps", "web"), "Progressing")
        assert (progressing["status"], progressing["reason"], progressing["message"]) == (
            "Unknown", "DeploymentPaused", "Deployment is paused")
        set_image(t, "web", "nginx:1.26")
        settle(t, 3)
        d = get(t, "deployments.apps", "web")
        assert len(replica_sets(t)) == 1 and "updatedReplicas" not in d["status"]
        assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
        edit(t, "apps", "deployments", "web", lambda d: d["spec"].__setitem__("paused", False))
        t.warp(1)
        assert condition(get(t, "deployments.apps", "web"), "Progressing")["reason"] in (
            "DeploymentResumed", "NewReplicaSetCreated", "ReplicaSetUpdated")
        settle(t, 6)
        d = get(t, "deployments.apps", "web")
        assert len(replica_sets(t)) == 2 and d["status"]["updatedReplicas"] == 2
        assert condition(d, "Progressing")["reason"] == "NewReplicaSetAvailable"


def test_progress_deadline_exceeded_when_new_pods_never_become_ready_and_healed_when_they_do():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 2, progressDeadlineSeconds=30))
        t.warp(1)
        rs_name = replica_set_of(t, "web")["metadata"]["name"]
        for pod in pods(t):
            report(t, pod, ready=False)  # running, readiness probe failing
        t.warp(1)
        last_update = condition(get(t, "deployments.apps", "web"), "Progressing")["lastUpdateTime"]
        t.warp(28)
        assert condition(get(t, "deployments.apps", "web"), "Progressing")["reason"] == "ReplicaSetUpdated"
        t.warp(2)
        d = get(t, "deployments.apps", "web")
        progressing = condition(d, "Progressing")
        assert (progressing["status"], progressing["reason"], progressing["message"]) == (
            "False", "ProgressDeadlineExceeded", f'ReplicaSet "{rs_name}" has timed out progressing.')
        assert progressing["lastUpdateTime"] > last_update
        assert condition(d, "Available")["status"] == "False"
        make_ready(t)  # the readiness probe is fixed
        t.warp(1)
        progressing = condition(get(t, "deployments.apps", "web"), "Progressing")
        assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")


def test_revision_history_limit_deletes_the_oldest_replica_sets():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 1, revisionHistoryLimit=2))
        settle(t, 2)
        for version in ("1.26", "1.27", "1.28", "1.29"):
            set_image(t, "web", f"nginx:{version}")
            settle(t, 4)
        revisions = sorted(int(rs["metadata"]["annotations"][REVISION]) for rs in replica_sets(t))
        assert revisions == [3, 4, 5]
        assert replica_set_of(t, "web")["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"


def test_a_refused_pod_create_shows_as_replica_failure_on_the_deployment():
    with twin() as t:
        def refuse(op, res, obj, old, ctx):
            if op == "create" and res.kind == "Pod":
                raise Forbidden(f'pods "{obj["metadata"]["name"]}" is forbidden: exceeded quota: small, '
                                "requested: pods=1, used: pods=0, limited: pods=0", "pods", obj["metadata"]["name"])
        t.api.admission.append(refuse)
        create(t, "apps", "deployments", deployment("web", 2))
        t.warp(2)
        d = get(t, "deployments.apps", "web")
        failure = condition(d, "ReplicaFailure")
        assert (failure["status"], failure["reason"]) == ("True", "FailedCreate")
        assert "exceeded quota: small" in failure["message"]
        rs = replica_set_of(t, "web")
        assert condition(rs, "ReplicaFailure")["message"] == failure["message"]
        t.api.admission.remove(refuse)
        for _ in range(10):
            t.warp(100)
            make_ready(t)
        d = get(t, "deployments.apps", "web")
        assert condition(d, "ReplicaFailure") is None and d["status"]["availableReplicas"] == 2


def test_scaling_during_a_rollout_is_proportional():
    with twin() as t:
        create(t, "apps", "deployments", deployment(
            "web", 10, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}))
        settle(t, 2)
        old_name = replica_set_of(t, "web")["metadata"]["name"]
        set_image(t, "web", "nginx:does-not-start")  # new pods never turn ready
        t.warp(3)
        new_name = replica_set_of(t, "web")["metadata"]["name"]
        sizes = {rs["metadata"]["name"]: rs["spec"]["replicas"] for rs in replica_sets(t)}
        assert sizes == {old_name: 8, new_name: 5}
        set_replicas(t, "deployments", "web", 15)
        t.warp(1)
        sizes = {rs["metadata"]["name"]: rs["spec"]["replicas"] for rs in replica_sets(t)}
        assert sizes == {old_name: 11, new_name: 7}  # 18 = 15 + maxSurge, shared 8:5
        assert f"Scaled up replica set {old_name} from 8 to 11" in messages(t, "web", "ScalingReplicaSet")


def test_orphaned_replica_sets_are_adopted_by_a_recreated_deployment():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 2))
        settle(t, 2)
        rs_name = replica_set_of(t, "web")["metadata"]["name"]
        t.api.delete(resource(t, "apps", "deployments"), NS, "web", DeleteOptions(propagation="Orphan"), t.admin_ctx)
        t.warp(1)
        assert "ownerReferences" not in get(t, "replicasets.apps", rs_name)["metadata"]
        before = {p["metadata"]["name"] for p in pods(t)}
        d = create(t, "apps", "deployments", deployment("web", 2))
        t.warp(1)
        rs = get(t, "replicasets.apps", rs_name)
        assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
        assert {p["metadata"]["name"] for p in pods(t)} == before and len(replica_sets(t)) == 1
        d = get(t, "deployments.apps", "web")
        assert d["status"]["availableReplicas"] == 2
        assert condition(d, "Progressing")["reason"] == "NewReplicaSetAvailable"


def test_a_hash_collision_bumps_collision_count_and_picks_another_name():
    with twin() as t:
        create(t, "apps", "deployments", deployment("web", 1, paused=True))
        t.warp(1)
        taken = f"web-{template_hash(get(t, 'deployments.apps', 'web')['spec']['template'])}"
        create(t, "apps", "replicasets", replica_set(taken, 0, labels={"app": "other"}))
        edit(t, "apps", "deployments", "web", lambda d: d["spec"].__setitem__("paused", False))
        settle(t, 2)
        d = get(t, "deployments.apps", "web")
        ours = replica_set_of(t, "web")["metadata"]["name"]
        assert d["status"]["collisionCount"] == 1
        assert ours == f"web-{template_hash(d['spec']['template'], 1)}" != taken


def test_the_same_seed_and_actions_give_the_same_names():
    def run(seed: int) -> list[str]:
        with twin(seed) as t:
            create(t, "apps", "deployments", deployment("web", 3))
            settle(t, 2)
            set_image(t, "web", "nginx:1.26")
            settle(t, 4)
            return sorted(o["metadata"]["name"] for o in replica_sets(t) + pods(t))

    assert run(11) == run(11)
    other = run(12)
    assert other != run(11)
    assert [n for n in other if n.count("-") == 1] == [n for n in run(11) if n.count("-") == 1]  # RS names


def _ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions") or ())
