"""The hotel reservation, applied from its manifests: healthy for half an hour at wrk2's mix (every service busy,
latencies of a few milliseconds, no alert, the same numbers for the same seed), and broken in three ways that an
operator would see the way a real cluster shows them, each cleared by undoing it."""

from __future__ import annotations

import pytest

from pytest_itbench.twin.telemetry.traces import TraceQuery

from .hotel import GO_SERVICES, NAMESPACE, firing, hotel_twin, logs, pod_of, pods, scale, update, window

SERVER = "SPAN_KIND_SERVER"
DB_CLIENTS = {"geo": "geo", "rate": "rate", "profile": "profile", "recommendation": "recommendation",
              "reservation": "reservation", "user": "user"}  # service -> its MongoDB's suffix
CLIENT = "SPAN_KIND_CLIENT"


@pytest.fixture(scope="module")
def healthy():
    twin = hotel_twin(telemetry=True)
    settled = pods(twin)
    half_hour = window(twin, 1800)
    yield twin, settled, half_hour
    twin.stop()


# ---- healthy --------------------------------------------------------------------------------------------------------

def test_every_pod_of_the_manifests_runs_and_is_ready(healthy):
    _, settled, _ = healthy
    components = {p["metadata"]["labels"]["io.kompose.service"] for p in settled}
    assert components == {*GO_SERVICES, "consul", "load-generator", "memcached-profile", "memcached-rate",
                          "memcached-reserve", "mongodb-geo", "mongodb-profile", "mongodb-rate",
                          "mongodb-recommendation", "mongodb-reservation", "mongodb-user"}
    for pod in settled:
        statuses = pod["status"].get("containerStatuses") or []
        assert pod["status"]["phase"] == "Running" and statuses, pod["metadata"]["name"]
        assert all(s["ready"] for s in statuses), (pod["metadata"]["name"], statuses)
        # Deployed all at once, the services that read a MongoDB start before it and exit (behaviour.yaml,
        # needs_at_start) until it answers: a restart or two at the start, as on a real cluster; nothing else restarts.
        component = pod["metadata"]["labels"]["io.kompose.service"]
        for s in statuses:
            if component in DB_CLIENTS:
                assert 1 <= s["restartCount"] <= 2, (component, s)
                assert s["lastState"]["terminated"]["exitCode"] == 1, (component, s)
            else:
                assert s["restartCount"] == 0, (component, s)


def test_the_restarts_at_the_start_say_why_in_the_previous_log(healthy):
    twin, settled, _ = healthy
    for pod in settled:
        component = pod["metadata"]["labels"]["io.kompose.service"]
        if component in DB_CLIENTS:
            container = pod["spec"]["containers"][0]["name"]
            previous = "\n".join(line.text for line in twin.logs.lines(NAMESPACE, pod["metadata"]["name"], container,
                                                                     previous=True))
            assert "server selection error" in previous and f"mongodb-{DB_CLIENTS[component]}:27017" in previous, \
                (component, previous)


def test_every_service_serves_and_nothing_fails(healthy):
    _, _, half_hour = healthy
    assert half_hour.error_keys() == []
    for service in GO_SERVICES:
        assert half_hour.rate(service) > 0, service
    # The caches and databases are reached through the callers' client spans.
    assert half_hour.rate("rate", kind=CLIENT, span="memcached_get_multi_rate") > 0
    assert half_hour.rate("rate", kind=CLIENT, span="mongo_rate") > 0
    assert half_hour.rate("profile", kind=CLIENT, span="memcached_get_profile") > 0
    assert half_hour.rate("reservation", kind=CLIENT, span="mongodb_capacity_get_multi_number") > 0


def test_request_rates_follow_wrk2s_mix(healthy):
    _, _, half_hour = healthy
    # WRK2_RATE=10 requests a second, 60% searches, 39% recommendations, 0.5% log-ins, 0.5% reservations.
    total = half_hour.rate("frontend")
    assert 9 < total < 10.5
    hotels = half_hour.rate("frontend", span="HTTP GET /hotels")
    recommendations = half_hour.rate("frontend", span="HTTP GET /recommendations")
    assert hotels / total == pytest.approx(0.60, abs=0.02)
    assert recommendations / total == pytest.approx(0.39, abs=0.02)
    assert half_hour.calls("frontend", span="HTTP POST /user") == pytest.approx(0.005 * total * 1800, rel=0.35)
    assert half_hour.calls("frontend", span="HTTP POST /reservation") == pytest.approx(0.005 * total * 1800, rel=0.35)
    # Every search goes to geo and rate; every page of hotels, searched or recommended, to profile.
    assert half_hour.rate("geo") == pytest.approx(hotels, rel=0.01)
    assert half_hour.rate("rate") == pytest.approx(hotels, rel=0.01)
    assert half_hour.rate("profile") == pytest.approx(hotels + recommendations, rel=0.01)
    # Log-ins and reservations both check the user.
    assert half_hour.rate("user") == pytest.approx(0.01 * total, rel=0.35)


def test_latencies_are_a_few_milliseconds(healthy):
    _, _, half_hour = healthy
    assert 2 <= half_hour.p95_ms("frontend") <= 20
    assert half_hour.p95_ms("frontend", span="HTTP GET /hotels") > half_hour.p95_ms("geo")
    for service in ("search", "geo", "rate", "profile", "recommendation", "reservation", "user"):
        assert half_hour.p95_ms(service) <= 10, service


def test_no_alert_fires_and_the_span_metrics_are_scraped(healthy):
    twin, _, _ = healthy
    rates = twin.monitoring.engine.instant_query(
        f'sum by (service_name) (rate(traces_span_metrics_calls_total{{namespace="{NAMESPACE}"}}[5m]))',
        twin.clock.now()).value.to_json()
    assert {s["metric"]["service_name"] for s in rates} == set(GO_SERVICES)
    assert firing(twin) == set()


def test_the_go_services_log_their_start_as_zerolog_does(healthy):
    twin, _, _ = healthy
    geo = logs(twin, "geo")
    assert any(line.endswith("INF cmd/geo/db.go:40 > Attempting connection to mongodb://mongodb-geo:27017")
               for line in geo)
    assert any("Set global log level: INFO" in line for line in geo)  # LOG_LEVEL from the manifest
    assert any("Tune: GetMemCTimeout 2" in line for line in logs(twin, "rate"))  # MEMC_TIMEOUT
    assert logs(twin, "load-generator")[0] == "Running 1m test @ http://frontend:5000"
    # At INFO, a healthy request writes nothing. (While settling, profile may have logged a MongoDB that was not
    # listening yet: upstream's services wait for theirs at start instead, a gap of the twin's fixed start-up.)
    since = twin.clock.now() - 1800
    assert [line for component in GO_SERVICES for line in logs(twin, component, since=since)] == []


def test_the_same_seed_gives_the_same_numbers():
    def run(seed):
        twin = hotel_twin(seed=seed, settle=60)
        twin.warp(300)
        spans = twin.workload.span_series()
        twin.stop()
        return spans

    first = run(7)
    assert first == run(7)
    assert first != run(8)


# ---- faults -------------------------------------------------------------------------------------------------------

def errors_of(twin, seconds: float = 60):
    return window(twin, seconds).error_keys()


def test_geo_scaled_to_zero_fails_searches_until_it_is_back():
    twin = hotel_twin(telemetry=True)
    scale(twin, "geo", 0)
    twin.warp(300)
    alerts = firing(twin)
    assert {("HighRequestErrorRate", "search"), ("HighRequestErrorRate", "frontend")} <= alerts, alerts
    assert ("HighRequestErrorRate", "recommendation") not in alerts
    failing = {(k.service_name, k.span_name, k.span_kind) for k in errors_of(twin)}
    assert failing == {("search", "/geo.Geo/Nearby", CLIENT), ("search", "/search.Search/Nearby", SERVER),
                       ("frontend", "/search.Search/Nearby", CLIENT), ("frontend", "HTTP GET /hotels", SERVER)}
    # The failing span names the callee, and its message the cause (the frontend writes no log line for it).
    now_us = int(twin.clock.now() * 1e6)
    traces = twin.traces.find(TraceQuery("search", now_us - 240_000_000, now_us, operation="/geo.Geo/Nearby",
                                         limit=50))
    spans = [s for t in traces for s in t.spans if s.operation_name == "/geo.Geo/Nearby"]
    assert spans and all(s.status_code == "STATUS_CODE_ERROR" and s.kind == CLIENT for s in spans), spans[:2]
    assert "connect: connection refused" in spans[0].status_message
    scale(twin, "geo", 1)
    twin.warp(300)
    assert errors_of(twin) == []
    assert firing(twin) == set()
    twin.stop()


def test_a_memcached_target_port_changed_makes_rate_panic_with_the_cause():
    twin = hotel_twin(telemetry=True)

    def target(port):
        def change(service):
            service["spec"]["ports"][0]["targetPort"] = port
        return change

    update(twin, "services", "memcached-rate", target(11212))
    twin.warp(300)
    alerts = firing(twin)
    assert {("HighRequestErrorRate", s) for s in ("rate", "search", "frontend")} <= alerts, alerts
    panics = [line for line in logs(twin, "rate") if " PNC services/rate/server.go:114 > " in line]
    assert panics and "Memmcached error while trying to get hotel [id: [" in panics[0]  # upstream's spelling
    assert "11211: connect: connection refused" in panics[-1], panics[-1]
    assert ("rate", "memcached_get_multi_rate", CLIENT) in {(k.service_name, k.span_name, k.span_kind)
                                                              for k in errors_of(twin)}
    update(twin, "services", "memcached-rate", target(11211))
    twin.warp(300)
    assert errors_of(twin) == []
    assert firing(twin) == set()
    twin.stop()


def test_memcached_profile_gone_is_logged_by_profile_and_the_frontend():
    twin = hotel_twin(telemetry=True)
    scale(twin, "memcached-profile", 0)
    twin.warp(300)
    alerts = firing(twin)
    assert {("HighRequestErrorRate", "profile"), ("HighRequestErrorRate", "frontend")} <= alerts, alerts
    profile = [line for line in logs(twin, "profile") if " PNC " in line]
    assert profile and "but got memmcached error = dial tcp " in profile[-1]
    assert profile[-1].endswith(":11211: connect: connection refused")
    assert any(line.endswith("ERR services/frontend/server.go:285 > SearchHandler GetProfiles failed")
               for line in logs(twin, "frontend"))
    scale(twin, "memcached-profile", 1)
    twin.warp(300)
    assert firing(twin) == set()
    twin.stop()


def test_a_memory_limit_below_the_footprint_crash_loops_geo():
    def limit(doc):
        doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "8Mi"

    twin = hotel_twin(telemetry=True)
    update(twin, "deployments", "geo", limit, "apps")
    twin.warp(660)
    geo = pod_of(twin, "geo")
    status = geo["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 3
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
    alerts = firing(twin)
    assert ("KubePodCrashLooping", geo["metadata"]["name"]) in alerts, alerts
    assert ("HighRequestErrorRate", "search") in alerts

    def unlimit(doc):
        del doc["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    update(twin, "deployments", "geo", unlimit, "apps")
    twin.warp(600)
    assert pod_of(twin, "geo")["status"]["containerStatuses"][0]["restartCount"] == 0
    assert firing(twin) == set()
    twin.stop()
