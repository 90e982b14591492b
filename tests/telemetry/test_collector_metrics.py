"""Span metrics and application metrics through the applications' collectors: names, labels and buckets as the
spanmetrics connector and the prometheus exporter give them, and the shipped rules firing on them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest

from pytest_itbench.twin.telemetry.appmetrics import AppSample
from pytest_itbench.twin.telemetry.spans import DURATION_BUCKETS_MS, SpanKey, SpanSeries

from .monitoring_helpers import one, quiet_twin, vector

SERVER, CLIENT = "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT"
UNSET, ERROR = "STATUS_CODE_UNSET", "STATUS_CODE_ERROR"


class Traffic:
    """A stand-in traffic engine: each service receives calls at a rate, each call taking ``latency_ms``."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.rates: dict[SpanKey, tuple[float, float]] = {}  # key -> (calls per second, latency in ms)
        self.series: dict[SpanKey, SpanSeries] = {}
        self.kafka_members = 1.0
        clock.on_tick(self.tick)

    def serve(self, service: str, span: str, *, kind: str = SERVER, status: str = UNSET, per_second: float = 2.0,
              latency_ms: float = 30.0, namespace: str = "otel-demo") -> None:
        key = SpanKey(service, span, kind, status, namespace)
        self.rates[key] = (per_second, latency_ms)
        self.series.setdefault(key, SpanSeries())

    def tick(self, now: float) -> None:
        for key, (per_second, latency) in self.rates.items():
            series = self.series[key]
            calls = per_second * self.clock.tick
            series.calls += calls
            series.duration_sum_ms += calls * latency
            bucket = next((i for i, bound in enumerate(DURATION_BUCKETS_MS) if latency <= bound),
                          len(DURATION_BUCKETS_MS))
            series.bucket_counts[bucket] += calls

    def span_series(self) -> Mapping[SpanKey, SpanSeries]:
        return self.series

    def app_samples(self) -> Iterable[AppSample]:
        yield AppSample("kafka_consumer_group_members", {"namespace": "otel-demo", "group": "fraud-detection"},
                        self.kafka_members, help="number of members in consumer group")


@pytest.fixture
def setup():
    twin = quiet_twin()
    traffic = Traffic(twin.clock)
    twin.monitoring.collector.add_spans(traffic)
    twin.monitoring.collector.add_app_metrics(traffic)
    yield twin, traffic
    twin.stop()


def test_span_metric_names_and_labels(setup):
    twin, traffic = setup
    traffic.serve("frontend", "GET /api/products", per_second=4.0, latency_ms=30.0)
    twin.warp(30)
    labels, value = one(twin, "traces_span_metrics_calls_total")
    assert labels == {"service_name": "frontend", "span_name": "GET /api/products", "span_kind": SERVER,
                      "status_code": UNSET, "namespace": "otel-demo", "exported_namespace": "otel-demo",
                      "job": "otel-collector", "exported_job": "frontend", "otel_scope_name": "spanmetricsconnector",
                      "instance": "otel-collector.otel-demo:8888", "service": "otel-collector", "endpoint": "metrics",
                      "container": "opentelemetry-collector"}
    twin.warp(15)
    assert one(twin, "traces_span_metrics_calls_total")[1] - value == 4.0 * 15  # the source's totals, as they grow
    buckets = {dict(k)["le"]: v for k, v in vector(twin, "traces_span_metrics_duration_milliseconds_bucket").items()}
    assert list(buckets) == ["2", "4", "6", "8", "10", "50", "100", "200", "400", "800", "1000", "1400", "2000",
                             "5000", "10000", "15000", "+Inf"]
    calls = value + 60
    assert [buckets[le] for le in ("10", "50", "+Inf")] == [0, calls, calls]  # cumulative, as Prometheus expects
    assert one(twin, "traces_span_metrics_duration_milliseconds_count")[1] == calls
    assert one(twin, "traces_span_metrics_duration_milliseconds_sum")[1] == calls * 30.0
    assert one(twin, 'up{job="otel-collector"}')[1] == 1
    metadata = twin.monitoring.metadata.families()
    assert metadata["traces_span_metrics_calls_total"][0].type == "counter"
    assert metadata["traces_span_metrics_duration_milliseconds"][0].type == "histogram"


def test_rates_and_quantiles_over_scraped_span_metrics(setup):
    twin, traffic = setup
    traffic.serve("cart", "POST /cart", per_second=3.0, latency_ms=150.0)
    twin.warp(300)
    assert one(twin, 'sum by (service_name) (rate(traces_span_metrics_calls_total[2m]))')[1] == pytest.approx(3.0)
    p95 = one(twin, 'histogram_quantile(0.95, sum by (le, service_name) '
                    '(rate(traces_span_metrics_duration_milliseconds_bucket[2m])))')[1]
    assert 100 < p95 <= 200


def test_the_shipped_error_rate_and_no_requests_rules_fire_and_clear(setup):
    twin, traffic = setup
    traffic.serve("frontend", "GET /", per_second=5.0)
    traffic.serve("checkout", "PlaceOrder", per_second=1.0)
    twin.warp(600)
    assert _alerts(twin) == set()
    traffic.serve("checkout", "PlaceOrder", status=ERROR, per_second=1.0)
    traffic.serve("checkout", "PlaceOrder", per_second=0.0)  # every call fails now
    twin.warp(60)
    assert ("HighRequestErrorRate", "checkout", "pending") in _alerts(twin)
    twin.warp(600)  # NoRequestsReceived: five minutes without a successful call, held for five more
    assert {("HighRequestErrorRate", "checkout", "firing"),
            ("NoRequestsReceived", "checkout", "firing")} <= _alerts(twin)
    traffic.serve("checkout", "PlaceOrder", status=ERROR, per_second=0.0)
    traffic.serve("checkout", "PlaceOrder", per_second=1.0)
    twin.warp(600)
    assert _alerts(twin) == set()


def test_app_metrics_reach_their_rule(setup):
    twin, traffic = setup
    twin.warp(30)
    labels, value = one(twin, "kafka_consumer_group_members")
    assert (labels["group"], labels["namespace"], labels["job"], value) == ("fraud-detection", "otel-demo",
                                                                            "otel-collector", 1.0)
    assert twin.monitoring.metadata.families()["kafka_consumer_group_members"][0].help == \
        "number of members in consumer group"
    traffic.kafka_members = 0.0
    twin.warp(200)
    assert ("KafkaConsumerGroupInactive", "", "firing") in _alerts(twin)


def _alerts(twin) -> set[tuple[str, str, str]]:
    return {(a.labels["alertname"], a.labels.get("service_name", ""), a.state)
            for group in twin.rules.rule_groups() for rule in group.rules for a in getattr(rule, "alerts", ())}
