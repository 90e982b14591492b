"""The horizontal-pod-autoscaler: usage set through the Metrics model, the test playing the kubelet and the
Deployment controller (it creates the pods; the HPA writes the Deployment's scale)."""

from __future__ import annotations

import pytest

from pytest_itbench.twin import Twin
from pytest_itbench.twin.clock import parse_time
from pytest_itbench.twin.controllers.replica_calculator import PodMetric, resource_replicas
from tests.twin.node_agent import create, events, patch, pod, report

T0 = 1_700_000_000
HPAS = "horizontalpodautoscalers.autoscaling"


def _twin(start_time: float | None = T0) -> Twin:
    return Twin(seed=11, nodes=2, start_time=start_time, controllers={"horizontal-pod-autoscaler"})


@pytest.fixture
def twin():
    """For kubectl: the HPA controller alone, on a clock near wall time."""
    with _twin(start_time=None) as t:
        yield t


def _deployment(twin, replicas: int, name="web") -> dict:
    labels = {"app": name}
    return create(twin, {"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                                  "template": {"metadata": {"labels": labels},
                                               "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}})


def _pods(twin, count: int, *, cpu: str | None = "100m", name="web", usage: str | None = None) -> None:
    for i in range(count):
        pod(twin, f"{name}-{i}", labels={"app": name},
            resources={"requests": {"cpu": cpu, "memory": "64Mi"}} if cpu else None)
        report(twin, f"{name}-{i}", ip=f"10.244.1.{i + 2}")
        if usage:
            twin.metrics.set_pod_usage("default", f"{name}-{i}", "app", cpu=usage, memory="32Mi")


def _use(twin, count: int, cpu: str, name="web") -> None:
    for i in range(count):
        twin.metrics.set_pod_usage("default", f"{name}-{i}", "app", cpu=cpu, memory="32Mi")


def _hpa(twin, target: int = 50, min_replicas: int = 1, max_replicas: int = 10, name="web", **spec) -> dict:
    return create(twin, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                                  "minReplicas": min_replicas, "maxReplicas": max_replicas,
                                  "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                                      "type": "Utilization", "averageUtilization": target}}}], **spec}})


def _status(twin, name="web") -> dict:
    return twin.store.get(HPAS, "default", name)["status"]


def _condition(twin, type_: str, name="web") -> tuple[str, str, str]:
    cond = next(c for c in _status(twin, name)["conditions"] if c["type"] == type_)
    return cond["status"], cond["reason"], cond["message"]


def _replicas(twin, name="web") -> int:
    return twin.store.get("deployments.apps", "default", name)["spec"]["replicas"]


def test_scales_up_when_usage_is_above_target_limited_to_double_per_sync():
    with _twin() as twin:
        _deployment(twin, 2)
        _pods(twin, 2, usage="170m")
        _hpa(twin)
        twin.warp(14)
        assert "status" not in twin.store.get(HPAS, "default", "web") or not _status(twin).get("conditions")
        # metrics-server reports the pods from the scrape 10 s after they started (a fresh container's start
        # counts as a point); the sync after it doubles the replicas, the next one would go on.
        twin.warp(16)
        assert _replicas(twin) == 4
        status = _status(twin)
        assert (status["currentReplicas"], status["desiredReplicas"]) == (2, 4)
        assert T0 + 15 <= parse_time(status["lastScaleTime"]) <= twin.clock.now()
        assert status["currentMetrics"] == [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 170, "averageValue": "170m"}}}]
        assert _condition(twin, "AbleToScale") == ("True", "SucceededRescale",
                                                   "the HPA controller was able to update the target scale to 4")
        assert _condition(twin, "ScalingActive") == (
            "True", "ValidMetricFound",
            "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage "
            "of request)")
        assert _condition(twin, "ScalingLimited") == (
            "True", "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
        (rescale,) = events(twin, name="web", reason="SuccessfulRescale")
        assert rescale["message"] == "New size: 4; reason: cpu resource utilization (percentage of request) above " \
                                     "target"
        assert rescale["source"] == {"component": "horizontal-pod-autoscaler"}


def test_scale_down_waits_for_the_stabilization_window():
    with _twin() as twin:
        _deployment(twin, 4)
        _pods(twin, 4, usage="10m")
        _hpa(twin)
        twin.warp(60)
        assert _replicas(twin) == 4
        assert _condition(twin, "AbleToScale") == (
            "True", "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation")
        twin.warp(240)
        assert _replicas(twin) == 4  # 300 s after the first sync, which recorded 4
        twin.warp(45)
        assert _replicas(twin) == 1
        assert events(twin, name="web", reason="SuccessfulRescale")[0]["message"] == \
            "New size: 1; reason: All metrics below target"


def test_usage_within_tolerance_changes_nothing():
    with _twin() as twin:
        _deployment(twin, 3)
        _pods(twin, 3, usage="54m")  # 108% of a 50% target: within the 10% tolerance
        _hpa(twin, target=50)
        twin.warp(60)
        assert _replicas(twin) == 3
        assert _status(twin)["desiredReplicas"] == 3
        assert _condition(twin, "ScalingLimited")[1] == "DesiredWithinRange"


def test_a_target_set_too_low_maxes_the_deployment_out_and_the_repair_brings_it_back_in_range():
    with _twin() as twin:
        _deployment(twin, 2)
        _pods(twin, 2, usage="30m")
        _hpa(twin, target=1, max_replicas=5)
        twin.warp(120)
        assert _replicas(twin) == 5
        assert _condition(twin, "ScalingLimited") == (
            "True", "TooManyReplicas", "the desired replica count is more than the maximum replica count")
        patch(twin, "autoscaling", "v2", "horizontalpodautoscalers", "web",
              lambda h: h["spec"]["metrics"][0]["resource"]["target"].update(averageUtilization=60))
        twin.warp(30)
        # The high recommendations of the last five minutes still hold the count up.
        assert _replicas(twin) == 5 and _condition(twin, "AbleToScale")[1] == "ScaleDownStabilized"
        twin.warp(330)
        assert _replicas(twin) == 1
        assert _condition(twin, "ScalingLimited") == ("False", "DesiredWithinRange",
                                                      "the desired count is within the acceptable range")


def test_no_metrics_leaves_the_hpa_unable_to_compute_and_says_why():
    with _twin() as twin:
        _deployment(twin, 2)
        _pods(twin, 2)
        _hpa(twin)
        twin.warp(20)
        assert _condition(twin, "ScalingActive") == (
            "False", "FailedGetResourceMetric",
            "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics "
            "for resource cpu: no metrics returned from resource metrics API")
        assert _status(twin)["currentMetrics"] == [{"type": ""}]
        assert [e["message"] for e in events(twin, name="web", reason="FailedComputeMetricsReplicas")] == [
            "invalid metrics (1 invalid out of 1), first error is: failed to get cpu utilization: unable to get "
            "metrics for resource cpu: no metrics returned from resource metrics API"]
        assert _replicas(twin) == 2


def test_a_container_without_a_cpu_request_cannot_be_scaled_on_utilization():
    with _twin() as twin:
        _deployment(twin, 1)
        _pods(twin, 1, cpu=None, usage="100m")
        _hpa(twin)
        twin.warp(45)
        assert _condition(twin, "ScalingActive")[2] == (
            "the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu "
            "in container app of Pod web-0")


def test_a_missing_target_and_a_target_scaled_to_zero():
    with _twin() as twin:
        _hpa(twin, name="nope")
        twin.warp(20)
        assert _condition(twin, "AbleToScale", "nope") == (
            "False", "FailedGetScale",
            'the HPA controller was unable to get the target\'s current scale: deployments.apps "nope" not found')
        assert events(twin, name="nope", reason="FailedGetScale")[0]["message"] == \
            'deployments.apps "nope" not found'
        _deployment(twin, 0)
        _hpa(twin)
        twin.warp(20)
        assert _condition(twin, "ScalingActive") == (
            "False", "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
        assert _replicas(twin) == 0


def test_behavior_policies_limit_the_rate_of_scaling():
    with _twin() as twin:
        _deployment(twin, 2)
        _pods(twin, 2, usage="400m")
        _hpa(twin, behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}})
        twin.warp(45)
        assert _replicas(twin) == 3
        assert _condition(twin, "ScalingLimited")[1] == "ScaleUpLimit"
        twin.warp(30)
        assert _replicas(twin) == 3  # one pod per minute
        twin.warp(45)
        assert _replicas(twin) == 4


def test_unready_pods_count_as_using_nothing_on_a_scale_up():
    def pod_status(name, ready):
        return {"metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]},
                "status": {"phase": "Running" if ready else "Pending", "startTime": "2023-11-14T20:00:00Z",
                           "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                           "lastTransitionTime": "2023-11-14T20:00:00Z"}]}}

    pods = [pod_status("a", True), pod_status("b", True), pod_status("c", False)]
    metrics = {"a": PodMetric(200, T0, 15), "b": PodMetric(200, T0, 15)}
    # 200% of request on the ready pods; the pending pod counts as 0%: (200+200+0)/300 = 133% -> 3 * 1.33 = 4.
    assert resource_replicas(3, 100, metrics, pods, "cpu", "", T0) == (4, 200, 200)
    # At 120% the pending pod would turn the scale-up into a scale-down (240/300 = 80%): nothing changes.
    metrics = {"a": PodMetric(120, T0, 15), "b": PodMetric(120, T0, 15)}
    assert resource_replicas(3, 100, metrics, pods, "cpu", "", T0)[0] == 3


def test_kubectl_get_hpa_shows_current_and_target_utilization(twin, kubectl):
    _deployment(twin, 2)
    _pods(twin, 2, usage="85m")
    _hpa(twin)
    assert kubectl("get", "hpa", "web", "--no-headers").split()[2:4] == ["cpu:", "<unknown>/50%"]
    twin.warp(45)
    row = kubectl("get", "hpa", "web", "--no-headers").split()
    # REPLICAS is the scale read at the last sync: 2, or 4 when the rescale came a sync earlier (the clock follows
    # wall time, so where the syncs fall against the first sample moves from run to run).
    assert row[1:6] == ["Deployment/web", "cpu:", "85%/50%", "1", "10"]
    assert row[6] == str(_status(twin)["currentReplicas"]) and row[6] in {"2", "4"}
    described = kubectl("describe", "hpa", "web")
    assert "SuccessfulRescale" in described and "New size: 4; reason: cpu resource utilization" in described
