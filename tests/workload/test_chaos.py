"""Chaos Mesh experiments against the astronomy shop: each kind, written as Chaos Mesh's documentation writes it
(namespace and label selectors, a mode, a duration), does to the selected pods' traffic what it does on a real
cluster, raises the alert the shipped rules raise there, ends when its duration runs out or it is deleted, and
reports its status as Chaos Mesh does (conditions Selected / AllInjected / AllRecovered, one record per target).

The shop's PostgreSQL gets an emptyDir at its data directory here, as a real deployment has a volume there: IOChaos
injects into a volume mount only.
"""

from __future__ import annotations

import pytest

from pytest_itbench.twin.errors import StatusError

from .shop import NAMESPACE, apply, delete, pod_of, shop_twin, window

ONSET = 420  # a 2m rate window plus a 3m `for`, with room
GROUP, VERSION = "chaos-mesh.org", "v1alpha1"


def with_postgres_volume(doc: dict) -> None:
    if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "postgresql":
        pod = doc["spec"]["template"]["spec"]
        pod.setdefault("volumes", []).append({"name": "data", "emptyDir": {}})
        pod["containers"][0].setdefault("volumeMounts", []).append(
            {"name": "data", "mountPath": "/var/lib/postgresql/data"})


@pytest.fixture(scope="module")
def shop():
    twin = shop_twin(telemetry=True, edit=with_postgres_volume)
    twin.warp(300)
    assert firing(twin) == set()
    yield twin
    twin.stop()


def selector(app: str) -> dict:
    return {"namespaces": [NAMESPACE], "labelSelectors": {"opentelemetry.io/name": app}}


def experiment(kind: str, name: str, spec: dict) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": spec}


def stored(twin, kind: str, name: str) -> dict | None:
    return twin.store.get(f"{kind.lower()}.{GROUP}", NAMESPACE, name)


def conditions(obj: dict) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or ()}


def records(obj: dict) -> list[dict]:
    return ((obj.get("status") or {}).get("experiment") or {}).get("containerRecords") or []


def firing(twin) -> set[tuple[str, str]]:
    result = twin.monitoring.engine.instant_query(f'ALERTS{{alertstate="firing", severity!="info", namespace="{NAMESPACE}"}}',
                                                  twin.clock.now()).value.to_json()
    return {(s["metric"]["alertname"], s["metric"].get("service_name") or s["metric"].get("pod", "").rsplit("-", 2)[0])
            for s in result}


def cores(twin, container: str) -> float:
    result = twin.monitoring.engine.instant_query(
        f'sum(rate(container_cpu_usage_seconds_total{{namespace="{NAMESPACE}", container="{container}"}}[2m]))',
        twin.clock.now()).value.to_json()
    return float(result[0]["value"][1])


def inject(twin, kind: str, name: str, spec: dict, seconds: float = ONSET):
    apply(twin, experiment(kind, name, spec))
    w = window(twin, seconds)
    obj = stored(twin, kind, name)
    assert conditions(obj) == {"Selected": "True", "AllInjected": "True", "AllRecovered": "False", "Paused": "False"}
    assert records(obj) and all(r["phase"] == "Injected" and r["injectedCount"] == 1 for r in records(obj))
    return w


def recovered(twin, kind: str, name: str, *, by_duration: bool, clear: float = 480) -> None:
    """The experiment ends (its duration runs out, or it is deleted), and its effect and alerts go."""
    if by_duration:
        twin.warp(60)
        obj = stored(twin, kind, name)
        assert conditions(obj)["AllRecovered"] == "True" and conditions(obj)["AllInjected"] == "False"
        assert all(r["phase"] == "Not Injected" and r["recoveredCount"] == 1 for r in records(obj))
        assert obj["status"]["experiment"]["desiredPhase"] == "Stop"
    delete(twin, kind.lower(), name, group=GROUP, version=VERSION)
    twin.warp(clear)
    assert stored(twin, kind, name) is None  # the finalizer let go once every record was recovered
    after = window(twin, 120)
    assert after.error_keys() == []
    assert firing(twin) == set()


# ---- NetworkChaos -------------------------------------------------------------------------------------------------

def test_network_delay_slows_every_call_to_the_selected_pods(shop):
    w = inject(shop, "NetworkChaos", "catalog-delay", {
        "action": "delay", "mode": "all", "selector": selector("product-catalog"),
        "delay": {"latency": "2s", "correlation": "0", "jitter": "0ms"}, "duration": "8m"})
    assert w.p95_ms("frontend", kind="SPAN_KIND_CLIENT", span="grpc.oteldemo.ProductCatalogService/GetProduct") >= 2000
    assert w.calls("product-catalog", span="oteldemo.ProductCatalogService/ListProducts") > 0  # slow, not failing
    assert w.errors("product-catalog") == 0
    assert {("HighRequestLatency", "frontend"), ("HighRequestLatency", "frontend-proxy")} <= firing(shop)
    recovered(shop, "NetworkChaos", "catalog-delay", by_duration=True)


def test_network_loss_fails_some_calls_with_timeouts(shop):
    w = inject(shop, "NetworkChaos", "currency-loss", {
        "action": "loss", "mode": "all", "selector": selector("currency"), "loss": {"loss": "60", "correlation": "0"},
        "duration": "8m"})
    failed = w.errors("frontend", kind="SPAN_KIND_CLIENT", span="grpc.oteldemo.CurrencyService/GetSupportedCurrencies")
    total = w.calls("frontend", kind="SPAN_KIND_CLIENT", span="grpc.oteldemo.CurrencyService/GetSupportedCurrencies")
    assert 0 < failed < total  # some calls lose every retransmission, most get through late
    assert ("HighRequestErrorRate", "frontend") in firing(shop)
    recovered(shop, "NetworkChaos", "currency-loss", by_duration=True)


def test_network_partition_cuts_the_selected_pods_off_their_target(shop):
    w = inject(shop, "NetworkChaos", "cart-partition", {
        "action": "partition", "mode": "all", "selector": selector("cart"), "direction": "to",
        "target": {"mode": "all", "selector": selector("valkey-cart")}, "duration": "30m"})
    assert w.errors("cart", kind="SPAN_KIND_CLIENT", span="HGET") == w.calls("cart", kind="SPAN_KIND_CLIENT", span="HGET")
    assert {("HighRequestErrorRate", "cart"), ("HighRequestErrorRate", "frontend")} <= firing(shop)
    obj = stored(shop, "NetworkChaos", "cart-partition")
    assert {r["selectorKey"] for r in records(obj)} == {".", ".Target"}
    recovered(shop, "NetworkChaos", "cart-partition", by_duration=False)  # deleted before its 30 minutes


# ---- PodChaos -----------------------------------------------------------------------------------------------------

def test_pod_failure_pauses_the_pod_until_the_duration_ends(shop):
    pod = pod_of(shop, "payment")["metadata"]["name"]
    w = inject(shop, "PodChaos", "payment-failure", {
        "action": "pod-failure", "mode": "one", "selector": selector("payment"), "duration": "8m"})
    paused = shop.store.get("pods", NAMESPACE, pod)
    assert paused["spec"]["containers"][0]["image"] == "gcr.io/google-containers/pause:latest"
    assert w.errors("checkout", kind="SPAN_KIND_CLIENT", span="oteldemo.PaymentService/Charge") > 0
    assert w.calls("payment", span="grpc.oteldemo.PaymentService/Charge") < 0.1 * w.calls(
        "checkout", kind="SPAN_KIND_CLIENT", span="oteldemo.PaymentService/Charge")
    assert {("HighRequestErrorRate", "checkout"), ("HighRequestErrorRate", "frontend")} <= firing(shop)
    recovered(shop, "PodChaos", "payment-failure", by_duration=True)
    assert shop.store.get("pods", NAMESPACE, pod)["spec"]["containers"][0]["image"].endswith("-payment")


def test_pod_kill_deletes_the_pod_and_its_deployment_replaces_it(shop):
    before = pod_of(shop, "currency")["metadata"]["name"]
    apply(shop, experiment("PodChaos", "currency-kill", {
        "action": "pod-kill", "mode": "one", "selector": selector("currency")}))
    shop.warp(120)
    after = pod_of(shop, "currency")
    assert after["metadata"]["name"] != before and after["status"]["phase"] == "Running"
    obj = stored(shop, "PodChaos", "currency-kill")
    assert [r["id"] for r in records(obj)] == [f"{NAMESPACE}/{before}"]
    assert conditions(obj)["AllInjected"] == "True"  # one-shot: it stays injected, nothing to recover
    recovered(shop, "PodChaos", "currency-kill", by_duration=False)


# ---- StressChaos --------------------------------------------------------------------------------------------------

def test_stress_cpu_burns_the_workers_load_in_the_container(shop):
    idle = cores(shop, "frontend")
    inject(shop, "StressChaos", "frontend-cpu", {
        "mode": "one", "selector": selector("frontend"), "stressors": {"cpu": {"workers": 2, "load": 100}},
        "duration": "3m30s"}, seconds=180)
    assert cores(shop, "frontend") > idle + 1.5
    # The frontend has no CPU limit and its node has cores to spare: nothing slows, no shipped alert fires.
    recovered(shop, "StressChaos", "frontend-cpu", by_duration=True)
    assert cores(shop, "frontend") < idle + 0.1


def test_stress_memory_beyond_the_limit_is_oom_killed(shop):
    apply(shop, experiment("StressChaos", "rec-memory", {
        "mode": "one", "selector": selector("recommendation"), "containerNames": ["recommendation"],
        "stressors": {"memory": {"workers": 1, "size": "600MB"}}, "duration": "2m30s"}))
    shop.warp(120)
    status = pod_of(shop, "recommendation")["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
    # The stressor died with the container run it was in: Chaos Mesh's record stays Injected, nothing stresses now.
    recovered(shop, "StressChaos", "rec-memory", by_duration=True)


# ---- HTTPChaos ----------------------------------------------------------------------------------------------------

def test_http_abort_fails_the_matching_requests(shop):
    w = inject(shop, "HTTPChaos", "quote-abort", {
        "mode": "all", "selector": selector("quote"), "target": "Request", "port": 8080, "method": "POST",
        "path": "/getquote", "abort": True, "duration": "8m"})
    assert w.calls("quote", span="POST /getquote") == 0
    assert w.errors("shipping", span="POST /get-quote") > 0
    assert {("HighRequestErrorRate", "shipping"), ("HighRequestErrorRate", "checkout"),
            ("HighRequestErrorRate", "frontend")} <= firing(shop)
    recovered(shop, "HTTPChaos", "quote-abort", by_duration=True)


def test_http_delay_slows_the_matching_requests(shop):
    w = inject(shop, "HTTPChaos", "images-delay", {
        "mode": "all", "selector": selector("image-provider"), "target": "Request", "port": 8081, "path": "*",
        "delay": "3s", "duration": "8m"})
    assert w.p95_ms("frontend-proxy", kind="SPAN_KIND_CLIENT", span="router image-provider egress") >= 3000
    assert ("HighRequestLatency", "frontend-proxy") in firing(shop)
    recovered(shop, "HTTPChaos", "images-delay", by_duration=True)


def test_http_patch_of_the_body_breaks_the_handler(shop):
    w = inject(shop, "HTTPChaos", "email-patch", {
        "mode": "all", "selector": selector("email"), "target": "Request", "port": 8080, "method": "POST",
        "path": "/send_order_confirmation", "patch": {"body": {"type": "JSON", "value": '{"email": "x"}'}},
        "duration": "8m"})
    assert w.errors("email", span="POST /send_order_confirmation") == w.calls("email", span="POST /send_order_confirmation")
    assert w.errors("checkout", span="oteldemo.CheckoutService/PlaceOrder") == 0  # the confirmation is optional
    assert {("HighRequestErrorRate", "email"), ("HighRequestErrorRate", "checkout")} <= firing(shop)
    recovered(shop, "HTTPChaos", "email-patch", by_duration=True)


# ---- JVMChaos and IOChaos -----------------------------------------------------------------------------------------

def test_jvm_exception_is_thrown_from_the_method(shop):
    w = inject(shop, "JVMChaos", "ad-exception", {
        "action": "exception", "mode": "all", "selector": selector("ad"), "class": "oteldemo.AdService",
        "method": "getAds", "exception": 'java.io.IOException("BOOM")', "port": 9277, "duration": "8m"})
    assert w.errors("ad", span="oteldemo.AdService/GetAds") == w.calls("ad", span="oteldemo.AdService/GetAds") > 0
    assert {("HighRequestErrorRate", "ad"), ("HighRequestErrorRate", "frontend")} <= firing(shop)
    recovered(shop, "JVMChaos", "ad-exception", by_duration=True)


def test_io_latency_slows_the_database_writes(shop):
    w = inject(shop, "IOChaos", "pg-latency", {
        "action": "latency", "mode": "one", "selector": selector("postgresql"),
        "volumePath": "/var/lib/postgresql/data", "path": "/var/lib/postgresql/data/**/*", "delay": "2s",
        "percent": 100, "duration": "8m"})
    assert w.p95_ms("accounting", kind="SPAN_KIND_CLIENT", span="postgresql") >= 2000
    recovered(shop, "IOChaos", "pg-latency", by_duration=True)


# ---- schedules and invalid specs -----------------------------------------------------------------------------------

def test_a_schedule_spawns_experiments_on_its_cron(shop):
    apply(shop, {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Schedule",
                 "metadata": {"name": "kill-quote", "namespace": NAMESPACE},
                 "spec": {"schedule": "*/5 * * * *", "type": "PodChaos", "historyLimit": 2,
                          "concurrencyPolicy": "Allow",
                          "podChaos": {"action": "pod-kill", "mode": "one", "selector": selector("quote")}}})
    shop.warp(660)
    children = [c for c in shop.store.list(f"podchaos.{GROUP}", NAMESPACE)[0]
                if c["metadata"].get("labels", {}).get("managed-by") == "kill-quote"]
    assert 1 <= len(children) <= 2  # two or three runs, the oldest beyond the history limit collected
    assert all(c["metadata"]["ownerReferences"][0]["kind"] == "Schedule" for c in children)
    schedule = shop.store.get(f"schedules.{GROUP}", NAMESPACE, "kill-quote")
    assert {a["name"] for a in schedule["status"]["active"]} == {c["metadata"]["name"] for c in children}
    delete(shop, "schedules", "kill-quote", group=GROUP, version=VERSION)
    shop.warp(300)
    assert not [c for c in shop.store.list(f"podchaos.{GROUP}", NAMESPACE)[0]
                if c["metadata"].get("labels", {}).get("managed-by") == "kill-quote"]


def test_a_selector_matching_nothing_is_reported_not_injected(shop):
    apply(shop, experiment("NetworkChaos", "nobody", {
        "action": "delay", "mode": "all", "selector": selector("no-such-app"), "delay": {"latency": "1s"},
        "duration": "5m"}))
    shop.warp(30)
    obj = stored(shop, "NetworkChaos", "nobody")
    assert conditions(obj)["Selected"] == "False" and conditions(obj)["AllInjected"] == "False"
    events = [e for e in shop.store.list("events", NAMESPACE)[0]
              if e["involvedObject"].get("name") == "nobody" and e["type"] == "Warning"]
    assert any("no target has been selected" in e["message"] for e in events)
    delete(shop, "networkchaos", "nobody", group=GROUP, version=VERSION)
    shop.warp(30)


def test_an_io_chaos_on_a_path_that_is_no_mount_fails_to_apply(shop):
    apply(shop, experiment("IOChaos", "not-a-mount", {
        "action": "latency", "mode": "one", "selector": selector("kafka"), "volumePath": "/tmp/kafka-logs",
        "delay": "1s", "percent": 100, "duration": "5m"}))
    shop.warp(30)
    obj = stored(shop, "IOChaos", "not-a-mount")
    assert conditions(obj)["AllInjected"] == "False"
    assert any(e["type"] == "Failed" and "not a mount point" in e.get("message", "") for r in records(obj)
               for e in r.get("events") or ())
    delete(shop, "iochaos", "not-a-mount", group=GROUP, version=VERSION)
    shop.warp(30)


@pytest.mark.parametrize("spec, words", [
    ({"action": "explode", "mode": "all", "selector": {"namespaces": [NAMESPACE]}}, "action"),
    ({"action": "delay", "mode": "sometimes", "selector": {"namespaces": [NAMESPACE]}, "delay": {"latency": "1s"}},
     "mode"),
])
def test_an_invalid_spec_is_refused_at_admission(shop, spec, words):
    with pytest.raises(StatusError) as refused:
        apply(shop, experiment("NetworkChaos", "invalid", spec))
    assert refused.value.code == 422 and words in str(refused.value)
