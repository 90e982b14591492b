"""The StatefulSet controller, run alone: the tests play the kubelet (pods Running and Ready through the status
subresource) and, where it matters, delete pods as users would."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.store import clone

from .kubelet_standin import events, finish, messages, names, run, run_all

START = 1_700_000_000.0


def make_twin(seed: int = 3) -> Twin:
    return Twin(seed=seed, nodes=2, start_time=START, controllers={"statefulset"})


def manifest(name: str = "web", replicas: int = 3, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"serviceName": "nginx", "replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                     **spec}}


def sets(twin: Twin):
    return twin.api.catalog.lookup("apps", "v1", "statefulsets")


def create(twin: Twin, obj: dict) -> dict:
    return twin.api.create(sets(twin), "default", obj, twin.admin_ctx)


def change(twin: Twin, name: str, edit) -> None:
    obj = clone(twin.api.get(sets(twin), "default", name))
    edit(obj["spec"])
    twin.api.update(sets(twin), "default", name, obj, twin.admin_ctx)


def status(twin: Twin, name: str = "web") -> dict:
    return twin.store.get("statefulsets.apps", "default", name)["status"]


def delete_pod(twin: Twin, name: str) -> None:
    twin.api.delete(twin.api.catalog.lookup("", "v1", "pods"), "default", name, DeleteOptions(), twin.admin_ctx)


def revision_of(twin: Twin, pod: str) -> str:
    return twin.store.get("pods", "default", pod)["metadata"]["labels"]["controller-revision-hash"]


def claims(twin: Twin) -> dict[str, dict]:
    return {c["metadata"]["name"]: c for c in twin.store.list("persistentvolumeclaims", "default")[0]}


def bring_up(twin: Twin, count: int, prefix: str = "web-") -> None:
    """Run pods as they appear until ``count`` of them run (OrderedReady creates the next one each time)."""
    for _ in range(count + 1):
        twin.warp(1)
        run_all(twin, prefix=prefix)
    twin.warp(1)


def test_ordered_ready_starts_one_pod_at_a_time_with_a_stable_identity_and_storage():
    twin = make_twin()
    create(twin, manifest())
    twin.warp(5)
    assert names(twin) == ["web-0"], "web-1 waits for web-0 to be Running and Ready"
    run(twin, "web-0", ready=False)
    twin.warp(5)
    assert names(twin) == ["web-0"], "running is not enough: the pod must be ready"
    run(twin, "web-0")
    twin.warp(1)
    assert names(twin) == ["web-0", "web-1"]
    run(twin, "web-1")
    twin.warp(1)
    run(twin, "web-2")
    twin.warp(1)
    assert names(twin) == ["web-0", "web-1", "web-2"]

    pod = twin.store.get("pods", "default", "web-1")
    st = status(twin)
    assert pod["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-1",
                                         "apps.kubernetes.io/pod-index": "1",
                                         "controller-revision-hash": st["updateRevision"]}
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "nginx")
    assert {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-1"}} in pod["spec"]["volumes"]
    owner = pod["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("StatefulSet", "web", True)
    assert sorted(claims(twin)) == ["www-web-0", "www-web-1", "www-web-2"]
    assert claims(twin)["www-web-2"]["metadata"]["labels"] == {"app": "web"}

    assert st == {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                  "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": st["updateRevision"],
                  "updateRevision": st["updateRevision"], "collisionCount": 0}
    assert st["updateRevision"].startswith("web-")
    revision = twin.store.get("controllerrevisions.apps", "default", st["updateRevision"])
    assert revision["revision"] == 1 and revision["data"]["spec"]["template"]["$patch"] == "replace"
    assert messages(twin, "web")[:2] == ["create Claim www-web-0 Pod web-0 in StatefulSet web success",
                                        "create Pod web-0 in StatefulSet web successful"]


def test_parallel_pod_management_creates_every_pod_at_once():
    twin = make_twin()
    create(twin, manifest(podManagementPolicy="Parallel"))
    twin.warp(1)
    assert names(twin) == ["web-0", "web-1", "web-2"]
    assert status(twin)["replicas"] == 3 and "readyReplicas" not in status(twin)


def test_scale_down_removes_the_highest_ordinal_first_and_keeps_the_claims_for_a_scale_up():
    twin = make_twin()
    create(twin, manifest())
    bring_up(twin, 3)
    kept = claims(twin)["www-web-1"]["metadata"]["uid"]
    change(twin, "web", lambda spec: spec.update(replicas=1))
    twin.warp(1)
    assert names(twin) == ["web-0"]
    deletions = [m for m in messages(twin, "web") if m.startswith("delete")]
    assert deletions == ["delete Pod web-2 in StatefulSet web successful",
                         "delete Pod web-1 in StatefulSet web successful"]
    assert sorted(claims(twin)) == ["www-web-0", "www-web-1", "www-web-2"], "the default policy retains claims"
    assert status(twin)["replicas"] == 1

    change(twin, "web", lambda spec: spec.update(replicas=2))
    twin.warp(1)
    assert names(twin) == ["web-0", "web-1"]
    assert claims(twin)["www-web-1"]["metadata"]["uid"] == kept, "web-1 gets its old volume back"


def test_an_unready_pod_blocks_an_ordered_scale_down():
    twin = make_twin()
    create(twin, manifest())
    bring_up(twin, 3)
    run(twin, "web-0", ready=False)
    change(twin, "web", lambda spec: spec.update(replicas=1))
    twin.warp(3)
    assert names(twin) == ["web-0", "web-1", "web-2"], "nothing is deleted while a remaining pod is unhealthy"
    run(twin, "web-0")
    twin.warp(1)
    assert names(twin) == ["web-0"]


def test_claims_are_deleted_as_the_retention_policy_says():
    twin = make_twin()
    create(twin, manifest(persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete", "whenDeleted": "Delete"}))
    bring_up(twin, 3)
    owners = {c: [r["kind"] for r in claim["metadata"].get("ownerReferences", [])] for c, claim in claims(twin).items()}
    assert owners == {"www-web-0": ["StatefulSet"], "www-web-1": ["StatefulSet"], "www-web-2": ["StatefulSet"]}
    change(twin, "web", lambda spec: spec.update(replicas=2))
    twin.warp(1)
    assert sorted(claims(twin)) == ["www-web-0", "www-web-1"], "the scaled-down pod's claim goes with it"
    twin.api.delete(sets(twin), "default", "web", DeleteOptions(), twin.admin_ctx)
    twin.warp(1)
    assert claims(twin) == {} and names(twin) == []


def test_rolling_update_replaces_pods_from_the_highest_ordinal_down_one_healthy_pod_at_a_time():
    twin = make_twin()
    create(twin, manifest())
    bring_up(twin, 3)
    old = status(twin)["currentRevision"]
    change(twin, "web", lambda spec: spec["template"]["spec"]["containers"][0].update(image="nginx:1.26"))
    twin.warp(1)
    new = status(twin)["updateRevision"]
    assert new != old
    assert [revision_of(twin, p) for p in ("web-0", "web-1", "web-2")] == [old, old, new]
    twin.warp(5)
    assert revision_of(twin, "web-1") == old, "web-1 waits until the new web-2 is Running and Ready"
    assert status(twin)["currentRevision"] == old and status(twin)["updatedReplicas"] == 1
    for pod in ("web-2", "web-1", "web-0"):
        run(twin, pod)
        twin.warp(1)
    assert [revision_of(twin, p) for p in ("web-0", "web-1", "web-2")] == [new, new, new]
    assert [m for m in messages(twin, "web") if m.startswith("delete")] == [
        "delete Pod web-2 in StatefulSet web successful", "delete Pod web-1 in StatefulSet web successful",
        "delete Pod web-0 in StatefulSet web successful"]
    st = status(twin)
    assert (st["currentRevision"], st["updateRevision"], st["currentReplicas"], st["updatedReplicas"]) == \
        (new, new, 3, 3)
    revisions = {r["metadata"]["name"]: r["revision"] for r in twin.store.list("controllerrevisions.apps")[0]}
    assert revisions == {old: 1, new: 2}


def test_a_partition_keeps_lower_ordinals_at_the_current_revision():
    twin = make_twin()
    create(twin, manifest(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    bring_up(twin, 3)
    old = status(twin)["currentRevision"]
    change(twin, "web", lambda spec: spec["template"]["spec"]["containers"][0].update(image="nginx:1.26"))
    for _ in range(3):
        twin.warp(1)
        run_all(twin)
    twin.warp(1)
    new = status(twin)["updateRevision"]
    assert [revision_of(twin, p) for p in ("web-0", "web-1", "web-2")] == [old, old, new]
    assert (status(twin)["currentRevision"], status(twin)["updatedReplicas"]) == (old, 1)
    delete_pod(twin, "web-0")
    twin.warp(1)
    assert revision_of(twin, "web-0") == old, "a pod below the partition comes back at the current revision"


def test_on_delete_replaces_a_pod_only_when_it_is_deleted():
    twin = make_twin()
    create(twin, manifest(replicas=2, updateStrategy={"type": "OnDelete"}))
    bring_up(twin, 2)
    old = status(twin)["currentRevision"]
    change(twin, "web", lambda spec: spec["template"]["spec"]["containers"][0].update(image="nginx:1.26"))
    twin.warp(10)
    assert [revision_of(twin, p) for p in ("web-0", "web-1")] == [old, old]
    delete_pod(twin, "web-1")
    twin.warp(1)
    assert revision_of(twin, "web-1") == status(twin)["updateRevision"] != old


def test_a_failed_pod_is_deleted_and_recreated():
    twin = make_twin()
    create(twin, manifest(replicas=2))
    bring_up(twin, 2)
    uid = twin.store.get("pods", "default", "web-1")["metadata"]["uid"]
    finish(twin, "web-1", exit_code=1)
    twin.warp(1)
    pod = twin.store.get("pods", "default", "web-1")
    assert pod is not None and pod["metadata"]["uid"] != uid and pod["status"]["phase"] == "Pending"
    assert ("Normal", "SuccessfulDelete", "delete Pod web-1 in StatefulSet web successful") in events(twin, "web")


def test_the_same_seed_and_actions_give_the_same_statefulset():
    def scenario() -> list:
        twin = make_twin(seed=11)
        create(twin, manifest())
        bring_up(twin, 3)
        change(twin, "web", lambda spec: spec["template"]["spec"]["containers"][0].update(image="nginx:1.26"))
        bring_up(twin, 3)
        pods = [(p["metadata"]["name"], p["metadata"]["uid"], p["metadata"]["labels"]) for p in
                twin.store.list("pods", "default")[0]]
        return [pods, status(twin), sorted(claims(twin)), events(twin, "web")]

    assert scenario() == scenario()


@pytest.fixture
def twin():
    """For kubectl: a clock at wall time, which the twin's certificates are valid for."""
    with Twin(seed=5, nodes=2, controllers={"statefulset"}) as t:
        yield t


def test_kubectl_rollout_status_history_and_undo(twin, kubectl):
    import yaml

    kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest()))
    twin.warp(1)
    assert kubectl("rollout", "status", "statefulset/web", "--watch=false") == "Waiting for 3 pods to be ready...\n"
    bring_up(twin, 3)
    first = status(twin)["currentRevision"]
    # The server defaults rollingUpdate.partition to 0, so kubectl reports a partitioned roll out.
    assert kubectl("rollout", "status", "sts/web", "--watch=false") == \
        "partitioned roll out complete: 3 new pods have been updated...\n"
    assert kubectl("get", "sts", "web", "--no-headers").split()[:2] == ["web", "3/3"]

    kubectl("set", "image", "statefulset/web", "nginx=nginx:1.26")
    twin.warp(1)
    second = status(twin)["updateRevision"]
    assert kubectl("rollout", "status", "sts/web", "--watch=false") == "Waiting for 1 pods to be ready...\n"
    bring_up(twin, 3)
    history = kubectl("rollout", "history", "sts/web").splitlines()
    assert history[0] == "statefulset.apps/web " and [line.split()[0] for line in history[2:] if line] == ["1", "2"]

    assert kubectl("rollout", "undo", "sts/web") == "statefulset.apps/web rolled back\n"
    bring_up(twin, 3)
    st = status(twin)
    assert st["currentRevision"] == st["updateRevision"] == first != second
    assert twin.store.get("controllerrevisions.apps", "default", first)["revision"] == 3
    assert twin.store.get("pods", "default", "web-0")["spec"]["containers"][0]["image"] == "nginx:1.25"
