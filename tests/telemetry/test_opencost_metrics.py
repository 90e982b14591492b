"""OpenCost's metrics on the twin's Prometheus (job ``opencost``): node prices from capacity and the custom pricing
ConfigMap, container allocation as max(request, usage), volumes billed whatever their phase, and a malformed
pricing ConfigMap made visible without breaking anything."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin

from .monitoring_helpers import START, create, delete, one
from .opencost_helpers import (DEFAULT_CPU, DEFAULT_GPU, DEFAULT_RAM, DEFAULT_STORAGE, GIB, MIB, claim, deployment,
                               pricing_configmap, update_pricing, volume)

NODE_FAMILIES = ("node_cpu_hourly_cost", "node_ram_hourly_cost", "node_gpu_hourly_cost", "node_gpu_count",
                 "node_total_hourly_cost", "kubecost_node_is_spot")


@pytest.fixture
def twin():
    t = Twin(seed=11, start_time=START, workload=False)
    yield t
    t.stop()


def add_nodes(twin: Twin) -> None:
    twin.add_node("m5-node", capacity={"cpu": "4", "memory": "16Gi"},
                  labels={"node.kubernetes.io/instance-type": "m5.xlarge",
                          "topology.kubernetes.io/region": "us-east-1"})
    twin.add_node("odd-node", capacity={"cpu": "3500m", "memory": "8Gi"}, labels={"lifecycle": "spot"})
    twin.add_node("gpu-node", capacity={"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"})


def node_value(twin: Twin, family: str, node: str) -> float:
    return one(twin, f'{family}{{node="{node}"}}')[1]


def test_node_costs_are_capacity_times_the_default_custom_prices(twin):
    add_nodes(twin)
    twin.warp(30)
    labels, total = one(twin, 'node_total_hourly_cost{node="m5-node"}')
    uid = twin.store.get("nodes", "", "m5-node")["metadata"]["uid"]
    assert labels == {"instance": "m5-node", "node": "m5-node", "instance_type": "m5.xlarge", "region": "us-east-1",
                      "provider_id": "kind://docker/itbench/m5-node", "arch": "amd64", "uid": uid, "job": "opencost"}
    # 4 vCPUs at $0.031611 + 16 GiB at $0.004237 per hour
    assert total == pytest.approx(4 * 0.031611 + 16 * 0.004237)  # 0.194236
    assert node_value(twin, "node_cpu_hourly_cost", "m5-node") == DEFAULT_CPU
    assert node_value(twin, "node_ram_hourly_cost", "m5-node") == DEFAULT_RAM
    assert node_value(twin, "node_gpu_hourly_cost", "m5-node") == 0
    assert node_value(twin, "node_gpu_count", "m5-node") == 0
    # 3500m is priced as 4 vCPUs (Quantity.Value() rounds up); no spotLabel is configured, so not spot.
    assert node_value(twin, "node_total_hourly_cost", "odd-node") == pytest.approx(4 * 0.031611 + 8 * 0.004237)
    assert node_value(twin, "kubecost_node_is_spot", "odd-node") == 0
    # 2 GPUs at $0.95 on top of 8 vCPUs and 32 GiB
    assert node_value(twin, "node_gpu_hourly_cost", "gpu-node") == DEFAULT_GPU
    assert node_value(twin, "node_gpu_count", "gpu-node") == 2
    assert node_value(twin, "node_total_hourly_cost", "gpu-node") == pytest.approx(8 * 0.031611 + 32 * 0.004237
                                                                                    + 2 * 0.95)
    assert one(twin, 'up{job="opencost"}')[1] == 1
    # OpenCost's own copy of node capacity, which its idle computation reads
    assert node_value(twin, "kube_node_status_capacity_cpu_cores", "odd-node") == 3.5


def test_the_pricing_configmap_sets_prices_and_spot_nodes_get_spot_prices(twin):
    add_nodes(twin)
    pricing_configmap(twin, {"provider": "custom", "CPU": "0.05", "RAM": "0.01", "spotCPU": "0.02",
                             "spotRAM": "0.004", "GPU": "2.5", "spotLabel": "lifecycle", "spotLabelValue": "spot"})
    twin.warp(30)
    assert node_value(twin, "node_total_hourly_cost", "m5-node") == pytest.approx(4 * 0.05 + 16 * 0.01)  # 0.36
    assert node_value(twin, "node_cpu_hourly_cost", "odd-node") == 0.02
    assert node_value(twin, "node_total_hourly_cost", "odd-node") == pytest.approx(4 * 0.02 + 8 * 0.004)  # 0.112
    assert node_value(twin, "kubecost_node_is_spot", "odd-node") == 1
    assert node_value(twin, "node_total_hourly_cost", "gpu-node") == pytest.approx(8 * 0.05 + 32 * 0.01 + 2 * 2.5)
    # A change to the ConfigMap is priced at OpenCost's next minute, as it watches its pricing file.
    update_pricing(twin, {"CPU": "0.07", "RAM": "0.01"})
    twin.warp(60)
    assert node_value(twin, "node_cpu_hourly_cost", "m5-node") == 0.07
    assert node_value(twin, "node_total_hourly_cost", "m5-node") == pytest.approx(4 * 0.07 + 16 * 0.01)
    assert node_value(twin, "kubecost_node_is_spot", "odd-node") == 0  # no spotLabel any more


def warning_events(twin: Twin) -> list[dict]:
    return [e for e in twin.store.list("events", "opencost")[0] if e.get("reason") == "InvalidCustomPricing"]


def test_a_malformed_price_keeps_its_default_and_is_reported_on_the_configmap(twin):
    add_nodes(twin)
    pricing_configmap(twin, {"CPU": "cheap", "RAM": "0.01"})
    twin.warp(30)
    assert node_value(twin, "node_cpu_hourly_cost", "m5-node") == DEFAULT_CPU  # the default, not 0
    assert node_value(twin, "node_ram_hourly_cost", "m5-node") == 0.01
    assert one(twin, 'up{job="opencost"}')[1] == 1
    events = warning_events(twin)
    assert len(events) == 1 and events[0]["type"] == "Warning"
    assert events[0]["involvedObject"]["name"] == "custom-pricing-model"
    assert "opencost/custom-pricing-model" in events[0]["message"] and "'CPU'" in events[0]["message"]
    twin.warp(120)
    assert warning_events(twin)[0].get("count", 1) == 1  # reported once per change, not at every emission


def test_a_pricing_file_of_numbers_falls_back_to_every_default(twin):
    add_nodes(twin)
    pricing_configmap(twin, '{"CPU": 0.05, "RAM": "0.01"}')  # OpenCost's prices are strings
    twin.warp(30)
    assert node_value(twin, "node_cpu_hourly_cost", "m5-node") == DEFAULT_CPU
    assert node_value(twin, "node_ram_hourly_cost", "m5-node") == DEFAULT_RAM
    assert "'CPU'" in warning_events(twin)[0]["message"]


def test_container_allocation_is_the_larger_of_request_and_usage(twin):
    twin.add_node("worker", capacity={"cpu": "4", "memory": "16Gi"})
    # CPU: a quarter core requested, far more than nginx idles at; memory: 4 MiB requested, less than it uses.
    create(twin, deployment("web", requests={"cpu": "250m", "memory": "4Mi"}))
    create(twin, deployment("bare"))  # nothing requested: its allocation is its usage
    twin.warp(300)
    cpu_labels, cpu = one(twin, 'container_cpu_allocation{container="web"}')
    pod = twin.store.list("pods", "default")[0]
    web = next(p for p in pod if p["metadata"]["name"].startswith("web-"))
    assert cpu_labels == {"namespace": "default", "pod": web["metadata"]["name"], "container": "web",
                          "instance": "worker", "node": "worker", "uid": web["metadata"]["uid"], "job": "opencost"}
    used = one(twin, 'rate(container_cpu_usage_seconds_total{container="web"}[2m])')[1]
    assert 0 < used < 0.25 and cpu == 0.25
    working_set = one(twin, 'container_memory_working_set_bytes{container="web"}')[1]
    assert working_set > 4 * MIB
    assert one(twin, 'container_memory_allocation_bytes{container="web"}')[1] == working_set
    assert one(twin, 'container_cpu_allocation{container="bare"}')[1] == pytest.approx(
        one(twin, 'rate(container_cpu_usage_seconds_total{container="bare"}[2m])')[1])
    assert one(twin, 'container_gpu_allocation{container="web"}')[1] == 0
    # The OpenCost copy of the pod's labels, which its allocation reads for label aggregation
    assert one(twin, 'kube_pod_labels{label_app="web"}')[0]["pod"] == web["metadata"]["name"]


def test_a_released_volume_keeps_billing(twin):
    twin.add_node("worker", capacity={"cpu": "4", "memory": "16Gi"})
    create(twin, volume("orphan", "10Gi"))
    old = create(twin, claim("old", "10Gi", "orphan"))
    twin.warp(30)
    assert twin.store.get("persistentvolumes", "", "orphan")["status"]["phase"] == "Bound"
    delete(twin, old)
    twin.warp(120)
    assert twin.store.get("persistentvolumes", "", "orphan")["status"]["phase"] == "Released"
    labels, price = one(twin, 'pv_hourly_cost{persistentvolume="orphan"}')
    assert price == DEFAULT_STORAGE  # per GiB-hour: the volume's size is a separate series
    assert labels["volumename"] == "orphan" and "provider_id" not in labels
    assert one(twin, 'kube_persistentvolume_capacity_bytes{persistentvolume="orphan"}')[1] == 10 * GIB
    assert one(twin, 'kube_persistentvolume_status_phase{persistentvolume="orphan", phase="Released"}')[1] == 1
    # What it costs an hour, as a FinOps query would put it: 10 GiB at $0.00005479452
    assert one(twin, 'pv_hourly_cost * on(persistentvolume) kube_persistentvolume_capacity_bytes / 2^30')[1] \
        == pytest.approx(10 * DEFAULT_STORAGE)


def test_a_mounted_claim_is_allocated_to_its_pod(twin):
    twin.add_node("worker", capacity={"cpu": "4", "memory": "16Gi"})
    create(twin, volume("data-pv", "5Gi"))
    create(twin, claim("data", "5Gi", "data-pv"))
    create(twin, deployment("db", requests={"cpu": "100m"}, claim="data"))
    twin.warp(120)
    labels, value = one(twin, "pod_pvc_allocation")
    assert value == 5 * GIB
    assert labels["persistentvolumeclaim"] == "data" and labels["persistentvolume"] == "data-pv"
    assert labels["pod"].startswith("db-") and labels["namespace"] == "default"


def test_families_are_registered_for_metadata(twin):
    families = twin.monitoring.metadata.families()
    for family in NODE_FAMILIES + ("container_cpu_allocation", "container_memory_allocation_bytes", "pv_hourly_cost",
                                   "pod_pvc_allocation", "kubecost_load_balancer_cost", "kube_pod_labels"):
        assert families[family][0].type == "gauge"
    assert families["node_total_hourly_cost"][0].help == "node_total_hourly_cost Total node cost per hour"
