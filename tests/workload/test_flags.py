"""The OpenTelemetry Demo's feature flags in the astronomy shop: each, turned on in flagd-config as ITBench's flag
faults turn it on (edit the ConfigMap, restart flagd), does what the demo's code does, raises the alert the shipped
rules raise on the real demo, and leaves its evidence in metrics, logs and traces; turned off, all of it clears.

What the demo's services do with each flag (src/<service> of open-telemetry/opentelemetry-demo 2.x):

* adFailure: GetAds throws ``Status.UNAVAILABLE`` one call in ten (``random.nextInt(10) == 0``).
* adHighCpu: the ad service starts CPU-burning threads (problempattern.CPULoad); nothing fails or slows past the
  shipped thresholds, so no shipped alert fires on the real demo either: the evidence is cAdvisor's CPU and the log.
* adManualGc: the ad service runs full GCs over a filled heap; the requests that hit one wait seconds.
* cartFailure: EmptyCart goes to a cart store at ``badhost:1234``; checkout ignores EmptyCart's error.
* paymentFailure: a number variant; Charge fails that fraction with "Payment request failed. Invalid token.".
* paymentUnreachable: checkout dials payment at ``badAddress:50051``.
* productCatalogFailure: GetProduct fails for product OLJCESPC7Z ("Product Catalog Fail Feature Flag Enabled").
* recommendationCacheFailure: the recommendation "cache" grows without bound: memory and latency climb until the
  container is OOMKilled, again and again.
* imageSlowLoad: a number of milliseconds; the frontend asks Envoy's fault filter to delay image requests by it.
  Envoy writes no per-request log line, so there is no log evidence on the real demo either.
* kafkaQueueProblems: checkout writes that many extra messages per order and fraud-detection sleeps a second per
  message: consumer lag.
* loadGeneratorFloodHomepage: Locust's flood task gets ``/`` that many times; more load, nothing fails, so no
  shipped alert fires on the real demo either: the evidence is the request rate.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from pytest_itbench.twin.telemetry.traces import TraceQuery

from .shop import NAMESPACE, logs, pod_of, set_flag, shop_twin, usage, window

ONSET = 420  # simulated seconds: a 2m rate window plus a 3m `for`, with room
CLEAR = 480  # long enough for the rate windows to empty and the alerts to resolve


@pytest.fixture(scope="module")
def shop():
    twin = shop_twin(telemetry=True)
    twin.warp(300)  # the rate windows fill with healthy traffic
    assert firing(twin) == set()
    yield twin
    twin.stop()


@pytest.fixture(autouse=True)
def all_flags_off_after(shop):
    """A test that failed half-way leaves its flag on; turn it off so the next test starts from a healthy shop."""
    yield
    document = json.loads(shop.store.get("configmaps", NAMESPACE, "flagd-config")["data"]["demo.flagd.json"])
    left_on = [name for name, flag in document["flags"].items() if flag["defaultVariant"] != "off"]
    for name in left_on:
        set_flag(shop, name, "off")
        shop.warp(5)
    if left_on:
        shop.warp(900)


def firing(twin) -> set[tuple[str, str]]:
    """Firing alerts of the shop as (alert, what it is about: service, Kafka group or deployment of the pod)."""
    result = twin.monitoring.engine.instant_query(f'ALERTS{{alertstate="firing", severity!="info", namespace="{NAMESPACE}"}}',
                                                  twin.clock.now()).value.to_json()
    out = set()
    for series in result:
        labels = series["metric"]
        subject = labels.get("service_name") or labels.get("group") or labels.get("pod", "").rsplit("-", 2)[0]
        out.add((labels["alertname"], subject))
    return out


def query(twin, expr: str) -> dict[str, float]:
    """An instant query's values by the pod label (or the series' only value under '')."""
    result = twin.monitoring.engine.instant_query(expr, twin.clock.now()).value.to_json()
    return {s["metric"].get("pod", ""): float(s["value"][1]) for s in result}


def spans_since(twin, service: str, since: float, *, errors: bool = False) -> list:
    found = twin.traces.find(TraceQuery(service, int(since * 1e6), int(twin.clock.now() * 1e6), limit=5000))
    return [s for t in found for s in t.spans if s.service_name == service
            and (not errors or s.status_code == "STATUS_CODE_ERROR")]


def lines_since(twin, deployment: str, since: float) -> list[str]:
    pod = pod_of(twin, deployment)
    return [line.text for line in twin.logs.lines(NAMESPACE, pod["metadata"]["name"], deployment)
            if line.time_ns >= since * 1e9]


def turn_on(twin, flag: str, variant: str = "on", seconds: float = ONSET):
    """Turn the flag on and run ``seconds``; return when it took effect (the restarted flagd became ready:
    until then the old flagd answers, and requests in between are served as before) and the window."""
    set_flag(twin, flag, variant)
    ran = window(twin, seconds)
    return flagd_ready_since(twin), ran


def flagd_ready_since(twin) -> float:
    ready = next(c for c in pod_of(twin, "flagd")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
    return datetime.fromisoformat(ready["lastTransitionTime"].replace("Z", "+00:00")).timestamp()


def turn_off_and_check_cleared(twin, flag: str, wait: float = CLEAR) -> float:
    """Turn the flag off, wait, and check that nothing fails and no alert fires; the moment it had cleared."""
    set_flag(twin, flag, "off")
    twin.warp(wait)
    cleared = twin.clock.now()
    after = window(twin, 120)
    assert after.error_keys() == [], f"{flag} off: still failing"
    assert firing(twin) == set(), f"{flag} off: alerts still firing"
    return cleared


def share(w, service: str, span: str, kind: str = "SPAN_KIND_SERVER") -> float:
    total = w.calls(service, span=span, kind=kind)
    assert total > 0, f"no {span} spans of {service}"
    return w.errors(service, span=span, kind=kind) / total


# ---- errors -------------------------------------------------------------------------------------------------------

def test_ad_failure_fails_one_get_ads_in_ten(shop):
    start, w = turn_on(shop, "adFailure")
    assert 0.05 < share(w, "ad", "oteldemo.AdService/GetAds") < 0.16
    assert w.errors("frontend", span="GET /api/data") > 0
    assert {("HighRequestErrorRate", "ad"), ("HighRequestErrorRate", "frontend")} <= firing(shop)
    assert any("GetAds Failed with status Status{code=UNAVAILABLE" in line for line in lines_since(shop, "ad", start))
    failed = [s for s in spans_since(shop, "ad", start, errors=True) if s.kind == "SPAN_KIND_SERVER"]
    assert failed and {s.operation_name for s in failed} == {"oteldemo.AdService/GetAds"}
    assert all(s.attributes.get("rpc.grpc.status_code") == 14 for s in failed)  # UNAVAILABLE
    cleared = turn_off_and_check_cleared(shop, "adFailure")
    assert not any("GetAds Failed" in line for line in lines_since(shop, "ad", cleared))


def test_product_catalog_failure_fails_get_product(shop):
    start, w = turn_on(shop, "productCatalogFailure")
    # One product of the ten fails; the load generator browses them evenly.
    assert 0.04 < share(w, "product-catalog", "oteldemo.ProductCatalogService/GetProduct") < 0.2
    assert w.errors("product-catalog", span="oteldemo.ProductCatalogService/ListProducts") == 0
    assert {("HighRequestErrorRate", "product-catalog"), ("HighRequestErrorRate", "frontend")} <= firing(shop)
    message = "Product Catalog Fail Feature Flag Enabled"
    assert any(message in line for line in lines_since(shop, "product-catalog", start))
    assert any(f"13 INTERNAL: Error: {message}" in line for line in lines_since(shop, "frontend", start))
    failed = [s for s in spans_since(shop, "product-catalog", start, errors=True)
              if s.operation_name == "oteldemo.ProductCatalogService/GetProduct"]
    assert failed and all(message in s.status_message for s in failed)
    turn_off_and_check_cleared(shop, "productCatalogFailure")


@pytest.mark.xfail(strict=True, reason="spans carry no app.product.id (the sheet's attributes are static), so the "
                                       "failing product OLJCESPC7Z cannot be told from the traces as on the demo")
def test_product_catalog_failure_names_the_product_in_its_spans(shop):
    start, _ = turn_on(shop, "productCatalogFailure", seconds=120)
    try:
        failed = spans_since(shop, "product-catalog", start, errors=True)
        assert failed and {s.attributes.get("app.product.id") for s in failed} == {"OLJCESPC7Z"}
    finally:
        set_flag(shop, "productCatalogFailure", "off")
        shop.warp(CLEAR)


def test_cart_failure_fails_empty_cart_and_orders_still_go_through(shop):
    start, w = turn_on(shop, "cartFailure")
    assert share(w, "cart", "oteldemo.CartService/EmptyCart") > 0.95
    assert w.errors("cart", span="oteldemo.CartService/GetCart") == 0
    # Checkout ignores EmptyCart's error: orders are placed, users see nothing.
    assert w.errors("checkout", span="oteldemo.CheckoutService/PlaceOrder") == 0
    assert w.errors("frontend") == 0
    assert {("HighRequestErrorRate", "cart"), ("HighRequestErrorRate", "checkout")} <= firing(shop)
    assert not any(alert[1] in ("frontend", "frontend-proxy") for alert in firing(shop))
    assert any("UnableToResolvePhysicalConnection on badhost:1234" in line
               for line in lines_since(shop, "cart", start))
    failed = spans_since(shop, "cart", start, errors=True)
    assert "oteldemo.CartService/EmptyCart" in {s.operation_name for s in failed}
    turn_off_and_check_cleared(shop, "cartFailure")


def test_payment_failure_fails_the_variants_fraction_of_charges(shop):
    start, w = turn_on(shop, "paymentFailure", "50%")
    assert 0.3 < share(w, "payment", "grpc.oteldemo.PaymentService/Charge") < 0.7
    assert w.errors("checkout", span="oteldemo.CheckoutService/PlaceOrder") > 0
    assert {("HighRequestErrorRate", "payment"), ("HighRequestErrorRate", "checkout"),
            ("HighRequestErrorRate", "frontend")} <= firing(shop)
    message = "Payment request failed. Invalid token. app.loyalty.level=gold"
    assert any(message in line for line in lines_since(shop, "payment", start))
    assert any(f"could not charge the card: rpc error: code = Unknown desc = {message}" in line
               for line in lines_since(shop, "checkout", start))
    failed = [s for s in spans_since(shop, "payment", start, errors=True)
              if s.operation_name == "grpc.oteldemo.PaymentService/Charge"]
    assert failed and all(s.status_message == message for s in failed)
    turn_off_and_check_cleared(shop, "paymentFailure")


def test_payment_unreachable_sends_checkout_to_a_bad_address(shop):
    start, w = turn_on(shop, "paymentUnreachable")
    assert share(w, "checkout", "oteldemo.PaymentService/Charge", kind="SPAN_KIND_CLIENT") > 0.95
    # Nothing reaches payment once the restarted flagd serves the flag (a call or two may before).
    assert w.calls("payment", span="grpc.oteldemo.PaymentService/Charge") < 0.05 * w.calls(
        "checkout", span="oteldemo.PaymentService/Charge", kind="SPAN_KIND_CLIENT")
    assert {("HighRequestErrorRate", "checkout"), ("HighRequestErrorRate", "frontend")} <= firing(shop)
    assert ("HighRequestErrorRate", "payment") not in firing(shop)
    assert any("failed to charge card" in line and "lookup badAddress" in line and "no such host" in line
               for line in lines_since(shop, "checkout", start))
    failed = [s for s in spans_since(shop, "checkout", start, errors=True)
              if s.operation_name == "oteldemo.PaymentService/Charge"]
    assert failed and all("badAddress" in s.status_message for s in failed)
    turn_off_and_check_cleared(shop, "paymentUnreachable")


# ---- load, latency and resources ----------------------------------------------------------------------------------

def test_ad_high_cpu_burns_cpu_in_the_ad_container(shop):
    cores_before = query(shop, f'rate(container_cpu_usage_seconds_total{{namespace="{NAMESPACE}", container="ad"}}[5m])')
    assert max(cores_before.values()) < 0.1
    start, w = turn_on(shop, "adHighCpu")
    cores = query(shop, f'rate(container_cpu_usage_seconds_total{{namespace="{NAMESPACE}", container="ad"}}[5m])')
    assert max(cores.values()) > 1.0
    assert usage(shop, "ad")[0] > 1.0
    assert any("High CPU-Load problempattern enabled" in line for line in lines_since(shop, "ad", start))
    assert w.error_keys() == [] or all(k.span_name.startswith("flagd.") or k.service_name == "load-generator"
                                       for k in w.error_keys())  # flagd's restart only
    set_flag(shop, "adHighCpu", "off")
    shop.warp(CLEAR)
    cores = query(shop, f'rate(container_cpu_usage_seconds_total{{namespace="{NAMESPACE}", container="ad"}}[5m])')
    assert max(cores.values()) < 0.1
    assert firing(shop) == set()


def test_ad_manual_gc_stalls_get_ads(shop):
    start, w = turn_on(shop, "adManualGc")
    assert w.p95_ms("ad", span="oteldemo.AdService/GetAds") > 1500
    assert ("HighRequestLatency", "ad") in firing(shop)
    assert any("Feature Flag adManualGc enabled, performing a manual gc now" in line
               for line in lines_since(shop, "ad", start))
    assert any(s.duration > 1.5 for s in spans_since(shop, "ad", start) if s.operation_name.endswith("/GetAds"))
    turn_off_and_check_cleared(shop, "adManualGc")
    assert window(shop, 300).p95_ms("ad", span="oteldemo.AdService/GetAds") < 100


def test_recommendation_cache_failure_leaks_until_oom_killed(shop):
    memory = f'container_memory_working_set_bytes{{namespace="{NAMESPACE}", container="recommendation"}}'
    before = max(query(shop, memory).values())
    start, w = turn_on(shop, "recommendationCacheFailure", seconds=300)
    grown = max(query(shop, memory).values())
    assert grown > before + 100 * 2**20
    assert w.p95_ms("recommendation") > 100  # scanning the grown list
    assert any("cache miss" in line for line in lines_since(shop, "recommendation", start))
    shop.warp(1200)
    status = pod_of(shop, "recommendation")["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 2
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert ("KubePodCrashLooping", "recommendation") in firing(shop)
    assert any(s.duration > 0.5 for s in spans_since(shop, "recommendation", start))
    # A container backed off for minutes comes back, then KubePodCrashLooping's 5m window empties.
    turn_off_and_check_cleared(shop, "recommendationCacheFailure", wait=900)
    assert max(query(shop, memory).values()) < before + 20 * 2**20


def test_image_slow_load_delays_images_by_the_variant(shop):
    start, w = turn_on(shop, "imageSlowLoad", "10sec")
    images = [s for s in spans_since(shop, "frontend-proxy", start) if s.attributes.get("http.route") == "/images/"]
    assert images and all(s.duration >= 10 for s in images)
    others = [s for s in spans_since(shop, "frontend-proxy", start) if s.attributes.get("http.route") != "/images/"]
    assert others and all(s.duration < 5 for s in others)
    assert w.p95_ms("frontend-proxy") > 1500
    assert ("HighRequestLatency", "frontend-proxy") in firing(shop)
    assert ("HighRequestLatency", "frontend") not in firing(shop)  # the delay is Envoy's, before the frontend
    turn_off_and_check_cleared(shop, "imageSlowLoad")
    assert window(shop, 300).p95_ms("frontend-proxy") < 1500


def test_kafka_queue_problems_builds_consumer_lag(shop):
    lag = 'kafka_consumer_group_lag_sum_ratio{group="fraud-detection"}'
    start, w = turn_on(shop, "kafkaQueueProblems", seconds=600)
    assert max(query(shop, lag).values()) > 100
    assert ("HighKafkaConsumerLag", "fraud-detection") in firing(shop)
    assert any("FeatureFlag 'kafkaQueueProblems' is activated, overloading queue now" in line
               for line in lines_since(shop, "checkout", start))
    assert any("FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second" in line
               for line in lines_since(shop, "fraud-detection", start))
    consumed = [s for s in spans_since(shop, "fraud-detection", start) if s.operation_name == "orders process"]
    assert consumed and all(s.duration >= 1 for s in consumed)
    turn_off_and_check_cleared(shop, "kafkaQueueProblems", wait=600)  # the backlog drains first
    assert max(query(shop, lag).values()) < 5


def test_load_generator_flood_homepage_multiplies_home_page_requests(shop):
    before = window(shop, 300).rate("frontend", span="GET /")
    start, w = turn_on(shop, "loadGeneratorFloodHomepage", seconds=300)
    assert w.rate("frontend", span="GET /") > 5 * before
    assert w.error_keys() == [] or all(k.span_name.startswith("flagd.") or k.service_name == "load-generator"
                                       for k in w.error_keys())  # flagd's restart only
    assert any("User flooding homepage 100 times" in line for line in lines_since(shop, "load-generator", start))
    turn_off_and_check_cleared(shop, "loadGeneratorFloodHomepage")
    assert window(shop, 300).rate("frontend", span="GET /") < 2 * before
