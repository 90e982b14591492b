"""FinOps faults on the twin: each is injected through the official client on a settled, priced application with
its budget rules, fires the cost alert it declares, and clears once removed; the bill moves as hand computed."""

from __future__ import annotations

import pytest
from kubernetes import client

from pytest_itbench import finops_cluster, finops_setup
from pytest_itbench.evaluate import costs
from pytest_itbench.evaluate.signals import Prometheus
from pytest_itbench.scenario.finops import Budget, Efficiency, NodeGroup

from .twins import AppTwin, check_fault

SHOP = "astronomy-shop"
CPU, RAM, STORAGE = 0.031611, 0.004237, 0.00005479452  # OpenCost's default custom prices
GROUP = NodeGroup(name="general", instance_type="m5.xlarge", min_size=0, max_size=6)


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    app = AppTwin(SHOP, SHOP, tmp_path_factory.mktemp("finops"))
    finops_cluster.write_node_groups(app.api, (GROUP,))
    # Budgets above the settled shop's spend ($0.03/h in its namespace, $1.16/h for its three nodes).
    client.CustomObjectsApi(app.api).create_namespaced_custom_object(
        "monitoring.coreos.com", "v1", SHOP, "prometheusrules",
        finops_setup.budget_rules(SHOP, Budget(namespace=0.05, cluster=1.4)))
    finops_cluster.ensure_namespace(app.api, finops_setup.MONITORING_NAMESPACE)
    client.CustomObjectsApi(app.api).create_namespaced_custom_object(
        "monitoring.coreos.com", "v1", finops_setup.MONITORING_NAMESPACE, "prometheusrules",
        finops_setup.efficiency_rules(SHOP, Efficiency()))
    app.twin.warp(120)
    yield app
    app.stop()


def spend(app: AppTwin) -> costs.Costs:
    return costs.read(Prometheus(app.twin.prometheus_url), SHOP, app.twin.clock.now())


def deployment(name: str) -> dict:
    return {"kind": "Deployment", "namespace": SHOP, "name": name}


def test_oversized_requests_are_billed_and_restored(shop):
    before = spend(shop)
    apps = client.AppsV1Api(shop.api)
    original = apps.read_namespaced_deployment("recommendation", SHOP).spec.template.spec.containers[0].resources
    # The shop requests no CPU but here: the namespace uses about 0.3 of the 4 cores now requested, below the
    # 20 % efficiency threshold (after the rule's 15 minutes); 8Gi against its use brings memory below 30 %.
    check_fault(shop, "oversized-kubernetes-workload-container-requests", deployment("recommendation"),
                {("NamespaceCostOverBudget", ""), ("CPUEfficiencyLow", ""), ("MemoryEfficiencyLow", "")},
                fire_within=25, clear_within=10, container="recommendation", cpu="4", memory="8Gi")
    restored = apps.read_namespaced_deployment("recommendation", SHOP).spec.template.spec.containers[0].resources
    assert restored == original
    assert spend(shop).namespace_cost == pytest.approx(before.namespace_cost, rel=0.25)


def test_idle_replicas_cost_their_memory_limits(shop):
    before = spend(shop)
    record = shop.inject("overprovisioned-kubernetes-workload-replicas", deployment("recommendation"), replicas=20)
    shop.warp_until_firing({("NamespaceCostOverBudget", "")}, 12)
    # nineteen more pods of 500Mi each (requests default to the limits), priced per GiB-hour
    added = spend(shop).memory_cost - before.memory_cost
    assert added == pytest.approx(19 * 500 / 1024 * RAM, rel=0.02)
    shop.remove(record)
    shop.warp_until_clear(10)
    assert client.AppsV1Api(shop.api).read_namespaced_deployment("recommendation", SHOP).spec.replicas == 1


def test_a_runaway_cronjob_piles_up_jobs_until_removed(shop):
    check_fault(shop, "runaway-kubernetes-cronjob", {"kind": "Namespace", "name": SHOP},
                {("NamespaceCostOverBudget", "")}, cpu="500m", memory="512Mi")
    batch = client.BatchV1Api(shop.api)
    assert batch.list_namespaced_cron_job(SHOP).items == []
    assert batch.list_namespaced_job(SHOP).items == []


def test_an_orphaned_volume_is_billed_until_deleted(shop):
    before = spend(shop)
    record = shop.inject("orphaned-kubernetes-persistent-volume", {"kind": "Namespace", "name": SHOP}, size="8Ti")
    shop.warp_until_firing({("ClusterCostOverBudget", "")}, 12)
    volume = client.CoreV1Api(shop.api).read_persistent_volume(record.args.name)
    assert volume.status.phase == "Released"  # its claim is gone; Retain keeps it, and its bill
    assert spend(shop).cluster_cost - before.cluster_cost == pytest.approx(8 * 1024 * STORAGE, rel=1e-3)
    shop.remove(record)
    shop.warp_until_clear(10)
    assert spend(shop).cluster_cost == pytest.approx(before.cluster_cost, rel=1e-6)


def test_a_node_group_minimum_keeps_idle_nodes_until_lowered(shop):
    before = spend(shop)
    templates = {"kind": "ConfigMap", "namespace": "kube-system", "name": "kwok-provider-templates"}
    record = shop.inject("misconfigured-cluster-autoscaler-node-group-min-size", templates, group="general",
                         min_size=3)
    shop.warp_until_firing({("ClusterCostOverBudget", "")}, 12)
    nodes = [n for n in client.CoreV1Api(shop.api).list_node().items if n.metadata.name.startswith("general-")]
    assert len(nodes) == 3
    # an m5.xlarge: 4 cores and 16 GiB, priced on its capacity
    assert spend(shop).cluster_cost - before.cluster_cost == pytest.approx(3 * (4 * CPU + 16 * RAM), rel=1e-3)
    shop.remove(record)
    shop.warp_until_clear(25)  # the autoscaler removes unneeded nodes after 10 minutes
    assert not [n for n in client.CoreV1Api(shop.api).list_node().items if n.metadata.name.startswith("general-")]


def test_a_node_group_on_a_larger_instance_type_costs_more_until_moved_back(shop):
    templates = {"kind": "ConfigMap", "namespace": "kube-system", "name": "kwok-provider-templates"}
    base = shop.inject("misconfigured-cluster-autoscaler-node-group-min-size", templates, group="general",
                       min_size=1)  # one node of the group, as a fixture for the instance-type change
    shop.twin.warp(180)
    before = spend(shop)
    core = client.CoreV1Api(shop.api)
    record = shop.inject("oversized-cluster-autoscaler-node-group-instance-type", templates, group="general",
                         instance_type="m5.4xlarge")
    shop.warp_until_firing({("ClusterCostOverBudget", "")}, 15)

    def group_types() -> list[str]:
        return [n.metadata.labels["node.kubernetes.io/instance-type"] for n in core.list_node().items
                if n.metadata.name.startswith("general-")]
    for _ in range(10):  # the surge node first, then the old one drained and deleted
        if group_types() == ["m5.4xlarge"]:
            break
        shop.twin.warp(60)
    assert group_types() == ["m5.4xlarge"]
    shop.twin.warp(60)  # OpenCost's next emission
    assert spend(shop).cluster_cost - before.cluster_cost == pytest.approx(12 * CPU + 48 * RAM, rel=1e-3)
    shop.remove(record)
    shop.remove(base)
    shop.warp_until_clear(25)
