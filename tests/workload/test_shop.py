"""The astronomy shop, healthy, for half an hour: every service busy at the demo's rates, nothing failing, no alert,
the Kafka groups keeping up, and the same again for the same seed."""

from __future__ import annotations

import pytest

from .shop import NAMESPACE, logs, shop_twin, window

SERVING = ("frontend-proxy", "frontend", "ad", "cart", "checkout", "currency", "email", "payment", "product-catalog",
           "quote", "recommendation", "shipping", "image-provider", "flagd")


@pytest.fixture(scope="module")
def healthy():
    twin = shop_twin(telemetry=True)
    half_hour = window(twin, 1800)
    yield twin, half_hour
    twin.stop()


def test_every_service_serves_and_nothing_fails(healthy):
    twin, half_hour = healthy
    # The background floor (behaviour.yaml) answers a few product lookups with 404: the load generator's own spans
    # record those as errors, as OpenTelemetry's HTTP client convention says; no server span fails.
    assert half_hour.error_keys() == []
    client = "SPAN_KIND_CLIENT"
    assert 0 < half_hour.errors("load-generator", kind=client) < 0.01 * half_hour.calls("load-generator", kind=client)
    for service in SERVING:
        assert half_hour.rate(service) > 0, service
    assert half_hour.rate("fraud-detection", kind="SPAN_KIND_CONSUMER") > 0
    assert half_hour.rate("accounting", kind="SPAN_KIND_CONSUMER") > 0
    assert half_hour.rate("accounting", kind="SPAN_KIND_CLIENT", span="postgresql") > 0


def test_request_rates_follow_the_load_generators_users(healthy):
    _, half_hour = healthy
    # Ten Locust users, half of them browsers loading pages with their images and API calls.
    assert 15 < half_hour.rate("frontend-proxy") < 80
    assert 0.3 < half_hour.rate("frontend", span="GET /api/products/[productId]") < 4
    # One order for every sixteen HTTP-user tasks or so: a few per minute.
    orders = half_hour.rate("checkout", span="oteldemo.CheckoutService/PlaceOrder") * 60
    assert 2 < orders < 12
    assert half_hour.rate("payment") == pytest.approx(half_hour.rate("checkout"), rel=0.15)


def test_latencies_look_like_the_demos(healthy):
    _, half_hour = healthy
    assert half_hour.p95_ms("frontend-proxy") <= 100
    assert half_hour.p95_ms("frontend") <= 100
    assert half_hour.p95_ms("product-catalog") <= 2
    assert 10 < half_hour.p95_ms("checkout") <= 200


def test_no_alert_fires(healthy):
    twin, _ = healthy
    rates = twin.monitoring.engine.instant_query(
        f'sum by (service_name) (rate(traces_span_metrics_calls_total{{namespace="{NAMESPACE}"}}[5m]))',
        twin.clock.now()).value
    assert {s["metric"]["service_name"] for s in rates.to_json()} >= set(SERVING)  # the span metrics are scraped
    firing = twin.monitoring.engine.instant_query(f'ALERTS{{alertstate="firing", severity!="info", namespace="{NAMESPACE}"}}',
                                                  twin.clock.now()).value
    assert firing.to_json() == []


def test_the_consumers_keep_up(healthy):
    twin, _ = healthy
    lag = {s.labels["group"]: s.value for s in twin.workload.app_samples()
           if s.name == "kafka_consumer_group_lag_sum_ratio"}
    assert set(lag) == {"accounting", "fraud-detection"}
    assert max(lag.values()) < 5
    members = {s.labels["group"]: s.value for s in twin.workload.app_samples()
               if s.name == "kafka_consumer_group_members"}
    assert members == {"accounting": 1, "fraud-detection": 1}


def test_containers_log_their_work_and_the_proxy_logs_nothing_per_request(healthy):
    twin, _ = healthy
    assert any("GetCartAsync called with userId=" in line for line in logs(twin, "cart"))
    assert any("order placed" in line for line in logs(twin, "checkout"))
    assert any("Consumed record with orderId" in line for line in logs(twin, "fraud-detection"))
    assert len(logs(twin, "frontend-proxy")) < 5


def test_usage_follows_the_load(healthy):
    twin, _ = healthy
    sample = twin.metrics.pod_sample(NAMESPACE, next(p["metadata"]["name"] for p in twin.store.list("pods", NAMESPACE)[0]
                                                     if p["metadata"]["name"].startswith("frontend-proxy")))
    proxy = sample.usage["frontend-proxy"].cpu_nanocores / 1e9
    # Idle 3m plus about 0.3 ms of CPU for each of its tens of requests a second.
    assert 0.005 < proxy < 0.05


def test_the_same_seed_gives_the_same_telemetry():
    def run():
        twin = shop_twin(seed=4, settle=120)
        twin.warp(120)
        spans = twin.workload.span_series()
        cart = logs(twin, "cart")
        twin.stop()
        return spans, cart

    first, second = run(), run()
    assert first == second
    other = shop_twin(seed=5, settle=120)
    other.warp(120)
    assert other.workload.span_series() != first[0]
    other.stop()
