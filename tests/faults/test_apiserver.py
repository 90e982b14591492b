"""The API-server request surge on the twin's astronomy shop: the scanner's kubectl loops, weighted by their CPU
requests against the shop's containers (which request none), take the nodes' CPU, and the shop slows down until
the scanner is gone. A shop of its own: the frontend's replica count decides its share of a node."""

from __future__ import annotations

import pytest
from kubernetes import client

from pytest_itbench.faults import get

from .twins import AppTwin

SHOP = "astronomy-shop"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    app = AppTwin(SHOP, SHOP, tmp_path_factory.mktemp("shop"))
    yield app
    app.stop()


def test_api_server_request_surge_starves_the_shop_of_cpu(shop):
    """Thirty replicas of the scanner's kubectl loop want more CPU than the three nodes have; weighted by their
    requests against the shop's containers, which request none, they leave the shop a sliver of each node: its
    requests crawl until the scanner is gone."""
    apps, rbac = client.AppsV1Api(shop.api), client.RbacAuthorizationV1Api(shop.api)
    args = {"loadGenerator": {"options": {"requestsPerSecond": 100}}, "replicas": 30}
    assert not shop.alerts()
    record = shop.inject("kubernetes-api-server-request-surge", {"kind": "Namespace", "name": SHOP}, **args)
    scanner = apps.read_namespaced_deployment("workload-scanner", SHOP)
    spec = scanner.spec.template.spec
    assert scanner.spec.replicas == 30 and spec.service_account_name == "workload-scanner"
    assert spec.containers[0].image == "bitnami/kubectl:1.31" and spec.containers[0].env[0].value == "0.010"
    assert spec.containers[0].resources.limits == {"memory": "128Mi"}  # no CPU limit
    assert rbac.read_cluster_role_binding(f"workload-scanner-{SHOP}").subjects[0].namespace == SHOP
    minutes = shop.warp_until_firing({("HighRequestLatency", "frontend")}, 12)
    assert minutes >= 3
    # What an operator sees: the scanner's pods at the top of the CPU table, each near one core.
    now = shop.twin.clock.now()
    top = shop.twin.monitoring.engine.instant_query(
        f'topk(5, sum by (pod) (rate(container_cpu_usage_seconds_total{{namespace="{SHOP}", container!=""}}[2m])))',
        now).value.to_json()
    assert len(top) == 5
    assert all(s["metric"]["pod"].startswith("workload-scanner-") and 0.6 < float(s["value"][1]) < 1.0 for s in top)
    # The operator's repair: the scanner scaled to nothing (its rights and script left in place).
    apps.patch_namespaced_deployment_scale("workload-scanner", SHOP, {"spec": {"replicas": 0}})
    shop.warp_until_clear(6)
    shop.remove(record)
    assert record.saved["created"] == []
    assert "workload-scanner" not in [d.metadata.name for d in apps.list_namespaced_deployment(SHOP).items]
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        get("kubernetes-api-server-request-surge").check(record.target, {"loadGenerator": {"options": {
            "requestsPerSecond": 0}}})


def test_api_server_request_surge_of_five_replicas_fits_the_twins_nodes(shop):
    """ITBench's five replicas keep five cores busy, which the twin's 24 cores absorb: no alert."""
    record = shop.inject("kubernetes-api-server-request-surge", {"kind": "Namespace", "name": SHOP},
                         loadGenerator={"options": {"requestsPerSecond": 100}})
    shop.twin.warp(300)
    assert not shop.alerts()
    shop.remove(record)
    shop.warp_until_clear(6)
