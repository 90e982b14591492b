"""A node's CPU shared as the CFS shares it: asks met while they fit, else divided by cpu.shares with what the
small asks leave given to the others; and looping kubectl clients on a twin's node, sharing it and shown in usage."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.workload.contention import Claim, share, shares


def test_shares_follow_the_kubelets_conversion_of_the_request():
    assert [shares(r) for r in (None, 0.0, 0.001, 0.05, 0.25, 1.0, 2.5)] == [2, 2, 2, 51, 256, 1024, 2560]


def test_asks_that_fit_are_met_and_capped_by_the_limit():
    claims = [Claim(1.5, 2), Claim(3.0, 256, limit=0.5), Claim(0.2, 1024)]
    assert share(8.0, claims) is False
    assert [c.granted for c in claims] == [1.5, 0.5, 0.2]
    assert [c.capacity for c in claims] == [8.0, 0.5, 8.0]  # what each could use: the node, or its limit
    assert all(c.speed == 1.0 for c in claims)


def test_an_oversubscribed_node_is_divided_by_weight():
    hogs = [Claim(1.0, 256) for _ in range(10)]
    small = Claim(0.04, 2)
    assert share(8.0, [*hogs, small]) is True
    level = 8.0 / (10 * 256 + 2)
    assert all(h.granted == pytest.approx(256 * level) for h in hogs)
    assert small.granted == pytest.approx(2 * level) and small.granted < 0.04
    assert sum(c.granted for c in [*hogs, small]) == pytest.approx(8.0)
    assert small.speed == pytest.approx(2 * level)  # a request of it runs at its sliver of a core


def test_what_small_asks_leave_goes_to_the_others_by_weight():
    light, heavy, capped = Claim(0.5, 1024), Claim(10.0, 2048), Claim(10.0, 1024, limit=1.0)
    assert share(4.0, [light, heavy, capped]) is True
    # light asks less than its fair third and keeps it; capped stops at its limit; heavy takes the rest.
    assert light.granted == pytest.approx(0.5)
    assert capped.granted == pytest.approx(1.0)
    assert heavy.granted == pytest.approx(2.5)
    assert light.capacity >= light.granted and light.speed == 1.0  # its weight reaches past one core


SCANNER = "while true; do kubectl get pods,services,deployments,replicasets -A -o name >/dev/null; sleep 0.01; done"


@pytest.fixture
def node():
    twin = Twin(seed=3, nodes=1, telemetry=False)
    yield twin
    twin.stop()


def scanners(twin: Twin, replicas: int, command: list[str] | None = None, image: str = "bitnami/kubectl:1.31"):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "scan", "namespace": "default"},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "scan"}}, "template": {
                      "metadata": {"labels": {"app": "scan"}}, "spec": {"containers": [{
                          "name": "scanner", "image": image, "command": command or ["/bin/sh", "-c", SCANNER],
                          "resources": {"requests": {"cpu": "250m"}}}]}}}}
    twin.api.create(twin.api.catalog.for_api_version("apps/v1", "Deployment"), "default", deployment,
                    twin.admin_ctx)
    twin.warp(120)
    pods = [p["metadata"]["name"] for p in twin.store.list("pods", "default")[0]]
    assert len(pods) == replicas
    return [twin.metrics.pod_sample("default", name).usage["scanner"].cpu_nanocores / 1e9 for name in pods]


def test_a_busy_kubectl_loop_keeps_close_to_a_core_busy(node):
    used = scanners(node, 4)
    assert all(0.8 < cpu < 0.95 for cpu in used), used  # kubectl's run, back to back: one busy process
    top = node.metrics.node_sample(node.store.list("nodes")[0][0]["metadata"]["name"]).usage[""].cpu_nanocores / 1e9
    assert sum(used) <= top < sum(used) + 0.1  # the node's own daemons besides


def test_loops_that_outnumber_the_cores_share_them(node):
    used = scanners(node, 12)
    assert used == pytest.approx([8.0 / 12] * 12, rel=1e-3)  # equal requests: equal parts of the eight cores


def test_a_loop_without_kubectl_in_its_image_costs_nothing(node):
    used = scanners(node, 2, image="busybox:1.36")
    assert used == [0.0, 0.0] or all(cpu < 0.01 for cpu in used)


def test_a_loop_that_mostly_sleeps_costs_little(node):
    slow = ["/bin/sh", "-c", "while true; do kubectl get pods -A -o name; sleep 10; done"]
    used = scanners(node, 2, command=slow)
    assert all(0.001 < cpu < 0.01 for cpu in used), used
