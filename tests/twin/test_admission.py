"""Admission: service accounts and their token volume, default tolerations, priority, the default storage class."""

import re

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.admission import TOKEN_MOUNT_PATH
from pytest_itbench.twin.errors import Forbidden
from pytest_itbench.twin.store import clone


@pytest.fixture
def bare():
    return Twin(seed=13, tls=False)


def create(twin, obj: dict, namespace: str | None = "default") -> dict:
    res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
    return twin.api.create(res, namespace if res.namespaced else None, clone(obj), twin.admin_ctx)


def pod(name="web", **spec) -> dict:
    body = {"containers": [{"name": "app", "image": "nginx:1.25"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def forbidden(twin, obj: dict) -> str:
    with pytest.raises(Forbidden) as caught:
        create(twin, obj)
    return caught.value.message


def test_pods_mount_a_token_of_their_service_account(bare):
    created = create(bare, pod(initContainers=[{"name": "init", "image": "busybox"}]))
    spec = created["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    [volume] = spec["volumes"]
    assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume["name"])
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}]}
    mount = {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}
    assert spec["containers"][0]["volumeMounts"] == [mount] and spec["initContainers"][0]["volumeMounts"] == [mount]


def test_no_token_when_automount_is_off(bare):
    create(bare, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "quiet"},
                  "automountServiceAccountToken": False, "imagePullSecrets": [{"name": "registry"}]})
    created = create(bare, pod(serviceAccountName="quiet"))
    assert "volumes" not in created["spec"] and "volumeMounts" not in created["spec"]["containers"][0]
    assert created["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    opted_in = create(bare, pod("loud", serviceAccountName="quiet", automountServiceAccountToken=True))
    assert opted_in["spec"]["volumes"][0]["name"].startswith("kube-api-access-")


def test_a_missing_service_account_is_forbidden(bare):
    assert forbidden(bare, pod(serviceAccountName="ghost")) == (
        'pods "web" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found')
    generated = pod(serviceAccountName="ghost")
    generated["metadata"] = {"generateName": "web-5d4f8-"}
    assert forbidden(bare, generated).startswith('pods "web-5d4f8-" is forbidden: error looking up service account')


def test_pods_tolerate_unready_nodes_for_five_minutes(bare):
    tolerations = create(bare, pod())["spec"]["tolerations"]
    assert tolerations == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    own = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 60}
    kept = create(bare, pod("patient", tolerations=[own]))["spec"]["tolerations"]
    assert kept == [own, dict(tolerations[0])]


def test_priority_comes_from_the_class(bare):
    plain = create(bare, pod())["spec"]
    assert (plain["priority"], plain["preemptionPolicy"], plain.get("priorityClassName")) == (
        0, "PreemptLowerPriority", None)
    critical = create(bare, pod("dns", priorityClassName="system-cluster-critical"))["spec"]
    assert critical["priority"] == 2000000000
    assert forbidden(bare, pod("x", priorityClassName="gold")) == (
        'pods "x" is forbidden: no PriorityClass with name gold was found')
    assert forbidden(bare, pod("y", priority=5)) == (
        'pods "y" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority '
        "admission controller computed 0 from the given PriorityClass name")
    create(bare, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch"},
                  "value": -10, "globalDefault": True, "preemptionPolicy": "Never"})
    defaulted = create(bare, pod("z"))["spec"]
    assert (defaulted["priorityClassName"], defaulted["priority"], defaulted["preemptionPolicy"]) == (
        "batch", -10, "Never")
    with pytest.raises(Forbidden) as caught:
        create(bare, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "other"},
                      "value": 5, "globalDefault": True})
    assert caught.value.message == ('priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass batch is '
                                    "already marked as default. Only one default can exist")


def test_claims_get_the_default_storage_class(bare):
    def claim(name, **spec):
        body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        body.update(spec)
        return create(bare, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                             "spec": body})["spec"]

    assert claim("a")["storageClassName"] == "standard"
    assert claim("b", storageClassName="")["storageClassName"] == ""
    assert claim("c", storageClassName="fast")["storageClassName"] == "fast"


def test_kubectl_run_with_a_missing_service_account(kubectl):
    refused = kubectl.fails("run", "probe", "--image=busybox", "--overrides",
                            '{"spec": {"serviceAccountName": "missing"}}')
    assert ('Error from server (Forbidden): pods "probe" is forbidden: error looking up service account '
            'default/missing: serviceaccount "missing" not found') in refused.stderr
