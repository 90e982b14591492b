"""Network faults on the twin: each is injected through the official client on a settled application, fires the
alerts it declares on the services that suffer, and clears once removed."""

from __future__ import annotations

import pytest
from kubernetes import client

from .twins import AppTwin, check_fault

SHOP = "astronomy-shop"
HOTEL = "hotel-reservation"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    app = AppTwin(SHOP, SHOP, tmp_path_factory.mktemp("shop"))
    yield app
    app.stop()


@pytest.fixture(scope="module")
def hotel(tmp_path_factory):
    app = AppTwin(HOTEL, HOTEL, tmp_path_factory.mktemp("hotel"))
    yield app
    app.stop()


def service(ns: str, name: str) -> dict:
    return {"kind": "Service", "namespace": ns, "name": name}


def deployment(ns: str, name: str) -> dict:
    return {"kind": "Deployment", "namespace": ns, "name": name}


def test_deleted_service_fails_its_callers_and_comes_back(shop):
    core = client.CoreV1Api(shop.api)
    before = core.read_namespaced_service("product-catalog", SHOP)
    record = check_fault(shop, "deleted-kubernetes-service", service(SHOP, "product-catalog"),
                         {("HighRequestErrorRate", "frontend"), ("HighRequestErrorRate", "frontend-proxy")})
    after = core.read_namespaced_service("product-catalog", SHOP)
    assert after.spec.selector == before.spec.selector and after.spec.ports[0].port == before.spec.ports[0].port
    assert after.metadata.uid != before.metadata.uid  # re-created, not merely left alone
    assert "service" in record.saved


def test_deleted_cache_service_three_hops_behind_the_hotel_frontend(hotel):
    check_fault(hotel, "deleted-kubernetes-service", service(HOTEL, "memcached-rate"),
                {("HighRequestErrorRate", "rate"), ("HighRequestErrorRate", "search"),
                 ("HighRequestErrorRate", "frontend")})


def test_invalid_selector_empties_the_endpoints(shop):
    core = client.CoreV1Api(shop.api)
    original = core.read_namespaced_service("cart", SHOP).spec.selector
    record = shop.inject("invalid-kubernetes-service-selector", service(SHOP, "cart"))
    shop.twin.warp(5)
    assert core.read_namespaced_service("cart", SHOP).spec.selector == {
        **original, "app.kubernetes.io/name": "invalid-workload"}
    endpoints = core.read_namespaced_endpoints("cart", SHOP)
    assert not any(s.addresses for s in endpoints.subsets or []), endpoints.subsets
    shop.warp_until_firing({("HighRequestErrorRate", "frontend")}, 8)
    shop.remove(record)
    assert core.read_namespaced_service("cart", SHOP).spec.selector == original
    shop.warp_until_clear(8)


def test_invalid_selector_on_a_hotel_service(hotel):
    check_fault(hotel, "invalid-kubernetes-service-selector", service(HOTEL, "reservation"),
                {("HighRequestErrorRate", "frontend")})


def test_ingress_blocking_policy_cuts_the_frontend_off(shop):
    net = client.NetworkingV1Api(shop.api)
    record = check_fault(shop, "ingress-port-blocking-network-policy", deployment(SHOP, "frontend"),
                         {("HighRequestErrorRate", "frontend-proxy"), ("NoRequestsReceived", "frontend")},
                         fire_within=14)
    assert record.saved["policy"] == "frontend-ingress"
    assert [p.metadata.name for p in net.list_namespaced_network_policy(SHOP).items] == []


def test_dns_policy_default_breaks_every_lookup_of_checkout(shop):
    apps = client.AppsV1Api(shop.api)
    record = shop.inject("failing-name-resolution-kubernetes-workload-dns-policy", deployment(SHOP, "checkout"))
    assert apps.read_namespaced_deployment("checkout", SHOP).spec.template.spec.dns_policy == "Default"
    shop.warp_until_firing({("HighRequestErrorRate", "checkout"), ("HighRequestErrorRate", "frontend")}, 8)
    shop.remove(record)
    assert apps.read_namespaced_deployment("checkout", SHOP).spec.template.spec.dns_policy == "ClusterFirst"
    shop.warp_until_clear(8)
