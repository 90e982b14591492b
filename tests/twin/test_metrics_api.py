"""metrics.k8s.io: the Metrics model's scrape semantics, then kubectl top and the raw API."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
from kubernetes import client as k8s

from pytest_itbench.twin import quantity
from pytest_itbench.twin.clock import SimClock, format_time
from pytest_itbench.twin.metrics import Metrics
from pytest_itbench.twin.store import Store
from tests.twin.pod_states import start_running_pod

T0 = 1_800_000_000.0  # a multiple of the 15 s scrape interval


# ---- the model --------------------------------------------------------------------------------------------

@pytest.fixture
def model():
    clock = SimClock(start=T0)
    store = Store(clock, random.Random(0))
    return Metrics(clock, store), clock, store


def test_usage_shows_once_it_was_seen_at_two_scrapes(model):
    metrics, clock, _ = model
    metrics.set_pod_usage("ns", "p", "c", cpu="250m", memory="64Mi")
    assert metrics.pod_sample("ns", "p") is None
    clock.warp(15)
    assert metrics.pod_sample("ns", "p") is None  # one point: no rate yet
    clock.warp(15)
    sample = metrics.pod_sample("ns", "p")
    assert (sample.timestamp, sample.window) == (T0 + 30, 15.0)
    assert sample.usage["c"].resources() == {"cpu": "250m", "memory": "64Mi"}


def test_a_container_started_10_s_before_a_scrape_shows_from_its_start(model):
    # metrics-server counts a fresh container's start as a point with no CPU used yet, if it is at least
    # 10 s and less than one resolution before the scrape; nodes have no such rule.
    metrics, clock, _ = model
    clock.warp(3)
    metrics.set_pod_usage("ns", "fresh", "c", cpu="300m", memory="32Mi")
    metrics.set_node_usage("n1", cpu="1", memory="1Gi")
    clock.warp(12)  # the scrape at T0+15 comes 12 s after the start
    sample = metrics.pod_sample("ns", "fresh")
    assert (sample.timestamp, sample.window) == (T0 + 15, 12.0)
    assert sample.usage["c"].resources() == {"cpu": "300m", "memory": "32Mi"}
    assert metrics.node_sample("n1") is None
    clock.warp(6)
    metrics.set_pod_usage("ns", "young", "c", cpu="300m", memory="32Mi")  # at T0+21
    clock.warp(9)
    assert metrics.pod_sample("ns", "young") is None  # 9 s old at the scrape at T0+30
    clock.warp(15)  # at T0+45, from the T0+30 point
    sample = metrics.pod_sample("ns", "young")
    assert (sample.timestamp, sample.window) == (T0 + 45, 15.0)


def test_a_restarted_container_is_fresh_again(model):
    metrics, clock, _ = model
    metrics.set_pod_usage("ns", "p", "c", cpu="100m", memory="32Mi")
    clock.warp(31)
    metrics.clear_pod_usage("ns", "p", "c")
    clock.warp(1)
    metrics.set_pod_usage("ns", "p", "c", cpu="500m", memory="32Mi")  # restarted at T0+32
    clock.warp(13)  # the scrape at T0+45, 13 s after the restart
    sample = metrics.pod_sample("ns", "p")
    assert sample.window == 13.0 and sample.usage["c"].resources()["cpu"] == "500m"


def test_cpu_is_the_mean_over_the_window_and_memory_the_last_value(model):
    metrics, clock, _ = model
    metrics.set_pod_usage("ns", "p", "c", cpu=0.1, memory=100 * 2 ** 20)
    clock.warp(20)
    metrics.set_pod_usage("ns", "p", "c", cpu=0.4, memory=300 * 2 ** 20)  # at T0+20, inside [T0+15, T0+30]
    clock.warp(10)
    usage = metrics.pod_sample("ns", "p").usage["c"]
    assert usage.cpu_nanocores == (5 * 100_000_000 + 10 * 400_000_000) // 15
    assert usage.resources() == {"cpu": "300m", "memory": "300Mi"}


def test_cleared_usage_disappears_at_the_next_scrape(model):
    metrics, clock, _ = model
    metrics.set_node_usage("n1", cpu="1", memory="1Gi")
    clock.warp(30)
    assert metrics.node_sample("n1") is not None
    metrics.clear_node_usage("n1")
    assert metrics.node_sample("n1") is not None  # metrics-server still serves its last scrape
    clock.warp(15)
    assert metrics.node_sample("n1") is None


def test_deleting_a_pod_forgets_its_usage(model):
    metrics, clock, store = model
    store.create("pods", {"metadata": {"name": "p", "namespace": "ns"}})
    metrics.set_pod_usage("ns", "p", "c", cpu="1", memory="1Mi")
    clock.warp(30)
    store.delete("pods", "ns", "p")
    assert metrics.pod_sample("ns", "p") is None


@pytest.mark.parametrize("nanocores,cpu", [(1_234_567, "1234567n"), (5_000_000, "5m"), (1_500_000_000, "1500m"),
                                           (2_000_000_000, "2"), (0, "0")])
def test_cpu_is_written_as_metrics_server_writes_nanocores(nanocores, cpu):
    assert quantity.format_decimal(Fraction(nanocores, 10 ** 9)) == cpu


@pytest.mark.parametrize("memory,text", [(67108864, "64Mi"), (1536, "1536"), (2048, "2Ki"), (1000, "1k"),
                                         (123456789, "123456789")])
def test_memory_is_written_as_binary_si(memory, text):
    assert quantity.format_binary(memory) == text


# ---- the API ------------------------------------------------------------------------------------------------

@pytest.fixture
def busy(twin):
    """Two pods with usage, and usage for one node, scraped twice."""
    start_running_pod(twin, "web", [{"name": "app", "image": "nginx"}, {"name": "proxy", "image": "envoy"}],
                      labels={"app": "web", "tier": "front"})
    start_running_pod(twin, "db", [{"name": "postgres", "image": "postgres:16"}], labels={"app": "db"})
    twin.metrics.set_pod_usage("default", "web", "app", cpu="120m", memory="48Mi")
    twin.metrics.set_pod_usage("default", "web", "proxy", cpu="0.015", memory="20Mi")
    twin.metrics.set_pod_usage("default", "db", "postgres", cpu="1.25", memory="1Gi")
    twin.metrics.set_node_usage("itbench-worker", cpu="2", memory="8Gi")
    twin.warp(30)
    return twin


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def test_top_before_any_usage_says_metrics_are_not_available(twin, kubectl):
    start_running_pod(twin, "web")
    result = kubectl.fails("top", "pods")
    assert result.stderr.strip() == "error: metrics not available yet"
    missing = kubectl.fails("top", "pod", "web")
    assert missing.stderr.strip() == 'Error from server (NotFound): podmetrics.metrics.k8s.io "default/web" not found'


def test_top_pods_and_containers(busy, kubectl):
    assert rows(kubectl("top", "pods")) == [["NAME", "CPU(cores)", "MEMORY(bytes)"], ["db", "1250m", "1024Mi"],
                                            ["web", "135m", "68Mi"]]
    assert rows(kubectl("top", "pods", "--containers", "-l", "tier=front")) == [
        ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"], ["web", "app", "120m", "48Mi"], ["web", "proxy", "15m", "20Mi"]]
    assert rows(kubectl("top", "pods", "-A"))[1:] == [["default", "db", "1250m", "1024Mi"],
                                                      ["default", "web", "135m", "68Mi"]]


def test_top_nodes_relates_usage_to_allocatable(busy, kubectl):
    table = rows(kubectl("top", "nodes"))
    assert table[0] == ["NAME", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"]
    assert table[1] == ["itbench-worker", "2000m", "25%", "8192Mi", "25%"]
    # kubectl lists nodes without metrics after the others, in no fixed order.
    assert sorted(table[2:]) == [[node] + ["<unknown>"] * 4 for node in ("itbench-worker2", "itbench-worker3")]


def test_raw_pod_metrics_carry_timestamp_window_and_usage(busy, kubectl):
    got = json.loads(kubectl("get", "--raw", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web"))
    assert got["kind"] == "PodMetrics" and got["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert got["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert got["timestamp"] == format_time(busy.metrics.last_scrape()) and got["window"] == "15s"
    assert got["containers"] == [{"name": "app", "usage": {"cpu": "120m", "memory": "48Mi"}},
                                 {"name": "proxy", "usage": {"cpu": "15m", "memory": "20Mi"}}]
    nodes = json.loads(kubectl("get", "--raw", "/apis/metrics.k8s.io/v1beta1/nodes"))
    assert nodes["kind"] == "NodeMetricsList"
    assert [(n["metadata"]["name"], n["usage"]) for n in nodes["items"]] == [
        ("itbench-worker", {"cpu": "2", "memory": "8Gi"})]


def test_metrics_not_found_errors(busy, client):
    api = k8s.CustomObjectsApi(client)

    def error(call) -> tuple[int, str]:
        with pytest.raises(k8s.ApiException) as caught:
            call()
        return caught.value.status, json.loads(caught.value.body)["message"]
    assert error(lambda: api.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods",
                                                          "ghost")) == (404, 'pods "ghost" not found')
    assert error(lambda: api.get_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes",
                                                       "itbench-worker2")) == (
        404, 'nodemetrics.metrics.k8s.io "itbench-worker2" not found')
    assert error(lambda: api.get_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes", "ghost")) == (
        404, 'node "ghost" not found')


def test_lists_filter_by_label_and_field_selectors(busy, client):
    api = k8s.CustomObjectsApi(client)
    by_label = api.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods",
                                                 label_selector="app=db")
    assert [item["metadata"]["name"] for item in by_label["items"]] == ["db"]
    by_field = api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "pods", field_selector="metadata.name=web")
    assert [item["metadata"]["name"] for item in by_field["items"]] == ["web"]


def test_kubectl_get_podmetrics_prints_metrics_servers_table(busy, kubectl):
    assert rows(kubectl("get", "podmetrics")) == [["NAME", "CPU", "MEMORY", "WINDOW"], ["db", "1250m", "1Gi", "15s"],
                                                   ["web", "135m", "68Mi", "15s"]]


def test_a_deleted_pod_leaves_top(busy, kubectl):
    kubectl("delete", "pod", "db", "--grace-period=0", "--force")
    assert [row[0] for row in rows(kubectl("top", "pods"))] == ["NAME", "web"]
