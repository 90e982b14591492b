"""Configuration, autoscaling and Valkey faults on the twin's astronomy shop: each is injected through
the official client, fires the alerts it declares, and clears once removed."""

from __future__ import annotations

import base64

import pytest
from kubernetes import client

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
