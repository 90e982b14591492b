"""APIServices (apiregistration.k8s.io/v1) through the official client, raw requests and kubectl: the local
ones a cluster starts with and those of CRD groups, kube-aggregator's validation and strategy, and the
availability of service-backed ones."""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

GROUP = "apiregistration.k8s.io"
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
PATH = f"/apis/{GROUP}/v1/apiservices"


@pytest.fixture
def reg(client):
    return k8s.ApiregistrationV1Api(client)


@pytest.fixture
def core(client):
    return k8s.CoreV1Api(client)


def remote(name: str = "v1alpha1.wardle.k8s.io", service: dict | None = None, **spec) -> dict:
    version, _, group = name.partition(".")
    body = {"group": group, "version": version, "groupPriorityMinimum": 1000, "versionPriority": 15,
            "service": service if service is not None else {"namespace": "wardle", "name": "api"}, **spec}
    return {"apiVersion": f"{GROUP}/v1", "kind": "APIService", "metadata": {"name": name}, "spec": body}


def available(reg, name: str):
    conditions = reg.read_api_service_status(name).status.conditions or []
    (condition,) = [c for c in conditions if c.type == "Available"]
    return condition


def message(exc) -> str:
    return json.loads(exc.value.body)["message"]


# ---- what a cluster starts with ---------------------------------------------------------------------------

def test_a_local_api_service_for_each_built_in_group_version(reg):
    items = {s.metadata.name: s for s in reg.list_api_service().items}
    for name in ("v1.", "v1.apps", "v1.batch", "v1.autoscaling", "v2.autoscaling", "v1.rbac.authorization.k8s.io",
                 "v1.events.k8s.io", "v1.apiextensions.k8s.io"):
        assert name in items, name
    # The aggregator's own group and metrics.k8s.io (metrics-server's, behind a Service) are not local.
    assert not {"v1.apiregistration.k8s.io", "v1beta1.metrics.k8s.io"} & set(items)
    core = items["v1."]
    assert core.spec.group is None and core.spec.version == "v1" and core.spec.service is None
    assert (core.spec.group_priority_minimum, core.spec.version_priority) == (18000, 1)
    assert core.metadata.labels == {AUTOMANAGED: "onstart"}
    apps = items["v1.apps"]
    assert (apps.spec.group, apps.spec.group_priority_minimum, apps.spec.version_priority) == ("apps", 17800, 15)
    assert (items["v2.autoscaling"].spec.version_priority, items["v1.autoscaling"].spec.version_priority) == (30, 15)
    (condition,) = apps.status.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "Available", "True", "Local", "Local APIServices are always available")
    assert condition.last_transition_time == apps.metadata.creation_timestamp
    # Deleted, a start-up registration stays deleted.
    reg.delete_api_service("v1.batch")
    assert "v1.batch" not in {s.metadata.name for s in reg.list_api_service().items}


def test_crd_groups_get_local_api_services_while_a_crd_serves_them(client, reg):
    ext = k8s.ApiextensionsV1Api(client)
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    ext.create_custom_resource_definition({
        "metadata": {"name": "widgets.shop.example.com"},
        "spec": {"group": "shop.example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema},
                              {"name": "v1beta1", "served": False, "storage": False, "schema": schema}]}})
    made = reg.read_api_service("v1.shop.example.com")
    assert made.metadata.labels == {AUTOMANAGED: "true"} and made.spec.service is None
    assert (made.spec.group, made.spec.version, made.spec.group_priority_minimum, made.spec.version_priority) == (
        "shop.example.com", "v1", 1000, 100)
    assert available(reg, "v1.shop.example.com").reason == "Local"
    with pytest.raises(ApiException):
        reg.read_api_service("v1beta1.shop.example.com")  # not served
    # Kept as the CRDs say: restored after a deletion or an edit.
    reg.delete_api_service("v1.shop.example.com")
    assert reg.read_api_service("v1.shop.example.com").spec.version_priority == 100
    reg.patch_api_service("v1.shop.example.com", {"spec": {"versionPriority": 7}})
    assert reg.read_api_service("v1.shop.example.com").spec.version_priority == 100
    ext.delete_custom_resource_definition("widgets.shop.example.com")
    with pytest.raises(ApiException) as exc:
        reg.read_api_service("v1.shop.example.com")
    assert exc.value.status == 404


# ---- validation and strategy --------------------------------------------------------------------------------

@pytest.mark.parametrize("body, expected", [
    (remote("v1.wardle.k8s.io", version="v2"),
     'metadata.name: Invalid value: "v1.wardle.k8s.io": must be `spec.version+"."+spec.group`: '
     '"v2.wardle.k8s.io"'),
    ({"metadata": {"name": "v2."}, "spec": {"version": "v2", "groupPriorityMinimum": 0, "versionPriority": 1001}},
     'spec.group: Required value: only v1 may have an empty group and it better be legacy kube, '
     'spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, '
     'spec.versionPriority: Invalid value: 1001: must be positive and less than 1000'),
    ({"metadata": {"name": "v1.local.example.com"},
      "spec": {"group": "local.example.com", "version": "v1", "groupPriorityMinimum": 10, "versionPriority": 1,
               "caBundle": "YWJjZA==", "insecureSkipTLSVerify": True}},
     'spec.caBundle: Invalid value: "4 bytes": local APIServices may not have a caBundle, '
     'spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify'),
    (remote(service={"port": 443}, caBundle="YWJj", insecureSkipTLSVerify=True),
     'spec.service.namespace: Required value, spec.service.name: Required value, '
     'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present'),
    (remote("V1.Bad_Group"),
     'spec.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case '
     'alphanumeric characters'),
])
def test_validated_as_kube_aggregator_does(raw, body, expected):
    status, answer = raw.json("POST", PATH, body)
    assert status == 422 and answer["reason"] == "Invalid"
    assert expected in answer["message"], answer["message"]


def test_strategy_status_defaults_and_conditional_updates(reg, raw):
    made = reg.create_api_service(remote())
    assert made.spec.service.port == 443  # SetDefaults_ServiceReference
    assert made.metadata.generation is None
    # The main endpoint keeps the status; the status endpoint keeps spec, labels and annotations. (The
    # availability check has written the status since the create answered.)
    made = reg.read_api_service(made.metadata.name)
    made.status = k8s.V1APIServiceStatus(conditions=[k8s.V1APIServiceCondition(type="Available", status="True")])
    made.metadata.labels = {"team": "a"}
    kept = reg.replace_api_service(made.metadata.name, made)
    assert kept.metadata.labels == {"team": "a"} and kept.status.conditions[0].status == "False"
    written = reg.patch_api_service_status(made.metadata.name, {
        "metadata": {"labels": {"team": "b"}}, "spec": {"versionPriority": 99},
        "status": {"conditions": [{"type": "Extra", "status": "True"}]}})
    assert written.metadata.labels == {"team": "a"} and written.spec.version_priority == 15
    assert {c.type for c in written.status.conditions} == {"Available", "Extra"}
    with pytest.raises(ApiException) as exc:
        reg.patch_api_service_status(made.metadata.name,
                                     {"status": {"conditions": [{"type": "Extra", "status": "Maybe"}]}})
    # (A strategic merge patch puts the conditions it adds first, as Go's normalizeElementOrder does.)
    assert 'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", ' \
           '"Unknown"' in message(exc)
    # kube-aggregator's registry refuses unconditional updates.
    status, answer = raw.json("PUT", f"{PATH}/{made.metadata.name}", remote())
    assert status == 422 and "metadata.resourceVersion" in answer["message"] and \
        "must be specified for an update" in answer["message"]


# ---- availability of service-backed APIServices --------------------------------------------------------------

def test_availability_follows_the_service_and_its_endpoints(twin, reg, core):
    name = "v1alpha1.wardle.k8s.io"
    reg.create_api_service(remote(service={"namespace": "default", "name": "api", "port": 8443}))
    first = available(reg, name)
    assert (first.status, first.reason, first.message) == (
        "False", "ServiceNotFound", 'service/api in "default" is not present')
    core.create_namespaced_service("default", {"metadata": {"name": "api"}, "spec": {
        "ports": [{"name": "http", "port": 80}]}})
    assert (available(reg, name).reason, available(reg, name).message) == (
        "ServicePortError", 'service/api in "default" is not listening on port 8443')
    service = core.patch_namespaced_service("api", "default", {"spec": {"ports": [{"name": "https", "port": 8443}]}})
    assert (available(reg, name).reason, available(reg, name).message) == (
        "EndpointsNotFound", 'cannot find endpoints for service/api in "default"')
    core.create_namespaced_endpoints("default", {"metadata": {"name": "api"}, "subsets": [
        {"notReadyAddresses": [{"ip": "10.244.1.5"}], "ports": [{"name": "https", "port": 6443}]}]})
    assert (available(reg, name).reason, available(reg, name).message) == (
        "MissingEndpoints", 'endpoints for service/api in "default" have no addresses with port name "https"')
    core.replace_namespaced_endpoints("api", "default", {"metadata": {"name": "api"}, "subsets": [
        {"addresses": [{"ip": "10.244.1.5"}], "ports": [{"name": "https", "port": 6443}]}]})
    ip = service.spec.cluster_ip
    url = f"https://{ip}:8443/apis/wardle.k8s.io/v1alpha1"
    last = available(reg, name)
    assert (last.status, last.reason, last.message) == (
        "False", "FailedDiscoveryCheck",
        f'failing or missing response from {url}: Get "{url}": dial tcp {ip}:8443: connect: connection refused')
    # It stayed False all along: the transition time is the first one's.
    assert last.last_transition_time == first.last_transition_time
    core.delete_namespaced_service("api", "default")
    assert available(reg, name).reason == "ServiceNotFound"


def test_other_service_types_go_straight_to_the_discovery_check(reg, core):
    core.create_namespaced_service("default", {"metadata": {"name": "ext"}, "spec": {
        "type": "ExternalName", "externalName": "api.example.com"}})
    reg.create_api_service(remote("v1.ext.example.com", service={"namespace": "default", "name": "ext"}))
    assert available(reg, "v1.ext.example.com").message.startswith(
        "failing or missing response from https://api.example.com:443/apis/ext.example.com/v1: ")
    core.create_namespaced_service("default", {"metadata": {"name": "headless"}, "spec": {
        "clusterIP": "None", "ports": [{"port": 443}]}})
    reg.create_api_service(remote("v1.headless.example.com", service={"namespace": "default", "name": "headless"}))
    # A headless ClusterIP Service passes the port check; its endpoints are missing.
    assert available(reg, "v1.headless.example.com").reason == "EndpointsNotFound"


# ---- discovery and kubectl ------------------------------------------------------------------------------------

def test_discovery_lists_the_group_first(raw):
    status, groups = raw.json("GET", "/apis")
    assert status == 200 and groups["groups"][0]["name"] == GROUP
    assert groups["groups"][0]["preferredVersion"] == {"groupVersion": f"{GROUP}/v1", "version": "v1"}
    status, resources = raw.json("GET", f"/apis/{GROUP}/v1")
    entries = {r["name"]: r for r in resources["resources"]}
    assert entries["apiservices"]["namespaced"] is False and entries["apiservices"]["kind"] == "APIService"
    assert entries["apiservices"]["categories"] == ["api-extensions"]
    assert entries["apiservices/status"]["verbs"] == ["get", "patch", "update"]
    status, aggregated = raw.json("GET", "/apis", headers={
        "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    (item,) = [i for i in aggregated["items"] if i["metadata"]["name"] == GROUP]
    (resource,) = item["versions"][0]["resources"]
    assert resource["resource"] == "apiservices" and resource["scope"] == "Cluster"
    assert resource["subresources"][0]["subresource"] == "status"


def test_kubectl_get_and_describe(kubectl, reg):
    reg.create_api_service(remote())
    lines = kubectl("get", "apiservices").splitlines()
    assert lines[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["v1."][1:3] == ["Local", "True"] and rows["v1.apps"][1:3] == ["Local", "True"]
    assert rows["v1alpha1.wardle.k8s.io"][1:4] == ["wardle/api", "False", "(ServiceNotFound)"]
    described = kubectl("describe", "apiservice", "v1alpha1.wardle.k8s.io")
    assert 'Message:               service/api in "wardle" is not present' in described
    assert kubectl("get", "apiservice", "v1.apps", "-o", "jsonpath={.metadata.labels}") == \
        '{"kube-aggregator.kubernetes.io/automanaged":"onstart"}'
    assert "apiservices" in kubectl("api-resources", "--api-group=apiregistration.k8s.io")
