"""cAdvisor through the kubelets: cumulative CPU from the usage model, CFS throttling only at the cap, memory,
per-container and per-pod cgroups, restarts as new series, a down kubelet as ``up`` 0."""

from __future__ import annotations

import pytest

from .monitoring_helpers import NODE, START, create, one, pod, pod_status, quiet_twin, running, set_status, vector

WEB_ID = "1" * 64
SIDECAR_ID = "2" * 64


@pytest.fixture
def twin():
    t = quiet_twin()
    yield t
    t.stop()


def web(twin, cpu_limit: str | None = "500m"):
    limits = {"memory": "256Mi", **({"cpu": cpu_limit} if cpu_limit else {})}
    created = create(twin, pod("web-0", [
        {"name": "web", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m"}, "limits": limits}},
        {"name": "sidecar", "image": "busybox:1.36"}]))
    set_status(twin, created, pod_status("Running", [running("web", WEB_ID), running("sidecar", SIDECAR_ID,
                                                                                      image="docker.io/library/busybox:1.36")],
                                         ready=True, qos="Burstable"))
    return created


def usage(twin, container: str, cpu: float, memory: int) -> None:
    twin.metrics.set_pod_usage("default", "web-0", container, cpu=cpu, memory=memory)


def test_cpu_time_accumulates_usage_times_time(twin):
    web(twin)
    usage(twin, "web", 0.25, 50 * 2 ** 20)
    usage(twin, "sidecar", 0.01, 2 ** 20)
    twin.warp(75)
    # Used at 0.25 cores since the container started at START: 75 s of it by the scrape at START + 75.
    assert one(twin, 'container_cpu_usage_seconds_total{container="web"}')[1] == pytest.approx(18.75)
    twin.warp(5)
    usage(twin, "web", 0.5, 50 * 2 ** 20)  # a change between scrapes counts from its moment
    twin.warp(10)
    assert one(twin, 'container_cpu_usage_seconds_total{container="web"}')[1] == pytest.approx(18.75 + 1.25 + 5)
    # Between the last two scrapes: 5 s at 0.25 cores and 10 s at 0.5.
    assert one(twin, 'irate(container_cpu_usage_seconds_total{container="web"}[1m])')[1] == pytest.approx(
        (0.25 * 5 + 0.5 * 10) / 15)


def test_series_carry_the_kubelet_and_target_labels(twin):
    web(twin)
    usage(twin, "web", 0.25, 50 * 2 ** 20)
    usage(twin, "sidecar", 0.01, 2 ** 20)
    twin.warp(15)
    labels, _ = one(twin, 'container_cpu_usage_seconds_total{container="web"}')
    uid = twin.store.get("pods", "default", "web-0")["metadata"]["uid"].replace("-", "_")
    assert labels == {
        "container": "web", "cpu": "total", "namespace": "default", "pod": "web-0", "name": WEB_ID,
        "image": "docker.io/library/nginx:1.27",
        "id": f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid}.slice/cri-containerd-{WEB_ID}.scope",
        "job": "kubelet", "metrics_path": "/metrics/cadvisor", "endpoint": "https-metrics", "node": NODE,
        "instance": "172.18.0.3:10250", "service": "prometheus-kube-prometheus-kubelet"}
    up, value = one(twin, 'up{job="kubelet"}')
    assert value == 1 and up["node"] == NODE and up["namespace"] == "kube-system"


def test_memory_gauges_follow_the_working_set(twin):
    web(twin)
    usage(twin, "web", 0.1, 50 * 2 ** 20)
    usage(twin, "sidecar", 0.01, 2 ** 20)
    twin.warp(15)
    for name in ("container_memory_working_set_bytes", "container_memory_usage_bytes", "container_memory_rss"):
        assert one(twin, f'{name}{{container="web"}}')[1] == 50 * 2 ** 20
    usage(twin, "web", 0.1, 80 * 2 ** 20)
    twin.warp(15)
    assert one(twin, 'container_memory_working_set_bytes{container="web"}')[1] == 80 * 2 ** 20
    assert one(twin, 'container_start_time_seconds{container="web"}')[1] == START


def test_the_pod_cgroup_sums_its_containers(twin):
    web(twin)
    usage(twin, "web", 0.2, 50 * 2 ** 20)
    usage(twin, "sidecar", 0.05, 2 ** 20)
    twin.warp(30)
    pod_cpu = vector(twin, 'container_cpu_usage_seconds_total{pod="web-0", container=""}')
    assert list(pod_cpu.values()) == [pytest.approx(0.25 * 30)]
    assert dict(next(iter(pod_cpu)))["id"].endswith(".slice")
    assert one(twin, 'container_memory_working_set_bytes{pod="web-0", container=""}')[1] == 51 * 2 ** 20
    # Summing without container!="" double-counts, as on a real cluster.
    assert one(twin, 'sum(container_memory_working_set_bytes{pod="web-0"})')[1] == 2 * 51 * 2 ** 20


def test_cfs_throttling_only_while_capped_at_the_limit(twin):
    web(twin, cpu_limit="500m")
    usage(twin, "web", 0.5, 50 * 2 ** 20)  # at the limit: the quota runs out in every period
    usage(twin, "sidecar", 0.01, 2 ** 20)
    twin.warp(30)
    usage(twin, "web", 0.2, 50 * 2 ** 20)
    twin.warp(30)
    assert one(twin, 'container_cpu_cfs_periods_total{container="web"}')[1] == 600  # 60 s of 100 ms periods
    assert one(twin, 'container_cpu_cfs_throttled_periods_total{container="web"}')[1] == 300
    twin.warp(60)
    assert one(twin, 'increase(container_cpu_cfs_throttled_periods_total{container="web"}[45s])')[1] == 0
    # No CPU limit, no CFS quota: cAdvisor reports no CFS series for the sidecar.
    assert vector(twin, 'container_cpu_cfs_periods_total{container="sidecar"}') == {}


def test_a_restart_is_a_new_container_and_the_old_series_go_stale(twin):
    created = web(twin)
    usage(twin, "web", 0.25, 50 * 2 ** 20)
    usage(twin, "sidecar", 0.01, 2 ** 20)
    twin.warp(60)
    new_id = "3" * 64
    set_status(twin, created, pod_status("Running", [
        running("web", new_id, started="2027-01-15T08:01:00Z", restarts=1),
        running("sidecar", SIDECAR_ID, image="docker.io/library/busybox:1.36")], ready=True, qos="Burstable"))
    twin.warp(15)
    labels, value = one(twin, 'container_cpu_usage_seconds_total{container="web"}')
    assert labels["name"] == new_id and value == pytest.approx(0.25 * 15)
    # The pod's cgroup outlives its containers: its counter keeps growing through the restart.
    assert one(twin, 'container_cpu_usage_seconds_total{pod="web-0", container=""}')[1] == pytest.approx(
        0.26 * 75)


def test_a_node_whose_kubelet_is_down_answers_no_scrape(twin):
    web(twin)
    usage(twin, "web", 0.25, 50 * 2 ** 20)
    usage(twin, "sidecar", 0.01, 2 ** 20)
    twin.warp(15)
    assert vector(twin, 'container_memory_working_set_bytes{container="web"}')
    node = twin.api.get(twin.api.catalog.lookup("", "v1", "nodes"), "", NODE)
    for condition in node["status"]["conditions"]:
        if condition["type"] == "Ready":
            condition["status"] = "Unknown"
    twin.api.update(twin.api.catalog.lookup("", "v1", "nodes"), None, NODE, node, twin.admin_ctx,
                    subresource="status")
    twin.warp(15)
    assert one(twin, 'up{job="kubelet"}')[1] == 0
    assert one(twin, 'scrape_samples_scraped{job="kubelet"}')[1] == 0
    assert vector(twin, 'container_memory_working_set_bytes{container="web"}') == {}
