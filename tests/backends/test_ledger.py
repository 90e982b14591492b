"""The admin client of a shared cluster records what a trial writes outside its namespaces and undoes it."""

from __future__ import annotations

import pytest
from kubernetes import client as k8s, config as k8s_config, dynamic

from pytest_itbench.backends.ledger import Ledger, LedgerApiClient, ObjectPath, parse


@pytest.mark.parametrize("path, expected", [
    ("/api/v1/namespaces", ObjectPath("/api/v1/namespaces", None)),
    ("/api/v1/namespaces/shop", ObjectPath("/api/v1/namespaces", None, "shop")),
    ("/api/v1/namespaces/shop/finalize", ObjectPath("/api/v1/namespaces", None, "shop", "finalize")),
    ("/api/v1/namespaces/shop/pods/p/eviction", ObjectPath("/api/v1/namespaces/shop/pods", "shop", "p", "eviction")),
    ("/api/v1/nodes/n1", ObjectPath("/api/v1/nodes", None, "n1")),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", ObjectPath("/apis/rbac.authorization.k8s.io/v1/clusterroles",
                                                                   None)),
    ("/apis/apps/v1/namespaces/shop/deployments/cart",
     ObjectPath("/apis/apps/v1/namespaces/shop/deployments", "shop", "cart")),
    ("/version", None), ("/apis", None), ("/api/v1", None),
])
def test_api_paths_name_their_object(path, expected):
    assert parse(path) == expected
    if expected is not None and expected.name == "shop" and expected.collection == "/api/v1/namespaces":
        assert expected.namespace_object == "shop"


@pytest.fixture
def recording(live_twin):
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(config_file=live_twin.kubeconfig_path, client_configuration=configuration)
    ledger = Ledger(namespaces={"shop"})
    client = LedgerApiClient(configuration, ledger)
    yield client, ledger
    client.close()


def test_what_the_trial_creates_outside_its_namespaces_is_labelled_and_deleted(recording):
    client, ledger = recording
    core, rbac = k8s.CoreV1Api(client), k8s.RbacAuthorizationV1Api(client)
    core.create_namespace({"metadata": {"name": "shop"}})
    core.create_namespaced_config_map("shop", {"metadata": {"name": "inside"}})  # the namespace takes it along
    rbac.create_cluster_role({"metadata": {"name": "itbench-agent-1"}, "rules": []})
    core.create_namespaced_config_map("default", {"metadata": {"generateName": "outside-"}})
    core.create_namespace({"metadata": {"name": "monitoring"}})
    assert ledger.created[0] == "/apis/rbac.authorization.k8s.io/v1/clusterroles/itbench-agent-1"
    assert ledger.created[1].startswith("/api/v1/namespaces/default/configmaps/outside-")
    assert ledger.created[2] == "/api/v1/namespaces/monitoring"
    assert rbac.read_cluster_role("itbench-agent-1").metadata.labels == {
        "app.kubernetes.io/managed-by": "pytest-itbench"}
    assert client.undo() == []
    with pytest.raises(k8s.ApiException) as missing:
        rbac.read_cluster_role("itbench-agent-1")
    assert missing.value.status == 404
    assert not [c for c in core.list_namespaced_config_map("default").items if c.metadata.name.startswith("outside-")]
    assert core.read_namespaced_config_map("inside", "shop")  # not the ledger's business


def test_what_the_trial_changes_or_deletes_outside_is_put_back(recording, live_twin):
    client, ledger = recording
    core = k8s.CoreV1Api(client)
    node = core.list_node().items[0].metadata.name
    core.patch_node(node, {"spec": {"unschedulable": True}, "metadata": {"labels": {"fault": "yes"}}})
    scheduling = k8s.SchedulingV1Api(client)
    classes = [c.metadata.name for c in scheduling.list_priority_class().items]
    victim = classes[0]
    scheduling.delete_priority_class(victim)
    assert core.read_node(node).spec.unschedulable
    assert client.undo() == []
    restored = core.read_node(node)
    assert not restored.spec.unschedulable and "fault" not in (restored.metadata.labels or {})
    assert victim in [c.metadata.name for c in scheduling.list_priority_class().items]


def test_the_dynamic_client_is_recorded_too(recording):
    client, ledger = recording
    resource = dynamic.DynamicClient(client).resources.get(api_version="scheduling.k8s.io/v1", kind="PriorityClass")
    resource.create(body={"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": "low"}, "value": -5})
    assert ledger.created == ["/apis/scheduling.k8s.io/v1/priorityclasses/low"]
    assert client.undo() == []
    assert "low" not in [c.metadata.name for c in k8s.SchedulingV1Api(client).list_priority_class().items]
