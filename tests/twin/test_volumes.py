"""The PersistentVolume binder and provisioner, alone and with the scheduler (WaitForFirstConsumer)."""

from __future__ import annotations

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions

START = 1_800_000_000
WORKERS = ("itbench-worker", "itbench-worker2", "itbench-worker3")


def res(twin: Twin, plural: str, group: str = ""):
    return twin.api.catalog.lookup(group, "v1", plural)


def make_twin(*controllers: str) -> Twin:
    return Twin(seed=5, nodes=3, start_time=START, controllers=set(controllers) or {"persistentvolume-binder"})


def create(twin: Twin, plural: str, body: dict, group: str = "", namespace: str | None = "default") -> dict:
    resource = res(twin, plural, group)
    return twin.api.create(resource, namespace if resource.namespaced else None, body, twin.admin_ctx)


def storage_class(twin: Twin, name: str, provisioner: str, mode: str = "Immediate", reclaim: str = "Delete") -> None:
    create(twin, "storageclasses", {"metadata": {"name": name}, "provisioner": provisioner,
                                    "volumeBindingMode": mode, "reclaimPolicy": reclaim}, "storage.k8s.io")


def volume(twin: Twin, name: str, size: str, *, modes=("ReadWriteOnce",), klass: str = "manual",
           node: str | None = None, reclaim: str = "Retain") -> None:
    spec = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": klass,
            "persistentVolumeReclaimPolicy": reclaim, "hostPath": {"path": f"/data/{name}"}}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    create(twin, "persistentvolumes", {"metadata": {"name": name}, "spec": spec})


def claim(twin: Twin, name: str, size: str, klass: str | None = None, **spec) -> dict:
    body = {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": size}}, **spec}}
    if klass is not None:
        body["spec"]["storageClassName"] = klass
    return create(twin, "persistentvolumeclaims", body)


def pod_with_claim(twin: Twin, name: str, claim_name: str, **spec) -> dict:
    return create(twin, "pods", {"metadata": {"name": name}, "spec": {
        "containers": [{"name": "db", "image": "postgres:16"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}], **spec}})


def get_claim(twin: Twin, name: str) -> dict:
    return twin.store.get("persistentvolumeclaims", "default", name)


def get_volume(twin: Twin, name: str) -> dict | None:
    return twin.store.get("persistentvolumes", "", name)


def events(twin: Twin, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in twin.store.list("events", "default")[0]
            if e["involvedObject"]["name"] == name]


def test_a_claim_binds_to_the_smallest_available_volume_that_fits():
    with make_twin() as twin:
        storage_class(twin, "manual", "kubernetes.io/no-provisioner")
        volume(twin, "pv-small", "1Gi")
        volume(twin, "pv-big", "10Gi")
        volume(twin, "pv-mid", "5Gi")
        volume(twin, "pv-readonly", "3Gi", modes=("ReadOnlyMany",))
        volume(twin, "pv-other", "3Gi", klass="other")
        twin.warp(1)
        assert {get_volume(twin, n)["status"]["phase"] for n in ("pv-small", "pv-big", "pv-mid")} == {"Available"}
        made = claim(twin, "data", "2Gi", "manual")
        twin.warp(1)
        bound = get_claim(twin, "data")
        assert bound["spec"]["volumeName"] == "pv-mid"
        assert bound["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"}}
        assert bound["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                                    "pv.kubernetes.io/bound-by-controller": "yes"}
        pv = get_volume(twin, "pv-mid")
        assert pv["status"]["phase"] == "Bound"
        assert pv["spec"]["claimRef"]["name"] == "data" and pv["spec"]["claimRef"]["uid"] == made["metadata"]["uid"]
        assert pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
        assert get_volume(twin, "pv-big")["status"]["phase"] == "Available"


def test_a_claim_naming_a_volume_that_cannot_serve_it_stays_pending_with_the_reason():
    with make_twin() as twin:
        storage_class(twin, "manual", "kubernetes.io/no-provisioner")
        volume(twin, "pv-small", "1Gi")
        claim(twin, "data", "2Gi", "manual", volumeName="pv-small")
        twin.warp(1)
        assert get_claim(twin, "data")["status"]["phase"] == "Pending"
        assert ("Warning", "VolumeMismatch", 'Cannot bind to requested volume "pv-small": requested PV is too small') \
            in events(twin, "data")


def test_released_volumes_are_deleted_or_kept_as_their_reclaim_policy_says():
    with make_twin() as twin:
        storage_class(twin, "manual", "kubernetes.io/no-provisioner")
        volume(twin, "pv-keep", "1Gi", reclaim="Retain")
        volume(twin, "pv-drop", "2Gi", reclaim="Delete")
        claim(twin, "keep", "1Gi", "manual")
        claim(twin, "drop", "2Gi", "manual")
        twin.warp(1)
        assert get_claim(twin, "keep")["spec"]["volumeName"] == "pv-keep"
        assert get_claim(twin, "drop")["spec"]["volumeName"] == "pv-drop"
        claims = res(twin, "persistentvolumeclaims")
        for name in ("keep", "drop"):
            twin.api.delete(claims, "default", name, DeleteOptions(), twin.admin_ctx)
        twin.warp(1)
        assert get_volume(twin, "pv-keep")["status"]["phase"] == "Released"
        assert get_volume(twin, "pv-drop") is None


def test_wait_for_first_consumer_provisions_where_the_scheduler_puts_the_pod():
    with make_twin("persistentvolume-binder", "scheduler") as twin:
        made = claim(twin, "data", "1Gi")  # the default class: standard, rancher.io/local-path, WaitForFirstConsumer
        twin.warp(1)
        assert get_claim(twin, "data")["spec"]["storageClassName"] == "standard"
        assert get_claim(twin, "data")["status"]["phase"] == "Pending"
        assert events(twin, "data") == [("Normal", "WaitForFirstConsumer",
                                         "waiting for first consumer to be created before binding")]
        twin.warp(30)  # the controller's 15 s resync repeats the event, counted on it
        (waiting,) = twin.store.list("events", "default")[0]
        assert waiting["count"] == 3

        pod_with_claim(twin, "db", "data")
        twin.warp(1)
        node = twin.store.get("pods", "default", "db")["spec"]["nodeName"]
        assert node in WORKERS
        name = f"pvc-{made['metadata']['uid']}"
        bound = get_claim(twin, "data")
        assert bound["spec"]["volumeName"] == name and bound["status"]["phase"] == "Bound"
        assert bound["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
        assert bound["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == "rancher.io/local-path"
        pv = get_volume(twin, name)
        assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]
        assert pv["spec"]["hostPath"]["path"] == f"/var/local-path-provisioner/{name}_default_data"
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete" and pv["status"]["phase"] == "Bound"
        assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "rancher.io/local-path"
        reasons = [reason for _, reason, _ in events(twin, "data")]
        assert reasons[1:] == ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]
        assert ("Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}") in events(twin, "data")
        assert ("Normal", "ExternalProvisioning",
                "Waiting for a volume to be created either by the external provisioner 'rancher.io/local-path' or "
                "manually by the system administrator. If volume creation is delayed, please verify that the "
                "provisioner is running and correctly registered.") in events(twin, "data")


def test_a_missing_storage_class_fails_provisioning_until_it_is_created():
    with make_twin("persistentvolume-binder", "scheduler") as twin:
        claim(twin, "data", "1Gi", "fast")
        pod_with_claim(twin, "db", "data")
        twin.warp(1)
        assert ("Warning", "ProvisioningFailed", 'storageclass.storage.k8s.io "fast" not found') in events(twin, "data")
        condition = twin.store.get("pods", "default", "db")["status"]["conditions"][0]
        assert condition["message"] == ("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
                                        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                                        "scheduling.")
        storage_class(twin, "fast", "ebs.csi.aws.com")
        twin.warp(5)  # the pod retries within its back-off once the claim is bound
        bound = get_claim(twin, "data")
        assert bound["status"]["phase"] == "Bound"
        assert get_volume(twin, bound["spec"]["volumeName"])["spec"]["csi"]["driver"] == "ebs.csi.aws.com"
        assert twin.store.get("pods", "default", "db")["spec"].get("nodeName") in WORKERS


def test_static_local_volumes_decide_where_the_pod_goes():
    with make_twin("persistentvolume-binder", "scheduler") as twin:
        storage_class(twin, "local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
        claim(twin, "data", "1Gi", "local")
        pod_with_claim(twin, "db", "data")
        twin.warp(1)
        condition = twin.store.get("pods", "default", "db")["status"]["conditions"][0]
        assert condition["message"] == ("0/3 nodes are available: 3 node(s) didn't find available persistent volumes "
                                        "to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful "
                                        "for scheduling.")
        assert ("Normal", "WaitForPodScheduled", "waiting for pod db to be scheduled") in events(twin, "data")
        volume(twin, "local-2", "5Gi", klass="local", node="itbench-worker2")
        twin.warp(2)
        assert twin.store.get("pods", "default", "db")["spec"].get("nodeName") == "itbench-worker2"
        assert get_claim(twin, "data")["spec"]["volumeName"] == "local-2"
        assert get_volume(twin, "local-2")["status"]["phase"] == "Bound"


def test_a_bound_volume_keeps_its_pods_on_its_node():
    with make_twin("persistentvolume-binder", "scheduler") as twin:
        storage_class(twin, "manual", "kubernetes.io/no-provisioner")
        volume(twin, "pinned", "1Gi", node="itbench-worker3")
        claim(twin, "data", "1Gi", "manual")
        twin.warp(1)
        pod_with_claim(twin, "db", "data", nodeSelector={"kubernetes.io/hostname": "itbench-worker"})
        twin.warp(1)
        condition = twin.store.get("pods", "default", "db")["status"]["conditions"][0]
        assert condition["message"] == ("0/3 nodes are available: 1 node(s) had volume node affinity conflict, "
                                        "2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes "
                                        "are available: 3 Preemption is not helpful for scheduling.")
