"""Kyverno in the twin: its kinds, PolicyReports kept by the background scan, and Enforce at admission.

Driven as an operator would: policies and pods applied with the real kubectl, reports read through the
API and through kubectl, the clock warped between.
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from pytest_itbench.twin import Twin
from pytest_itbench.twin.policy import BACKGROUND_SCAN_INTERVAL, blocked_message
from tests.conftest import KUBECTL, Kubectl

pytest.importorskip("pytest_itbench.policy.kyverno")

PRIVILEGED = {
    "apiVersion": "kyverno.io/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "disallow-privileged-containers",
                 "annotations": {"policies.kyverno.io/category": "Pod Security Standards (Baseline)",
                                 "policies.kyverno.io/severity": "medium"}},
    "spec": {
        "validationFailureAction": "Audit",
        "background": True,
        "rules": [{
            "name": "privileged-containers",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {
                "message": "Privileged mode is disallowed.",
                "pattern": {"spec": {"containers": [{"=(securityContext)": {"=(privileged)": "false"}}]}},
            },
        }],
    },
}

LABELS = {
    "apiVersion": "kyverno.io/v1",
    "kind": "Policy",
    "metadata": {"name": "require-team", "namespace": "shop"},
    "spec": {"rules": [{
        "name": "check-team",
        "match": {"any": [{"resources": {"kinds": ["ConfigMap"]}}]},
        "validate": {"message": "The label `team` is required.", "pattern": {"metadata": {"labels": {"team": "?*"}}}},
    }]},
}


def pod(name: str, privileged: bool | None, namespace: str = "default") -> dict:
    container = {"name": "app", "image": "nginx:1.27"}
    if privileged is not None:
        container["securityContext"] = {"privileged": privileged}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [container]}}


def manifest(*docs: dict) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


@pytest.fixture
def kc(cluster, tmp_path):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH; these tests drive the real kubectl binary")
    return Kubectl(cluster, tmp_path / "admin")


@pytest.fixture
def objects(cluster, tmp_path):
    """The official client's CustomObjectsApi against the cluster, to read reports through the API."""
    from kubernetes import client as k8s, config

    configuration = k8s.Configuration()
    config.load_kube_config(config_file=cluster.write_kubeconfig(tmp_path / "client"),
                            client_configuration=configuration)
    with k8s.ApiClient(configuration) as api_client:
        yield k8s.CustomObjectsApi(api_client)


def reports(objects, namespace: str = "default") -> dict[str, dict]:
    """PolicyReports of ``namespace`` through the API, by the name of the resource they are about."""
    listed = objects.list_namespaced_custom_object("wgpolicyk8s.io", "v1alpha2", namespace, "policyreports")
    return {r["scope"]["name"]: r for r in listed["items"]}


def uid_of(cluster, kind_plural: str, namespace: str, name: str) -> str:
    return cluster.store.get(kind_plural, namespace, name)["metadata"]["uid"]


def test_the_kinds_are_served_with_kyvernos_names_and_columns(cluster, kc):
    resources = kc("api-resources", "--api-group=kyverno.io", "-o", "wide")
    assert "clusterpolicies" in resources and "cpol" in resources and "kyverno" in resources
    reports_listing = kc("api-resources", "--api-group=wgpolicyk8s.io")
    assert "policyreports" in reports_listing and "polr" in reports_listing and "cpolr" in reports_listing
    kc("apply", "-f", "-", input=manifest(PRIVILEGED))
    cluster.warp(2)
    header, row = kc("get", "clusterpolicies").splitlines()
    assert header.split() == ["NAME", "ADMISSION", "BACKGROUND", "VALIDATE", "ACTION", "READY", "AGE", "MESSAGE"]
    assert row.split()[:5] == ["disallow-privileged-containers", "true", "true", "Audit", "True"]
    assert row.split()[-1] == "Ready"
    wide = kc("get", "cpol", "-o", "wide").splitlines()[0]
    assert "FAILURE POLICY" in wide and "VALIDATE" in wide and "VERIFY IMAGES" in wide
    status = kc("get", "cpol", "disallow-privileged-containers", "-o", "json", ) and \
        json.loads(kc("get", "cpol", "disallow-privileged-containers", "-o", "json"))["status"]
    assert status["ready"] is True and status["rulecount"] == {"validate": 1, "mutate": 0, "generate": 0,
                                                                 "verifyimages": 0}
    assert status["conditions"][0]["type"] == "Ready" and status["conditions"][0]["reason"] == "Succeeded"


def test_background_scan_reports_violating_and_compliant_pods(cluster, kc, objects):
    kc("apply", "-f", "-", input=manifest(pod("privileged", True), pod("plain", None), pod("unprivileged", False)))
    kc("apply", "-f", "-", input=manifest(PRIVILEGED))
    cluster.warp(5)
    found = reports(objects)
    assert set(found) == {"privileged", "plain", "unprivileged"}
    bad = found["privileged"]
    uid = uid_of(cluster, "pods", "default", "privileged")
    assert bad["metadata"]["name"] == uid
    assert bad["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kyverno"}
    assert bad["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "privileged",
                                                   "uid": uid}]
    assert bad["scope"] == {"apiVersion": "v1", "kind": "Pod", "name": "privileged", "namespace": "default",
                            "uid": uid}
    assert bad["summary"] == {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0}
    [result] = bad["results"]
    assert {k: v for k, v in result.items() if k != "timestamp"} == {
        "policy": "disallow-privileged-containers", "rule": "privileged-containers", "result": "fail",
        "message": "validation error: Privileged mode is disallowed. rule privileged-containers failed at path "
                   "/spec/containers/0/securityContext/privileged/",
        "scored": True, "source": "kyverno", "severity": "medium",
        "category": "Pod Security Standards (Baseline)"}
    assert result["timestamp"]["nanos"] == 0 and result["timestamp"]["seconds"] <= cluster.clock.now()
    for name in ("plain", "unprivileged"):
        assert found[name]["summary"]["pass"] == 1 and found[name]["summary"]["fail"] == 0
        assert found[name]["results"][0]["result"] == "pass"

    table = kc("get", "policyreports", "-n", "default").splitlines()
    assert table[0].split() == ["NAME", "KIND", "NAME", "PASS", "FAIL", "WARN", "ERROR", "SKIP", "AGE"]
    row = next(line for line in table if f"{uid} " in line).split()
    assert row[:8] == [uid, "Pod", "privileged", "0", "1", "0", "0", "0"]
    fails = kc("get", "polr", uid, "-o", "jsonpath={.results[?(@.result==\"fail\")].rule}")
    assert fails == "privileged-containers"


def test_autogen_reports_on_the_pod_controllers(cluster, kc, objects):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                                                 "securityContext": {"privileged": True}}]}}}}
    kc("apply", "-f", "-", input=manifest(PRIVILEGED, deployment))
    cluster.warp(10)
    found = reports(objects)
    assert found["web"]["scope"]["kind"] == "Deployment"
    assert [r["rule"] for r in found["web"]["results"]] == ["autogen-privileged-containers"]
    assert found["web"]["summary"]["fail"] == 1
    pods = [name for name, r in found.items() if r["scope"]["kind"] == "Pod"]
    assert pods and all(found[p]["summary"]["fail"] == 1 for p in pods)
    assert not [r for r in found.values() if r["scope"]["kind"] == "ReplicaSet"]  # Kyverno's resource filters


def test_enforce_denies_admission_with_kyvernos_message(cluster, kc, objects):
    enforce = copy.deepcopy(PRIVILEGED)
    enforce["spec"]["validationFailureAction"] = "Enforce"
    kc("apply", "-f", "-", input=manifest(enforce))
    denied = kc.fails("apply", "-f", "-", input=manifest(pod("x", True)))
    assert denied.stderr == (
        'Error from server: error when creating "STDIN": admission webhook "validate.kyverno.svc-fail" denied '
        "the request: \n\nresource Pod/default/x was blocked due to the following policies \n\n"
        "disallow-privileged-containers:\n"
        "  privileged-containers: 'validation error: Privileged mode is disallowed. rule privileged-containers\n"
        "    failed at path /spec/containers/0/securityContext/privileged/'\n")
    assert cluster.store.get("pods", "default", "x") is None
    kc("apply", "-f", "-", input=manifest(pod("compliant", False)))  # a compliant pod is admitted
    cluster.warp(3)
    assert reports(objects)["compliant"]["summary"]["pass"] == 1
    assert "x" not in reports(objects)


def test_enforce_through_the_api_and_existing_violations(cluster, objects):
    pods = cluster.api.catalog.lookup("", "v1", "pods")
    policies = cluster.api.catalog.lookup("kyverno.io", "v1", "clusterpolicies")
    cluster.api.create(pods, "default", pod("old", True), cluster.admin_ctx)  # before the policy: admitted
    enforce = copy.deepcopy(PRIVILEGED)
    enforce["spec"]["validationFailureAction"] = "Enforce"
    cluster.api.create(policies, None, enforce, cluster.admin_ctx)
    with pytest.raises(Exception) as caught:
        cluster.api.create(pods, "default", pod("new", True), cluster.admin_ctx)
    assert caught.value.code == 400 and caught.value.reason == ""
    assert caught.value.message.startswith('admission webhook "validate.kyverno.svc-fail" denied the request: ')
    # The existing violating pod still runs (its kubelet's status writes and a label change are admitted).
    cluster.warp(20)
    assert cluster.store.get("pods", "default", "old")["status"]["phase"] == "Running"
    old = copy.deepcopy(cluster.store.get("pods", "default", "old"))
    old["metadata"].setdefault("labels", {})["touched"] = "yes"
    cluster.api.update(pods, "default", "old", old, cluster.admin_ctx)
    assert reports(objects)["old"]["summary"]["fail"] == 1


def test_audit_admits_and_the_message_shape():
    assert blocked_message("Pod", "default", "x", {"p": {"r": "m"}}) == (
        "\n\nresource Pod/default/x was blocked due to the following policies \n\np:\n  r: m\n")


def test_deleting_a_resource_removes_its_report(cluster, kc, objects):
    kc("apply", "-f", "-", input=manifest(PRIVILEGED, pod("doomed", True), pod("kept", False)))
    cluster.warp(3)
    uid = uid_of(cluster, "pods", "default", "doomed")
    assert kc("get", "polr", uid, "-o", "name") == f"policyreport.wgpolicyk8s.io/{uid}\n"
    kc("delete", "pod", "doomed", "--grace-period=0", "--force")
    cluster.warp(35)
    assert "doomed" not in reports(objects)
    assert "kept" in reports(objects)
    assert "NotFound" in kc.fails("get", "polr", uid).stderr


def test_a_policy_change_updates_the_results(cluster, kc, objects):
    kc("apply", "-f", "-", input=manifest(PRIVILEGED, pod("p", True)))
    cluster.warp(3)
    assert reports(objects)["p"]["results"][0]["result"] == "fail"
    # The policy now excludes the default namespace: the pod has no applicable rule, and no report.
    changed = copy.deepcopy(PRIVILEGED)
    changed["spec"]["rules"][0]["exclude"] = {"any": [{"resources": {"namespaces": ["default"]}}]}
    kc("apply", "-f", "-", input=manifest(changed))
    cluster.warp(3)
    assert "p" not in reports(objects)
    # Scored off: a fail becomes a warn.
    scored = copy.deepcopy(PRIVILEGED)
    scored["metadata"]["annotations"]["policies.kyverno.io/scored"] = "false"
    kc("apply", "-f", "-", input=manifest(scored))
    cluster.warp(3)
    report = reports(objects)["p"]
    assert report["results"][0]["result"] == "warn" and report["results"][0]["scored"] is False
    assert report["summary"] == {"pass": 0, "fail": 0, "warn": 1, "error": 0, "skip": 0}
    # background: false takes the policy out of the scan; deleting the policy empties the reports.
    kc("apply", "-f", "-", input=manifest(PRIVILEGED))
    cluster.warp(3)
    assert reports(objects)["p"]["summary"]["fail"] == 1
    kc("delete", "clusterpolicy", PRIVILEGED["metadata"]["name"])
    cluster.warp(3)
    assert reports(objects) == {}


def test_a_resource_change_updates_its_report_and_timestamps_stay(cluster, kc, objects):
    kc("create", "namespace", "shop")
    kc("apply", "-f", "-", input=manifest(LABELS))
    kc("create", "configmap", "settings", "-n", "shop")
    cluster.warp(3)
    report = reports(objects, "shop")["settings"]
    assert report["results"][0]["policy"] == "shop/require-team"
    assert report["results"][0]["result"] == "fail"
    first = report["results"][0]["timestamp"]
    cluster.warp(BACKGROUND_SCAN_INTERVAL + 5)  # a periodic rescan that finds nothing new writes nothing
    assert reports(objects, "shop")["settings"]["results"][0]["timestamp"] == first
    kc("label", "configmap", "settings", "-n", "shop", "team=payments")
    cluster.warp(2)
    report = reports(objects, "shop")["settings"]
    assert report["results"][0]["result"] == "pass" and report["results"][0]["timestamp"] != first
    # A namespaced Policy judges only its own namespace.
    kc("create", "configmap", "elsewhere", "-n", "default")
    cluster.warp(2)
    assert "elsewhere" not in reports(objects)


def test_cluster_scoped_resources_get_cluster_policy_reports(cluster, kc):
    policy = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "ns-owner"},
              "spec": {"rules": [{"name": "owner-label", "match": {"any": [{"resources": {"kinds": ["Namespace"]}}]},
                                  "validate": {"message": "owner is required",
                                               "pattern": {"metadata": {"labels": {"owner": "?*"}}}}}]}}
    kc("apply", "-f", "-", input=manifest(policy))
    kc("create", "namespace", "team-a")
    cluster.warp(3)
    res = cluster.api.catalog.lookup("wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports")
    found = {r["scope"]["name"]: r for r in cluster.store.list(res.bucket)[0]}
    assert found["team-a"]["kind"] == "ClusterPolicyReport" and "namespace" not in found["team-a"]["scope"]
    assert found["team-a"]["summary"]["fail"] == 1
    assert "team-a" in kc("get", "cpolr")


def test_a_twin_without_policies_does_not_load_the_engine_and_writes_no_reports(cluster):
    assert cluster.kyverno is not None and cluster.kyverno._engine is None
    pods = cluster.api.catalog.lookup("", "v1", "pods")
    cluster.api.create(pods, "default", pod("a", True), cluster.admin_ctx)
    cluster.warp(30)
    assert cluster.kyverno._engine is None and cluster.kyverno._buckets == frozenset()
    assert cluster.store.count("policyreports.wgpolicyk8s.io") == 0


def test_installed_only_with_the_whole_controller_set():
    assert Twin(seed=1, controllers=(), telemetry=False, workload=False).kyverno is None
    assert Twin(seed=1, controllers=(), telemetry=False, workload=False, kyverno=True).kyverno is not None
