"""Configuration, autoscaling, Valkey and API-server faults on the twin's astronomy shop: each is injected through
the official client, fires the alerts it declares, and clears once removed."""

from __future__ import annotations

import base64

import pytest
from kubernetes import client

from pytest_itbench.faults import get

from .twins import AppTwin, check_fault

SHOP = "astronomy-shop"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    app = AppTwin(SHOP, SHOP, tmp_path_factory.mktemp("shop"))
    yield app
    app.stop()


def deployment(name: str) -> dict:
    return {"kind": "Deployment", "namespace": SHOP, "name": name}


def test_corrupted_secret_fails_accounting_once_it_restarts(shop):
    core = client.CoreV1Api(shop.api)
    target = {"kind": "Secret", "namespace": SHOP, "name": "accounting-db-credentials"}
    record = shop.inject("corrupted-kubernetes-secret-credentials", target, restart=["accounting"])
    value = base64.b64decode(core.read_namespaced_secret("accounting-db-credentials", SHOP).data["password"])
    assert value != b"otelp" and len(value) == 24 and value.isalnum()
    shop.warp_until_firing({("HighRequestErrorRate", "accounting")}, 10)
    shop.remove(record)
    assert base64.b64decode(core.read_namespaced_secret("accounting-db-credentials", SHOP).data["password"]) == b"otelp"
    shop.warp_until_clear(8)


def test_misconfigured_autoscaler_scales_the_frontend_to_its_maximum(shop):
    hpa = client.AutoscalingV2Api(shop.api)
    apps = client.AppsV1Api(shop.api)
    # The shop's containers request no CPU, so only a memory target has a utilization to act on.
    record = check_fault(shop, "misconfigured-kubernetes-horizontal-pod-autoscaler", deployment("frontend"),
                         {("KubeHpaMaxedOut", "frontend")}, clear_within=12, cpu=None, memory=30, max_replicas=3)
    assert record.saved == {"created": True}
    assert hpa.list_namespaced_horizontal_pod_autoscaler(SHOP).items == []
    assert apps.read_namespaced_deployment("frontend", SHOP).spec.replicas == 3  # the autoscaler's last word


def test_changed_valkey_password_fails_and_slows_the_cart(shop):
    check_fault(shop, "valkey-workload-changed-password", deployment("valkey-cart"),
                {("HighRequestErrorRate", "cart"), ("HighRequestErrorRate", "frontend"),
                 ("HighRequestLatency", "frontend")}, container="valkey-cart")
    core = client.CoreV1Api(shop.api)
    assert "valkey-credentials" not in [s.metadata.name for s in core.list_namespaced_secret(SHOP).items]
    spec = client.AppsV1Api(shop.api).read_namespaced_deployment("valkey-cart", SHOP).spec.template.spec
    assert spec.containers[0].args is None and spec.containers[0].command is None


def test_valkey_out_of_memory_crash_loops(shop):
    check_fault(shop, "valkey-workload-out-of-memory", deployment("valkey-cart"),
                {("KubePodCrashLooping", "valkey-cart"), ("HighRequestErrorRate", "frontend")}, container="valkey-cart")
    spec = client.AppsV1Api(shop.api).read_namespaced_deployment("valkey-cart", SHOP).spec.template.spec
    assert spec.volumes is None and spec.containers[0].command is None


def test_api_server_request_surge_creates_and_removes_its_load_generator(shop):
    """The twin answers API requests without modelling the server's latency under load, so HighRequestLatency,
    which ITBench expects on a real cluster, has no signal here: only the objects are checked."""
    apps, rbac = client.AppsV1Api(shop.api), client.RbacAuthorizationV1Api(shop.api)
    record = shop.inject("kubernetes-api-server-request-surge", {"kind": "Namespace", "name": SHOP},
                         loadGenerator={"options": {"requestsPerSecond": 100}})
    scanner = apps.read_namespaced_deployment("workload-scanner", SHOP)
    assert scanner.spec.replicas == 5 and scanner.spec.template.spec.service_account_name == "workload-scanner"
    assert scanner.spec.template.spec.containers[0].env[0].value == "100"
    assert rbac.read_cluster_role_binding(f"workload-scanner-{SHOP}").subjects[0].namespace == SHOP
    shop.twin.warp(60)
    shop.remove(record)
    assert record.saved["created"] == []
    assert "workload-scanner" not in [d.metadata.name for d in apps.list_namespaced_deployment(SHOP).items]
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        get("kubernetes-api-server-request-surge").check(record.target, {"loadGenerator": {"options": {
            "requestsPerSecond": 0}}})
