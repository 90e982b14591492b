"""Endpoints and EndpointSlices follow Services' selectors and their pods' readiness; the tests play the kubelet."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from tests.twin.node_agent import create, delete, patch, pod, ready_pod, report

T0 = 1_700_000_000
SLICES = "endpointslices.discovery.k8s.io"
HTTP = [{"name": "http", "containerPort": 8080}]


def _twin(start_time: float | None = T0) -> Twin:
    return Twin(seed=3, nodes=2, start_time=start_time, controllers={"endpoints", "endpointslice"})


@pytest.fixture
def twin():
    """For kubectl: the endpoint controllers alone, on a clock near wall time (its certificates must be valid)."""
    with _twin(start_time=None) as t:
        yield t


def _service(twin, name="web", selector=None, ports=None, **spec) -> dict:
    return create(twin, {"apiVersion": "v1", "kind": "Service",
                         "metadata": {"name": name, "namespace": "default", "labels": {"tier": "front"}},
                         "spec": {"selector": {"app": name} if selector is None else selector,
                                  "ports": ports if ports is not None else
                                  [{"name": "http", "port": 80, "targetPort": "http"}], **spec}})


def _endpoints(twin, name="web") -> dict:
    return twin.store.get("endpoints", "default", name)


def _addresses(twin, name="web", key="addresses") -> list[tuple[str, int]]:
    return sorted((a["ip"], p["port"]) for s in _endpoints(twin, name).get("subsets") or ()
                  for a in s.get(key) or () for p in s.get("ports") or ())


def _slices(twin, service="web") -> list[dict]:
    return [s for s in twin.store.list(SLICES, "default")[0]
            if s["metadata"]["labels"].get("kubernetes.io/service-name") == service]


def _slice_endpoints(twin, service="web") -> dict[str, dict]:
    return {e["targetRef"]["name"]: e for s in _slices(twin, service) for e in s.get("endpoints") or ()}


def test_endpoints_follow_pod_readiness_and_go_away_with_the_pod():
    with _twin() as twin:
        _service(twin)
        ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.1.5")
        pod(twin, "web-2", labels={"app": "web"}, ports=HTTP, node="itbench-worker2")
        report(twin, "web-2", ip="10.244.2.7", ready=False)
        pod(twin, "other", labels={"app": "other"}, ports=HTTP)
        report(twin, "other", ip="10.244.1.9")
        twin.warp(1)
        assert _addresses(twin) == [("10.244.1.5", 8080)]
        assert _addresses(twin, key="notReadyAddresses") == [("10.244.2.7", 8080)]
        subset = _endpoints(twin)["subsets"][0]
        assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
        first = subset["addresses"][0]
        assert first["nodeName"] == "itbench-worker"
        assert first["targetRef"]["kind"] == "Pod" and first["targetRef"]["name"] == "web-1"
        assert _endpoints(twin)["metadata"]["labels"] == {"tier": "front"}
        conditions = {name: e["conditions"] for name, e in _slice_endpoints(twin).items()}
        assert conditions == {"web-1": {"ready": True, "serving": True, "terminating": False},
                              "web-2": {"ready": False, "serving": False, "terminating": False}}

        report(twin, "web-2", ip="10.244.2.7", ready=True)
        twin.warp(1)
        assert _addresses(twin) == [("10.244.1.5", 8080), ("10.244.2.7", 8080)]
        assert _slice_endpoints(twin)["web-2"]["conditions"]["ready"] is True

        delete(twin, "", "v1", "pods", "web-1")  # graceful: the pod is terminating
        twin.warp(1)
        assert _addresses(twin) == [("10.244.2.7", 8080)]
        assert _slice_endpoints(twin)["web-1"]["conditions"] == {"ready": False, "serving": True,
                                                                 "terminating": True}
        delete(twin, "", "v1", "pods", "web-1", grace=0)
        twin.warp(1)
        assert set(_slice_endpoints(twin)) == {"web-2"}


def test_a_named_target_port_the_pod_does_not_declare_leaves_it_out_and_a_number_is_taken_as_it_is():
    with _twin() as twin:
        _service(twin, ports=[{"name": "http", "port": 80, "targetPort": "web"}])
        ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.1.5")
        twin.warp(1)
        assert "subsets" not in _endpoints(twin)
        # The slice still lists the pod, offering no port, as upstream's slices do.
        (s,) = _slices(twin)
        assert s.get("ports") is None and [e["targetRef"]["name"] for e in s["endpoints"]] == ["web-1"]

        patch(twin, "", "v1", "services", "web",
              lambda svc: svc["spec"].update(ports=[{"name": "http", "port": 80, "targetPort": 9999}]))
        twin.warp(1)
        assert _addresses(twin) == [("10.244.1.5", 9999)]
        (after,) = _slices(twin)
        assert after["metadata"]["name"] == s["metadata"]["name"]
        assert after["ports"] == [{"name": "http", "port": 9999, "protocol": "TCP"}]


def test_publish_not_ready_addresses_and_terminating_pods():
    with _twin() as twin:
        _service(twin, publishNotReadyAddresses=True)
        pod(twin, "web-1", labels={"app": "web"}, ports=HTTP)
        report(twin, "web-1", ip="10.244.1.5", ready=False)
        twin.warp(1)
        assert _addresses(twin) == [("10.244.1.5", 8080)]
        assert _slice_endpoints(twin)["web-1"]["conditions"] == {"ready": True, "serving": False,
                                                                 "terminating": False}
        # Pods without an IP or finished are never endpoints.
        pod(twin, "web-2", labels={"app": "web"}, ports=HTTP)
        twin.warp(1)
        assert set(_slice_endpoints(twin)) == {"web-1"}
        report(twin, "web-1", ip="10.244.1.5", phase="Succeeded", ready=False)
        twin.warp(1)
        assert "subsets" not in _endpoints(twin) and _slice_endpoints(twin) == {}


def test_headless_service_with_subdomain_gets_hostnames_and_the_headless_label():
    with _twin() as twin:
        _service(twin, "db", clusterIP="None", ports=[{"name": "pg", "port": 5432}])
        ready_pod(twin, "db-0", labels={"app": "db"}, ip="10.244.1.20", hostname="db-0", subdomain="db")
        twin.warp(1)
        address = _endpoints(twin, "db")["subsets"][0]["addresses"][0]
        assert address["hostname"] == "db-0"
        assert _endpoints(twin, "db")["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
        (s,) = _slices(twin, "db")
        assert s["endpoints"][0]["hostname"] == "db-0"
        assert s["metadata"]["labels"]["service.kubernetes.io/headless"] == ""


def test_slices_are_named_labelled_and_owned_as_upstream_and_survive_a_scale_to_zero():
    with _twin() as twin:
        service = _service(twin)
        ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.1.5")
        twin.warp(1)
        (s,) = _slices(twin)
        assert s["metadata"]["name"].startswith("web-") and len(s["metadata"]["name"]) == len("web-") + 5
        assert s["metadata"]["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                                           "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
        (owner,) = s["metadata"]["ownerReferences"]
        assert owner["uid"] == service["metadata"]["uid"] and owner["controller"] and owner["blockOwnerDeletion"]
        assert s["addressType"] == "IPv4"

        delete(twin, "", "v1", "pods", "web-1", grace=0)
        twin.warp(1)
        (empty,) = _slices(twin)
        assert empty["metadata"]["name"] == s["metadata"]["name"]
        assert empty.get("endpoints") is None and empty.get("ports") is None

        ready_pod(twin, "web-2", labels={"app": "web"}, ports=HTTP, ip="10.244.1.6")
        twin.warp(1)
        (back,) = _slices(twin)
        assert back["metadata"]["name"] == s["metadata"]["name"]
        assert [e["addresses"] for e in back["endpoints"]] == [["10.244.1.6"]]


def test_a_pod_on_a_node_that_does_not_exist_joins_the_slices_once_the_node_does():
    with _twin() as twin:
        _service(twin)
        ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.9.5", node="ghost")
        twin.warp(1)
        assert _addresses(twin) == [("10.244.9.5", 8080)]  # the endpoints controller does not look at nodes
        assert _slice_endpoints(twin) == {}
        twin.add_node("ghost")
        twin.warp(5)
        assert set(_slice_endpoints(twin)) == {"web-1"}


def test_a_slice_holds_at_most_100_endpoints():
    with _twin() as twin:
        _service(twin)
        for i in range(130):
            ready_pod(twin, f"web-{i:03d}", labels={"app": "web"}, ports=HTTP, ip=f"10.244.1.{i + 2}")
        twin.warp(1)
        sizes = sorted(len(s["endpoints"]) for s in _slices(twin))
        assert sizes == [30, 100]
        assert len(_addresses(twin)) == 130


def test_the_last_change_trigger_time_is_the_earliest_unreflected_change():
    with _twin() as twin:
        service = _service(twin)
        twin.warp(5)
        trigger = "endpoints.kubernetes.io/last-change-trigger-time"
        assert _endpoints(twin)["metadata"]["annotations"][trigger] == service["metadata"]["creationTimestamp"]
        ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.1.5")
        became_ready = twin.clock.timestamp()
        twin.warp(3)
        assert _endpoints(twin)["metadata"]["annotations"][trigger] == became_ready
        assert _slices(twin)[0]["metadata"]["annotations"][trigger] == became_ready


def test_services_without_selector_are_left_alone_and_endpoints_go_with_their_service():
    with _twin() as twin:
        _service(twin, "external", selector={})
        create(twin, {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "external", "namespace": "default"},
                      "subsets": [{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"port": 5432}]}]})
        _service(twin)
        ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.1.5")
        twin.warp(1)
        assert _addresses(twin, "external") == [("192.0.2.10", 5432)]
        assert _slices(twin, "external") == []
        delete(twin, "", "v1", "services", "web")
        twin.warp(1)
        assert _endpoints(twin) is None and _slices(twin) == []


def test_a_pod_change_reaches_only_the_services_that_select_it():
    with _twin() as twin:
        for i in range(20):
            _service(twin, f"svc{i}")
        twin.warp(1)
        controller = next(c for c in twin.controllers.controllers if c.name == "endpoints")
        seen = []
        original = controller.reconcile
        controller.reconcile = lambda key, now: seen.append(key) or original(key, now)
        ready_pod(twin, "svc7-a", labels={"app": "svc7"}, ports=HTTP, ip="10.244.1.5")
        twin.warp(1)
        assert seen == [("default", "svc7")]
        seen.clear()
        # A status change the endpoints do not depend on reaches no Service at all.
        patch(twin, "", "v1", "pods", "svc7-a",
              lambda p: p["status"]["containerStatuses"][0].update(restartCount=1), subresource="status")
        twin.warp(1)
        assert seen == []


def _described(kubectl) -> str:
    """The Endpoints line of ``kubectl describe svc web``.

    kubectl 1.31 reads the ready endpoints of the Service's EndpointSlices there; a Service that selects
    nothing has its placeholder slice, which kubectl shows as an empty line (``<none>`` only when there is
    no slice at all), as on a real cluster.
    """
    (line,) = [ln for ln in kubectl("describe", "svc", "web").splitlines() if ln.startswith("Endpoints:")]
    return line[len("Endpoints:"):].strip()


def test_describe_service_shows_no_endpoints_for_a_wrong_selector_and_the_addresses_after_the_repair(twin, kubectl):
    _service(twin, selector={"app": "web"})
    ready_pod(twin, "web-1", labels={"app": "web"}, ports=HTTP, ip="10.244.1.5")
    twin.warp(1)
    assert _described(kubectl) == "10.244.1.5:8080"

    kubectl("patch", "svc", "web", "-p", '{"spec":{"selector":{"app":"wbe"}}}')
    twin.warp(1)
    assert _described(kubectl) == ""
    assert kubectl("get", "endpoints", "web", "--no-headers").split()[1] == "<none>"

    kubectl("patch", "svc", "web", "-p", '{"spec":{"selector":{"app":"web"}}}')
    twin.warp(1)
    assert _described(kubectl) == "10.244.1.5:8080"
    assert kubectl("get", "endpoints", "web", "--no-headers").split()[1] == "10.244.1.5:8080"
    row = kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "--no-headers").split()
    assert row[1:4] == ["IPv4", "8080", "10.244.1.5"]


def test_scaled_to_zero_shows_no_endpoints_and_heals_when_pods_return(twin, kubectl):
    _service(twin)
    for i, ip in enumerate(("10.244.1.5", "10.244.2.5")):
        ready_pod(twin, f"web-{i}", labels={"app": "web"}, ports=HTTP, ip=ip)
    twin.warp(1)
    assert kubectl("get", "endpoints", "web", "--no-headers").split()[1] == "10.244.1.5:8080,10.244.2.5:8080"
    kubectl("delete", "pod", "web-0", "web-1", "--grace-period=0", "--force")
    twin.warp(1)
    assert _described(kubectl) == ""
    assert kubectl("get", "endpoints", "web", "--no-headers").split()[1] == "<none>"
    assert kubectl("get", "endpointslices", "--no-headers", "-l",
                   "kubernetes.io/service-name=web").split()[2:4] == ["<unset>", "<unset>"]
    ready_pod(twin, "web-2", labels={"app": "web"}, ports=HTTP, ip="10.244.1.8")
    twin.warp(1)
    assert _described(kubectl) == "10.244.1.8:8080"
