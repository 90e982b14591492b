"""The rule files the benchmark ships: valid for a real Prometheus, and each rule fires on its condition only."""

from __future__ import annotations

from typing import Callable

import promql_parser
import pytest

from pytest_itbench.apps.rules import rule_file_paths
from pytest_itbench.twin.telemetry.rules import load_rule_file

from .rule_harness import RuleHarness

KSM = {"job": "kube-state-metrics", "namespace": "otel-demo"}
SPANS = "traces_span_metrics_calls_total"
BUCKETS = "traces_span_metrics_duration_milliseconds_bucket"
SHIPPED = {path.name: path for path in rule_file_paths()}
EXPECTED_ALERTS = {
    "kubernetes.yaml": {"KubePodNotReady", "KubePodCrashLooping", "KubeContainerWaiting",
                        "KubeDeploymentReplicasMismatch", "KubeHpaMaxedOut"},
    "otel-demo.yaml": {"HighRequestErrorRate", "HighRequestLatency", "NoRequestsReceived", "FailedPodsDetected",
                       "KafkaConsumerGroupInactive", "HighKafkaConsumerLag", "NoDatabaseOperations"},
    "background.yaml": {"FrontendTailLatencyElevated"},
}


def test_the_shipped_files():
    assert set(SHIPPED) == set(EXPECTED_ALERTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_ALERTS))
def test_rules_are_valid_for_prometheus(name):
    rule_file = load_rule_file(SHIPPED[name])  # validated as promtool validates
    rules = [rule for group in rule_file.groups for rule in group.rules]
    assert {rule.alert for rule in rules} == EXPECTED_ALERTS[name]
    for rule in rules:
        promql_parser.parse(rule.expr)  # the parser Prometheus' own is ported from
        severities = ("info",) if name == "background.yaml" else ("warning", "critical")  # background: only info
        assert rule.for_ > 0 and rule.labels["severity"] in severities
        assert rule.annotations["description"]
        if name == "kubernetes.yaml":
            assert rule.annotations["summary"]
            assert rule.annotations["runbook_url"] == ("https://runbooks.prometheus-operator.dev/runbooks/kubernetes/"
                                                       + rule.alert.lower())


# ---- scenarios: series that represent a condition, and healthy ones -----------------------------------------

def crash_looping(h: RuleHarness, sick: bool) -> None:
    h.set(1.0 if sick else 0.0, __name__="kube_pod_container_status_waiting_reason", **KSM, pod="cart-7d9f",
          container="cart", reason="CrashLoopBackOff")


def pod_not_ready(h: RuleHarness, sick: bool) -> None:
    for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        current = "Pending" if sick else "Running"
        h.set(1.0 if phase == current else 0.0, __name__="kube_pod_status_phase", **KSM, pod="ad-5c7f", phase=phase)
    h.set(0.0 if sick else 1.0, __name__="kube_pod_status_ready", **KSM, pod="ad-5c7f", condition="true")
    h.set(1.0, __name__="kube_pod_owner", **KSM, pod="ad-5c7f", owner_kind="ReplicaSet", owner_name="ad-5c7")
    # A Job's pod that is pending never counts.
    h.set(1.0, __name__="kube_pod_status_phase", **KSM, pod="migrate-x1", phase="Pending")
    h.set(1.0, __name__="kube_pod_owner", **KSM, pod="migrate-x1", owner_kind="Job", owner_name="migrate")


def replicas_mismatch(h: RuleHarness, sick: bool) -> None:
    deployment = {**KSM, "deployment": "checkout"}
    h.set(3.0, __name__="kube_deployment_spec_replicas", **deployment)
    h.set(1.0 if sick else 3.0, __name__="kube_deployment_status_replicas_available", **deployment)
    h.set(3.0, __name__="kube_deployment_status_replicas_updated", **deployment)


def container_waiting(h: RuleHarness, sick: bool) -> None:
    if sick:
        h.set(1.0, __name__="kube_pod_container_status_waiting_reason", **KSM, pod="email-1", container="email",
              reason="ImagePullBackOff")
    else:
        h.set(1.0, __name__="kube_pod_container_status_running", **KSM, pod="email-1", container="email")


def hpa_maxed_out(h: RuleHarness, sick: bool) -> None:
    hpa = {**KSM, "horizontalpodautoscaler": "frontend"}
    h.set(10.0 if sick else 4.0, __name__="kube_horizontalpodautoscaler_status_current_replicas", **hpa)
    h.set(10.0, __name__="kube_horizontalpodautoscaler_spec_max_replicas", **hpa)
    h.set(1.0, __name__="kube_horizontalpodautoscaler_spec_min_replicas", **hpa)


def failed_pods(h: RuleHarness, sick: bool) -> None:
    h.set(1.0 if sick else 0.0, __name__="kube_pod_status_phase", **KSM, pod="quote-1", phase="Failed")


def span_labels(service: str, status: str = "STATUS_CODE_OK", **extra: str) -> dict[str, str]:
    return {"service_name": service, "span_name": "GET /api", "span_kind": "SPAN_KIND_SERVER",
            "status_code": status, "namespace": "otel-demo", **extra}


def latency(service: str) -> Callable[[RuleHarness, bool], None]:
    def scenario(h: RuleHarness, sick: bool) -> None:
        # Ten requests a second; when sick, all of them between 1 and 2.5 seconds (p95 ~ 2425 ms).
        for le in ("250", "1000", "2500", "+Inf"):
            fast = le != "250"
            slow = le in ("2500", "+Inf")
            h.count(10.0 if (slow if sick else fast) else 0.0, __name__=BUCKETS, **span_labels(service), le=le)
    return scenario


def error_rate(service: str) -> Callable[[RuleHarness, bool], None]:
    def scenario(h: RuleHarness, sick: bool) -> None:
        h.count(5.0, __name__=SPANS, **span_labels(service))
        h.count(0.5 if sick else 0.0, __name__=SPANS, **span_labels(service, "STATUS_CODE_ERROR"))
    return scenario


def no_requests(h: RuleHarness, sick: bool) -> None:
    h.count(0.0 if sick else 5.0, __name__=SPANS, **span_labels("product-catalog", "STATUS_CODE_UNSET"))


def consumer_group_inactive(h: RuleHarness, sick: bool) -> None:
    h.set(0.0 if sick else 1.0, __name__="kafka_consumer_group_members", group="accounting", namespace="otel-demo")


def consumer_lag(h: RuleHarness, sick: bool) -> None:
    h.set(450.0 if sick else 3.0, __name__="kafka_consumer_group_lag_sum_ratio", group="fraud-detection",
          topic="orders", namespace="otel-demo")


def no_database_operations(h: RuleHarness, sick: bool) -> None:
    # Orders keep arriving from Kafka; only the writes to PostgreSQL stop.
    h.count(2.0, __name__=SPANS, **span_labels("accounting", "STATUS_CODE_UNSET", span_name="orders process",
                                               span_kind="SPAN_KIND_CONSUMER"))
    h.count(0.0 if sick else 2.0, __name__=SPANS, **span_labels("accounting", "STATUS_CODE_UNSET",
                                                                 span_name="postgresql", span_kind="SPAN_KIND_CLIENT"))


SCENARIOS = [
    ("kubernetes.yaml", "KubePodCrashLooping", crash_looping, {"pod": "cart-7d9f", "container": "cart"}),
    ("kubernetes.yaml", "KubePodNotReady", pod_not_ready, {"pod": "ad-5c7f", "namespace": "otel-demo"}),
    ("kubernetes.yaml", "KubeDeploymentReplicasMismatch", replicas_mismatch, {"deployment": "checkout"}),
    ("kubernetes.yaml", "KubeContainerWaiting", container_waiting, {"reason": "ImagePullBackOff"}),
    ("kubernetes.yaml", "KubeHpaMaxedOut", hpa_maxed_out, {"horizontalpodautoscaler": "frontend"}),
    ("otel-demo.yaml", "FailedPodsDetected", failed_pods, {"namespace": "otel-demo", "severity": "critical"}),
    ("otel-demo.yaml", "HighRequestLatency", latency("frontend"), {"service_name": "frontend"}),
    ("otel-demo.yaml", "HighRequestLatency", latency("cart"), {"service_name": "cart"}),
    ("otel-demo.yaml", "HighRequestErrorRate", error_rate("frontend-proxy"), {"service_name": "frontend-proxy"}),
    ("otel-demo.yaml", "HighRequestErrorRate", error_rate("payment"), {"service_name": "payment"}),
    ("otel-demo.yaml", "NoRequestsReceived", no_requests, {"service_name": "product-catalog"}),
    ("otel-demo.yaml", "KafkaConsumerGroupInactive", consumer_group_inactive, {"group": "accounting"}),
    ("otel-demo.yaml", "HighKafkaConsumerLag", consumer_lag, {"topic": "orders", "severity": "warning"}),
    ("otel-demo.yaml", "NoDatabaseOperations", no_database_operations, {"service_name": "accounting"}),
]


def run(file: str, scenario: Callable[[RuleHarness, bool], None], sick: bool) -> list[dict[str, str]]:
    """The alerts pending or firing after the longest `for` of the file has passed twice over."""
    path = SHIPPED[file]
    h = RuleHarness(path.read_text(), interval=30.0, path=path.name)
    scenario(h, sick)
    longest = max(rule.for_ for group in load_rule_file(path).groups for rule in group.rules)
    h.warp(2 * longest + 10 * 60)
    return [{**alert.labels, "state": alert.state} for group in h.manager.rule_groups() for rule in group.rules
            for alert in getattr(rule, "alerts", ())]


@pytest.mark.parametrize("file, alert, scenario, labels", SCENARIOS,
                         ids=[f"{a}-{s.__qualname__.split('.')[0]}" for _, a, s, _ in SCENARIOS])
def test_fires_on_its_condition(file, alert, scenario, labels):
    alerts = run(file, scenario, sick=True)
    assert [a["alertname"] for a in alerts] == [alert]
    assert alerts[0]["state"] == "firing"
    assert labels.items() <= alerts[0].items()


@pytest.mark.parametrize("file, alert, scenario, labels", SCENARIOS,
                         ids=[f"{a}-{s.__qualname__.split('.')[0]}" for _, a, s, _ in SCENARIOS])
def test_quiet_when_healthy(file, alert, scenario, labels):
    assert run(file, scenario, sick=False) == []
