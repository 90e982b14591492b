"""The ReplicaSet controller, run alone; the test plays scheduler and kubelet."""

from __future__ import annotations

import re

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.clock import format_time
from pytest_itbench.twin.controllers.pod_deletion_order import pods_to_delete
from pytest_itbench.twin.errors import Forbidden

from .rollout_helpers import (
    NS, condition, create, edit, events, finish_terminating, get, make_ready, messages, pods, replica_set,
    report, resource, set_replicas,
)

START = 1_750_000_000


def twin() -> Twin:
    return Twin(seed=3, start_time=START, controllers={"replicaset"})


def test_creates_its_replicas_named_after_it_labelled_and_owned():
    with twin() as t:
        rs = create(t, "apps", "replicasets", replica_set("web", 3))
        t.warp(1)
        created = pods(t, "web")
        assert len(created) == 3
        for pod in created:
            meta = pod["metadata"]
            assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", meta["name"])
            assert meta["labels"] == {"app": "web"}
            assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                                "uid": rs["metadata"]["uid"], "controller": True,
                                                "blockOwnerDeletion": True}]
        assert sorted(messages(t, "web", "SuccessfulCreate")) == sorted(
            f"Created pod: {p['metadata']['name']}" for p in created)
        assert events(t, "web")[0]["source"] == {"component": "replicaset-controller"}
        status = get(t, "replicasets.apps", "web")["status"]
        assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1}


def test_counts_ready_pods_and_available_ones_after_min_ready_seconds():
    with twin() as t:
        create(t, "apps", "replicasets", replica_set("web", 2, minReadySeconds=10))
        t.warp(1)
        make_ready(t)
        ready_at = t.clock.now()
        t.warp(1)
        status = get(t, "replicasets.apps", "web")["status"]
        assert status["readyReplicas"] == 2 and "availableReplicas" not in status
        t.warp(ready_at + 10 - t.clock.now())  # ready for exactly minReadySeconds: not yet available
        assert "availableReplicas" not in get(t, "replicasets.apps", "web")["status"]
        t.warp(1)
        assert get(t, "replicasets.apps", "web")["status"]["availableReplicas"] == 2


def test_scaling_down_deletes_the_least_useful_pods_first_and_scaling_up_creates_more():
    with twin() as t:
        create(t, "apps", "replicasets", replica_set("web", 4))
        t.warp(1)
        first = pods(t, "web")
        report(t, first[0], ready=True)
        report(t, first[1], ready=True)
        report(t, first[2], ready=False)  # running, not ready
        t.warp(1)  # first[3] stays Pending and unscheduled
        set_replicas(t, "replicasets", "web", 2)
        t.warp(1)
        left = {p["metadata"]["name"] for p in pods(t, "web", terminating=False)}
        assert left == {first[0]["metadata"]["name"], first[1]["metadata"]["name"]}
        # The unscheduled pod went at once; the bound one terminates until its kubelet has stopped it.
        assert [p["metadata"]["name"] for p in pods(t, "web") if p["metadata"].get("deletionTimestamp")] == [
            first[2]["metadata"]["name"]]
        assert finish_terminating(t) == 1
        assert sorted(messages(t, "web", "SuccessfulDelete")) == sorted(
            f"Deleted pod: {p['metadata']['name']}" for p in first[2:])
        set_replicas(t, "replicasets", "web", 5)
        t.warp(1)
        assert len(pods(t, "web")) == 5
        assert get(t, "replicasets.apps", "web")["status"]["replicas"] == 5


def test_a_deleted_pod_is_replaced():
    with twin() as t:
        create(t, "apps", "replicasets", replica_set("web", 2))
        t.warp(1)
        victim = pods(t, "web")[0]["metadata"]["name"]
        t.api.delete(resource(t, "", "pods"), NS, victim, DeleteOptions(), t.admin_ctx)
        t.warp(1)
        names = {p["metadata"]["name"] for p in pods(t, "web")}
        assert len(names) == 2 and victim not in names


def test_a_terminating_pod_no_longer_counts_and_is_replaced_at_once():
    with twin() as t:
        manifest = replica_set("web", 2)
        manifest["spec"]["template"]["metadata"]["finalizers"] = ["example.com/hold"]
        create(t, "apps", "replicasets", manifest)
        t.warp(1)
        victim = pods(t, "web")[0]
        assert victim["metadata"]["finalizers"] == ["example.com/hold"]  # copied from the template
        t.api.delete(resource(t, "", "pods"), NS, victim["metadata"]["name"], DeleteOptions(), t.admin_ctx)
        t.warp(1)
        active = [p for p in pods(t, "web") if not p["metadata"].get("deletionTimestamp")]
        assert len(active) == 2 and len(pods(t, "web")) == 3
        assert get(t, "replicasets.apps", "web")["status"]["replicas"] == 2


def test_adopts_matching_orphans_and_releases_pods_that_stop_matching():
    with twin() as t:
        pod_res = resource(t, "", "pods")
        t.api.create(pod_res, NS, {"metadata": {"name": "stray", "labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}, t.admin_ctx)
        rs = create(t, "apps", "replicasets", replica_set("web", 2))
        t.warp(1)
        stray = get(t, "pods", "stray")
        assert stray["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
        assert len(pods(t, "web")) == 2  # the orphan counts: only one pod created
        assert len(messages(t, "web", "SuccessfulCreate")) == 1
        edit(t, "", "pods", "stray", lambda p: p["metadata"]["labels"].__setitem__("app", "debug"))
        t.warp(1)
        assert "ownerReferences" not in get(t, "pods", "stray")["metadata"]
        assert len(pods(t, "web")) == 2 and "stray" not in {p["metadata"]["name"] for p in pods(t, "web")}


def _quota_refusal(limit: int):
    """An admission plugin refusing pod creates past ``limit`` pods, worded as the ResourceQuota plugin words it."""
    attempts = []

    def admit(op, res, obj, old, ctx):
        if op != "create" or res.kind != "Pod":
            return
        attempts.append(obj["metadata"]["name"])
        if len(attempts) > limit:
            raise Forbidden(f'pods "{obj["metadata"]["name"]}" is forbidden: exceeded quota: pods-quota, '
                            f"requested: pods=1, used: pods={limit}, limited: pods={limit}", "pods",
                            obj["metadata"]["name"])
    return admit, attempts


def test_a_refused_create_gives_failed_create_events_a_replica_failure_condition_and_backs_off():
    with twin() as t:
        admit, attempts = _quota_refusal(limit=0)
        t.api.admission.append(admit)
        create(t, "apps", "replicasets", replica_set("web", 3))
        t.warp(1)
        rs = get(t, "replicasets.apps", "web")
        failure = condition(rs, "ReplicaFailure")
        assert failure["status"] == "True" and failure["reason"] == "FailedCreate"
        assert re.fullmatch(r'pods "web-\w{5}" is forbidden: exceeded quota: pods-quota, requested: pods=1, '
                            r"used: pods=0, limited: pods=0", failure["message"])
        failed = events(t, "web", "FailedCreate")
        assert failed and failed[0]["type"] == "Warning"
        assert failed[0]["message"].startswith('Error creating: pods "web-')
        assert rs["status"]["replicas"] == 0
        t.warp(120)
        # Slow start tries one pod per sync, and the retries back off exponentially: far fewer than one a second.
        assert 5 < len(attempts) < 25
        t.api.admission.remove(admit)  # the quota is raised
        t.warp(1000)  # within the longest back-off
        rs = get(t, "replicasets.apps", "web")
        assert len(pods(t, "web")) == 3 and condition(rs, "ReplicaFailure") is None


def test_slow_start_stops_after_the_first_batch_with_a_refusal():
    with twin() as t:
        admit, attempts = _quota_refusal(limit=1)
        t.api.admission.append(admit)
        create(t, "apps", "replicasets", replica_set("web", 10))
        t.warp(1)
        # Batch of 1 succeeds, batch of 2 is refused twice and the other 7 are not tried; the syncs that follow
        # (its status writes) start again at a batch of 1. Without slow start each sync would try all 9.
        assert len(pods(t, "web")) == 1
        assert len(messages(t, "web", "SuccessfulCreate")) == 1
        assert 3 <= len(attempts) < 10


def test_pods_to_delete_orders_by_startup_stage_cost_crowding_readiness_age_and_restarts():
    now = float(START)

    def pod(name, *, node="n1", phase="Running", ready=True, ready_for=100, age=1000, cost=None, restarts=0):
        annotations = {"controller.kubernetes.io/pod-deletion-cost": str(cost)} if cost is not None else {}
        stamp = format_time(now - ready_for)
        return {"metadata": {"name": name, "uid": name, "annotations": annotations,
                             "creationTimestamp": format_time(now - age)},
                "spec": {"nodeName": node},
                "status": {"phase": phase,
                           "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                           "lastTransitionTime": stamp}],
                           "containerStatuses": [{"name": "app", "restartCount": restarts}]}}

    candidates = [
        pod("running-ready-old", ready_for=5000, age=6000, node="n4"),
        pod("pending", phase="Pending", ready=False, node="n3"),
        pod("unscheduled", node="", phase="Pending", ready=False),
        pod("not-ready", ready=False, node="n3"),
        pod("cheap", cost=-5, node="n3"),
        pod("crowded", node="n1"),
        pod("restarted", restarts=4, node="n5"),
        pod("plain", node="n7"),
        pod("recently-ready", ready_for=3, node="n6"),
    ]
    related = candidates + [pod("sibling-on-n1", node="n1")]
    order = [p["metadata"]["name"] for p in pods_to_delete(candidates, related, len(candidates) - 1, now)]
    assert order == ["unscheduled", "pending", "not-ready", "cheap", "crowded", "recently-ready", "restarted",
                     "plain"]
