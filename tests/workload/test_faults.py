"""The Kubernetes fault battery of issue 4 on the astronomy shop: each test breaks one thing through the API, checks
that the shipped rules fire the expected alerts in time, that metrics, logs and traces show the real cause, and that
undoing the change clears every alert and brings the error rate back to the baseline.

Each case runs on a fresh, settled shop (a few seconds of wall time), so no case depends on another's undo.

Timing. The twin scrapes every 15 s and evaluates rules every 30 s (the Prometheus Operator's default). An alert
becomes pending at the first evaluation whose expression holds and fires at the first evaluation at least its
rule's ``for`` later; so it fires no sooner than ``for`` after the change and no later than ``for`` plus the time the
cluster needs to reach the broken state (``onset``: a rollout, an image pull back-off, a crash loop, an empty rate
window) plus :data:`SLACK` for scrapes and evaluation slots. ``for`` is read from the shipped rule files.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Callable

import pytest
import yaml

from pytest_itbench.apps.rules import rule_file_paths
from pytest_itbench.twin import Twin
from pytest_itbench.twin.telemetry.traces import TraceQuery

from .shop import NAMESPACE, SETTLE, START, Window, apply, delete, documents, logs, pod_of, restart, update, window

SCRAPE = 15.0
EVALUATION = 30.0
SLACK = 2 * SCRAPE + 2 * EVALUATION  # the change lands between scrapes; pending and firing land on 30 s slots
BASELINE = 300.0  # healthy minutes before each change: fills the rules' 5m windows with good samples
RECOVERED = 120.0  # the window, after the alerts cleared, whose error rate must be back at the baseline's


def _seconds(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)([smh])", text))


def _holds() -> dict[str, float]:
    """``for`` of each alert of the shipped rule files (the longest, where groups share an alert name)."""
    holds: dict[str, float] = {}
    for path in rule_file_paths():
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    holds[rule["alert"]] = max(holds.get(rule["alert"], 0.0), _seconds(rule.get("for", "0s")))
    return holds


HOLD = _holds()


# ---- the shop and what it shows ----------------------------------------------------------------------------------
def fresh_shop(*extra: dict, edit=None) -> Twin:
    """A settled shop with telemetry; ``extra`` objects are created right after the namespace."""
    twin = Twin(seed=7, nodes=3, start_time=START, telemetry=True)
    docs = documents(edit)
    namespaces = [d for d in docs if d["kind"] == "Namespace"]
    apply(twin, *namespaces, *extra, *(d for d in docs if d["kind"] != "Namespace"))
    twin.warp(SETTLE)
    return twin


def alerts(twin: Twin, state: str | None = None, at: float | None = None) -> list[dict[str, str]]:
    """The ALERTS series of the shop's namespace (pending and firing, or only ``state``)."""
    selector = f'namespace="{NAMESPACE}", severity!="info"' + (f', alertstate="{state}"' if state else "")
    result = twin.monitoring.engine.instant_query(f"ALERTS{{{selector}}}", at or twin.clock.now()).value
    return [s["metric"] for s in result.to_json()]


def first_firing(twin: Twin, name: str, labels: dict[str, str], since: float) -> float | None:
    """When ``name`` with ``labels`` was first firing after ``since``, from the ALERTS series."""
    selector = ", ".join([f'alertname="{name}"', 'alertstate="firing"', f'namespace="{NAMESPACE}"',
                          *(f'{k}="{v}"' for k, v in labels.items())])
    result = twin.monitoring.engine.range_query(f"ALERTS{{{selector}}}", since, twin.clock.now(), SCRAPE).value
    times = [float(t) for series in result.to_json() for t, _ in series["values"]]
    return min(times) if times else None


def value(twin: Twin, query: str) -> list[tuple[dict[str, str], float]]:
    result = twin.monitoring.engine.instant_query(query, twin.clock.now()).value
    return [(s["metric"], float(s["value"][1])) for s in result.to_json()]


def active_in_alertmanager(twin: Twin, name: str, labels: dict[str, str]) -> bool:
    return any(view.alert.labels.get("alertname") == name and view.status.state == "active"
               and all(view.alert.labels.get(k) == v for k, v in labels.items())
               for view in twin.alertmanager.alerts())


def failing_spans(twin: Twin, service: str, seconds: float = 120.0):
    """Failed spans of ``service`` in the last ``seconds``, from the Jaeger store's error search."""
    now = twin.clock.now()
    found = twin.traces.find(TraceQuery(service, int((now - seconds) * 1e6), int(now * 1e6),
                                        tags={"error": "true"}, limit=50))
    return [span for trace in found for span in trace.spans
            if span.service_name == service and span.status_code == "STATUS_CODE_ERROR"]


def events(twin: Twin, pod: dict) -> list[str]:
    return [f'{e.get("reason")}: {e.get("message")}' for e in twin.store.list("events", NAMESPACE)[0]
            if (e.get("involvedObject") or {}).get("name") == pod["metadata"]["name"]]


def deployment(twin: Twin, name: str) -> dict:
    return twin.api.get(twin.api.catalog.lookup("apps", "v1", "deployments"), NAMESPACE, name)


def container(deployment: dict, name: str) -> dict:
    return next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == name)


def new_pod(twin: Twin, deployment: str, than: dict) -> dict:
    """The deployment's newest pod a few seconds on, which must not be ``than`` (the change rolled a new one out)."""
    twin.warp(5)
    pod = pod_of(twin, deployment)
    assert pod["metadata"]["uid"] != than["metadata"]["uid"], f"{deployment}: no new pod was rolled out"
    return pod


# ---- one trial: baseline, change, alerts, evidence, undo, recovery ------------------------------------------------
@dataclass(frozen=True)
class Expect:
    """An alert the change must fire: its name, labels it must carry, and the onset before its rule can hold."""

    name: str
    labels: dict[str, str]
    onset: float = 0.0

    def deadline(self) -> float:
        return HOLD[self.name] + self.onset + SLACK


class Trial:
    def __init__(self, twin: Twin):
        self.twin = twin
        self.baseline: Window = window(twin, BASELINE)
        assert self.baseline.error_keys() == [], "the shop fails before any change"
        assert alerts(twin) == [], "an alert is pending or firing before any change"
        self.changed = 0.0

    def change(self, act: Callable[[Twin], None]) -> None:
        act(self.twin)
        self.changed = self.twin.clock.now()

    def fires(self, *expected: Expect) -> None:
        """Warp an evaluation at a time until each alert fires: no sooner than its ``for``, by its deadline, and
        Alertmanager has it active."""
        for alert in sorted(expected, key=Expect.deadline):
            end = self.changed + alert.deadline()
            while (fired := first_firing(self.twin, alert.name, alert.labels, self.changed)) is None \
                    and self.twin.clock.now() < end:
                self.twin.warp(min(EVALUATION, end - self.twin.clock.now()))
            assert fired is not None, (f"{alert.name} {alert.labels} did not fire within {alert.deadline():.0f}s; "
                                       f"ALERTS: {alerts(self.twin)}")
            assert fired - self.changed >= HOLD[alert.name], f"{alert.name} fired before its `for`"
            assert active_in_alertmanager(self.twin, alert.name, alert.labels), f"{alert.name} not in Alertmanager"

    def undo(self, act: Callable[[Twin], None], clears_within: float, expected: tuple[Expect, ...]) -> None:
        """Undo the change; within ``clears_within`` nothing is pending or firing, Alertmanager has resolved the
        alerts, and the next minutes fail no request and serve the baseline's rate."""
        act(self.twin)
        self.twin.warp(clears_within)
        assert alerts(self.twin) == [], f"still pending or firing {clears_within:.0f}s after the undo"
        for alert in expected:
            assert not active_in_alertmanager(self.twin, alert.name, alert.labels), f"{alert.name} not resolved"
        after = window(self.twin, RECOVERED)
        assert after.error_keys() == []
        assert after.rate("frontend-proxy") == pytest.approx(self.baseline.rate("frontend-proxy"), rel=0.25)
        assert alerts(self.twin) == []


@pytest.fixture
def trial():
    made: list[Trial] = []

    def start(*extra: dict, edit=None) -> Trial:
        made.append(Trial(fresh_shop(*extra, edit=edit)))
        return made[-1]
    yield start
    for t in made:
        t.twin.stop()


# ---- a callee the frontend cannot reach -------------------------------------------------------------------------
CATALOG = {"opentelemetry.io/name": "product-catalog"}


def scale(replicas: int):
    return lambda twin: update(twin, "deployments", "product-catalog",
                               lambda d: d["spec"].__setitem__("replicas", replicas), group="apps")


def target_port(port: int):
    return lambda twin: update(twin, "services", "product-catalog",
                               lambda s: s["spec"]["ports"][0].__setitem__("targetPort", port))


def selector(labels: dict):
    return lambda twin: update(twin, "services", "product-catalog",
                               lambda s: s["spec"].__setitem__("selector", dict(labels)))


DENY_INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "product-catalog-deny-all", "namespace": NAMESPACE},
                "spec": {"podSelector": {"matchLabels": CATALOG}, "policyTypes": ["Ingress"]}}


def catalog_has_no_endpoint(twin: Twin) -> None:
    ready = value(twin, f'kube_endpoint_address{{namespace="{NAMESPACE}", endpoint="product-catalog", ready="true"}}')
    assert ready == []


def catalog_endpoint_on_port(port: int):
    def check(twin: Twin) -> None:
        ports = value(twin, f'kube_endpoint_ports{{namespace="{NAMESPACE}", endpoint="product-catalog"}}')
        assert {m["port_number"] for m, _ in ports} == {str(port)}
    return check


def catalog_scaled_to_zero(twin: Twin) -> None:
    [(_, spec)] = value(twin, f'kube_deployment_spec_replicas{{namespace="{NAMESPACE}", '
                              f'deployment="product-catalog"}}')
    [(_, available)] = value(twin, f'kube_deployment_status_replicas_available{{namespace="{NAMESPACE}", '
                                   f'deployment="product-catalog"}}')
    assert (spec, available) == (0, 0)


def no_state_metric(twin: Twin) -> None:
    """A NetworkPolicy changes no object kube-state-metrics reports: the pod is ready and listed as an endpoint."""
    ready = value(twin, f'kube_endpoint_address{{namespace="{NAMESPACE}", endpoint="product-catalog", ready="true"}}')
    assert len(ready) == 1


@dataclass(frozen=True)
class Unreachable:
    id: str
    inject: Callable[[Twin], None]
    undo: Callable[[Twin], None]
    cause: str  # the words the frontend's gRPC client (Node) logs and puts on the span
    state: Callable[[Twin], None]  # what kube-state-metrics shows
    slow: bool = False  # the calls hang until the client's deadline: the latency alert fires too


UNREACHABLE = [
    # The issue names NoRequestsReceived for the scaled service: its span-metric series stays and stops growing.
    # Its rule needs a whole 5m rate window without a request before its own `for`.
    Unreachable("deployment-scaled-to-zero", scale(0), scale(1), "ECONNREFUSED", catalog_scaled_to_zero),
    Unreachable("service-target-port-changed", target_port(8081), target_port(8080), "ECONNREFUSED",
                catalog_endpoint_on_port(8081)),
    Unreachable("service-selector-broken", selector({"opentelemetry.io/name": "product-catalogue"}), selector(CATALOG),
                "ECONNREFUSED", catalog_has_no_endpoint),
    Unreachable("deny-all-ingress-network-policy", lambda twin: apply(twin, DENY_INGRESS),
                lambda twin: delete(twin, "networkpolicies", DENY_INGRESS["metadata"]["name"],
                                    group="networking.k8s.io"),
                "Failed to connect", no_state_metric, slow=True),
]


@pytest.mark.parametrize("case", UNREACHABLE, ids=lambda c: c.id)
def test_an_unreachable_product_catalog_fails_the_frontend(trial, case: Unreachable):
    t = trial()
    catalog_ip = t.twin.store.get("services", NAMESPACE, "product-catalog")["spec"]["clusterIP"]
    expected = [Expect("HighRequestErrorRate", {"service_name": "frontend"}),
                Expect("HighRequestErrorRate", {"service_name": "frontend-proxy"})]
    if case.slow:
        expected += [Expect("HighRequestLatency", {"service_name": "frontend"}, onset=2 * 60)]
    if case.id == "deployment-scaled-to-zero":
        expected += [Expect("NoRequestsReceived", {"service_name": "product-catalog"}, onset=5 * 60)]
    t.change(case.inject)
    t.fires(*expected)

    # Metrics: the frontend's client spans fail, only those naming the catalog (directly or via recommendation).
    failing = value(t.twin, f'sum by (span_name) (rate(traces_span_metrics_calls_total{{namespace="{NAMESPACE}", '
                            f'service_name="frontend", span_kind="SPAN_KIND_CLIENT", '
                            f'status_code="STATUS_CODE_ERROR"}}[2m])) > 0')
    spans = {m["span_name"] for m, _ in failing}
    assert "grpc.oteldemo.ProductCatalogService/ListProducts" in spans
    assert spans <= {"grpc.oteldemo.ProductCatalogService/ListProducts",
                     "grpc.oteldemo.ProductCatalogService/GetProduct",
                     "grpc.oteldemo.RecommendationService/ListRecommendations"}, spans
    case.state(t.twin)
    # Logs: the frontend names the cause; a refused connection names the catalog's Service address.
    lines = [line for line in logs(t.twin, "frontend") if case.cause in line]
    assert lines, logs(t.twin, "frontend")[-3:]
    if case.cause == "ECONNREFUSED":
        assert f"{catalog_ip}:8080" in lines[-1]
    # Traces: a failing client span of the frontend names the catalog and carries the cause.
    to_catalog = [s for s in failing_spans(t.twin, "frontend")
                  if s.attributes.get("server.address") == "product-catalog"]
    assert to_catalog and case.cause.lower() in to_catalog[-1].status_message.lower(), to_catalog[-1:]

    # A rate window (2m) drains after the undo, plus scrapes and evaluation slots.
    t.undo(case.undo, clears_within=2 * 60 + SLACK, expected=tuple(expected))


# ---- pods that do not come up --------------------------------------------------------------------------------------
def set_container(deployment: str, change: Callable[[dict], None]):
    return lambda twin: update(twin, "deployments", deployment, lambda d: change(container(d, deployment)),
                               group="apps")


def test_a_nonexistent_image_leaves_the_new_pod_waiting(trial):
    t = trial()
    old = pod_of(t.twin, "product-catalog")
    image = container(deployment(t.twin, "product-catalog"), "product-catalog")["image"]
    bad = image.rsplit(":", 1)[0] + ":0.0.0-does-not-exist"
    t.change(set_container("product-catalog", lambda c: c.__setitem__("image", bad)))
    pod = new_pod(t.twin, "product-catalog", old)
    name = pod["metadata"]["name"]
    # The waiting reason turns ErrImagePull at each retried pull and back to ImagePullBackOff, and the rule keeps the
    # reason as a label, so each caught retry restarts the pending alert (as on a real cluster). Onset: the pull
    # back-off doubling from 10 s up to its 5-minute cap (10+20+40+80+160 s), after which retries come no oftener
    # than the rule's `for`.
    expected = (Expect("KubeContainerWaiting", {"pod": name, "container": "product-catalog",
                                                "reason": "ImagePullBackOff"}, onset=310),
                Expect("KubePodNotReady", {"pod": name}))
    t.fires(*expected)

    waiting = value(t.twin, f'kube_pod_container_status_waiting_reason{{namespace="{NAMESPACE}", pod="{name}"}} == 1')
    assert [m["reason"] for m, _ in waiting] == ["ImagePullBackOff"]
    assert any(f'Failed to pull image "{bad}"' in e for e in events(t.twin, pod)), events(t.twin, pod)
    assert t.twin.logs.lines(NAMESPACE, name, "product-catalog") == []  # it never ran
    # The rollout waits for the new pod: the old ReplicaSet's pod keeps serving, so no request fails.
    assert window(t.twin, 60).error_keys() == []
    assert failing_spans(t.twin, "frontend") == []

    # The bad pod goes with the rollback; its series go stale at the next scrape.
    t.undo(set_container("product-catalog", lambda c: c.__setitem__("image", image)), clears_within=SLACK,
           expected=expected)


def test_a_crashing_command_crash_loops(trial):
    t = trial()
    old = pod_of(t.twin, "product-catalog")
    t.change(set_container("product-catalog", lambda c: c.__setitem__(
        "command", ["sh", "-c", "echo 'product catalog: missing configuration' >&2; exit 1"])))
    pod = new_pod(t.twin, "product-catalog", old)
    name = pod["metadata"]["name"]
    # Onset: a crash, a 10 s back-off, a crash: CrashLoopBackOff is reported within a minute.
    expected = (Expect("KubePodCrashLooping", {"pod": name, "container": "product-catalog"}, onset=60),)
    t.fires(*expected)

    restarts = value(t.twin, f'kube_pod_container_status_restarts_total{{namespace="{NAMESPACE}", pod="{name}"}}')
    assert restarts and restarts[0][1] >= 3
    last = value(t.twin, f'kube_pod_container_status_last_terminated_reason{{namespace="{NAMESPACE}", '
                         f'pod="{name}"}} == 1')
    assert [m["reason"] for m, _ in last] == ["Error"]
    status = t.twin.store.get("pods", NAMESPACE, name)["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert any("Back-off restarting failed container" in e for e in events(t.twin, pod))
    previous = [line.text for line in t.twin.logs.lines(NAMESPACE, name, "product-catalog", previous=True)]
    assert "product catalog: missing configuration" in previous
    assert window(t.twin, 60).error_keys() == []  # the old pod still serves

    # max_over_time(...[5m]) remembers the crash loop for 5 minutes after the pod is gone.
    t.undo(set_container("product-catalog", lambda c: c.pop("command")), clears_within=5 * 60 + SLACK,
           expected=expected)


def test_a_readiness_probe_that_cannot_pass_keeps_the_pod_not_ready(trial):
    t = trial()
    old = pod_of(t.twin, "frontend")
    probe = {"httpGet": {"path": "/healthz-unreachable", "port": 8080}, "periodSeconds": 5, "failureThreshold": 3}
    t.change(set_container("frontend", lambda c: c.__setitem__("readinessProbe", probe)))
    pod = new_pod(t.twin, "frontend", old)
    name = pod["metadata"]["name"]
    expected = (Expect("KubePodNotReady", {"pod": name}),)
    t.fires(*expected)

    assert value(t.twin, f'kube_pod_status_ready{{namespace="{NAMESPACE}", pod="{name}", condition="true"}}')[0][1] == 0
    assert value(t.twin, f'kube_pod_status_phase{{namespace="{NAMESPACE}", pod="{name}", phase="Running"}}')[0][1] == 1
    assert any("Readiness probe failed: HTTP probe failed with statuscode: 404" in e for e in events(t.twin, pod)), \
        events(t.twin, pod)
    # The Service keeps only the old pod as a ready endpoint, and it serves.
    addresses = value(t.twin, f'kube_endpoint_address{{namespace="{NAMESPACE}", endpoint="frontend"}}')
    assert {m["ready"] for m, _ in addresses} == {"true", "false"}
    assert window(t.twin, 60).error_keys() == []

    # The not-ready pod goes with the rollback.
    t.undo(set_container("frontend", lambda c: c.pop("readinessProbe")), clears_within=SLACK, expected=expected)


def test_a_memory_limit_below_the_footprint_is_oom_killed(trial):
    t = trial()
    old = pod_of(t.twin, "ad")
    limit = container(deployment(t.twin, "ad"), "ad")["resources"]["limits"]["memory"]
    t.change(set_container("ad", lambda c: c["resources"]["limits"].__setitem__("memory", "50Mi")))
    pod = new_pod(t.twin, "ad", old)
    name = pod["metadata"]["name"]
    # The new pod has no readiness probe, so it counts as available as soon as it runs: the rollout removes the
    # old pod before the JVM has grown past the limit, and the frontend's ad calls fail from then on.
    expected = (Expect("KubePodCrashLooping", {"pod": name, "container": "ad"}, onset=2 * 60),
                Expect("HighRequestErrorRate", {"service_name": "frontend"}, onset=60))
    t.fires(*expected)

    status = t.twin.store.get("pods", NAMESPACE, name)["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert status["lastState"]["terminated"]["exitCode"] == 137
    last = value(t.twin, f'kube_pod_container_status_last_terminated_reason{{namespace="{NAMESPACE}", '
                         f'pod="{name}"}} == 1')
    assert [m["reason"] for m, _ in last] == ["OOMKilled"]
    limits = value(t.twin, f'kube_pod_container_resource_limits{{namespace="{NAMESPACE}", pod="{name}", '
                           f'resource="memory"}}')
    assert limits[0][1] == 50 * 2**20
    failing = value(t.twin, f'sum by (span_name) (rate(traces_span_metrics_calls_total{{namespace="{NAMESPACE}", '
                            f'service_name="frontend", span_kind="SPAN_KIND_CLIENT", '
                            f'status_code="STATUS_CODE_ERROR"}}[2m])) > 0')
    assert {m["span_name"] for m, _ in failing} == {"grpc.oteldemo.AdService/GetAds"}
    to_ad = [s for s in failing_spans(t.twin, "frontend") if s.attributes.get("server.address") == "ad"]
    assert to_ad, "no failing frontend span names the ad service"

    t.undo(set_container("ad", lambda c: c["resources"]["limits"].__setitem__("memory", limit)),
           clears_within=5 * 60 + SLACK, expected=expected)


# ---- a credential the callee does not accept ---------------------------------------------------------------------
def connection_string(password: str):
    def change(c: dict) -> None:
        for e in c["env"]:
            if e["name"] == "DB_CONNECTION_STRING":
                e["value"] = f"Host=postgresql;Username=otelu;Password={password};Database=otel"
    return set_container("accounting", change)


def test_a_wrong_database_password_fails_accounting(trial):
    t = trial()
    t.change(connection_string("not-otelp"))
    # Onset: the accounting Deployment rolls a pod with the new environment; it consumes orders a few seconds later.
    expected = (Expect("HighRequestErrorRate", {"service_name": "accounting"}, onset=30),)
    t.fires(*expected)

    failing = value(t.twin, f'sum by (span_name, span_kind) (rate(traces_span_metrics_calls_total{{'
                            f'namespace="{NAMESPACE}", service_name="accounting", '
                            f'status_code="STATUS_CODE_ERROR"}}[2m])) > 0')
    assert ("postgresql", "SPAN_KIND_CLIENT") in {(m["span_name"], m["span_kind"]) for m, _ in failing}
    assert any('28P01: password authentication failed for user "otelu"' in line for line in logs(t.twin, "accounting"))
    spans = [s for s in failing_spans(t.twin, "accounting", 300) if s.operation_name == "postgresql"]
    assert spans and "28P01" in spans[-1].status_message
    # The shop's front is untouched: orders are placed, only their bookkeeping fails.
    assert {k.service_name for k in window(t.twin, 60).error_keys()} == {"accounting"}

    # NoRequestsReceived for accounting may be firing too (its consumer spans failed): a good order clears it.
    t.undo(connection_string("otelp"), clears_within=2 * 60 + SLACK, expected=expected)


VALKEY_SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "valkey-auth", "namespace": NAMESPACE},
                 "data": {"password": base64.b64encode(b"cart-store").decode()}}


def _password_from_secret(doc: dict) -> None:
    """Valkey requires the Secret's password; the cart service passes the same Secret in its Valkey options."""
    if doc["kind"] != "Deployment" or doc["metadata"]["name"] not in ("valkey-cart", "cart"):
        return
    c = container(doc, doc["metadata"]["name"])
    ref = {"name": "VALKEY_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "valkey-auth", "key": "password"}}}
    if doc["metadata"]["name"] == "valkey-cart":
        c["env"].append(ref)
        c["args"] = ["--requirepass", "$(VALKEY_PASSWORD)"]
    else:
        at = next(i for i, e in enumerate(c["env"]) if e["name"] == "VALKEY_ADDR")
        c["env"][at:at + 1] = [ref, {"name": "VALKEY_ADDR", "value": "valkey-cart:6379,password=$(VALKEY_PASSWORD)"}]


def rotate(password: bytes):
    """Change the Secret and restart Valkey, which reads it at start; the cart keeps the password it started with."""
    def act(twin: Twin) -> None:
        update(twin, "secrets", "valkey-auth",
               lambda s: s.__setitem__("data", {"password": base64.b64encode(password).decode()}))
        restart(twin, "valkey-cart")
    return act


def test_a_rotated_valkey_password_fails_the_cart(trial):
    t = trial(VALKEY_SECRET, edit=_password_from_secret)
    t.change(rotate(b"rotated"))
    expected = (Expect("HighRequestErrorRate", {"service_name": "cart"}, onset=30),
                Expect("HighRequestErrorRate", {"service_name": "frontend"}, onset=30))
    t.fires(*expected)

    failing = value(t.twin, f'sum by (span_name) (rate(traces_span_metrics_calls_total{{namespace="{NAMESPACE}", '
                            f'service_name="cart", span_kind="SPAN_KIND_CLIENT", '
                            f'status_code="STATUS_CODE_ERROR"}}[2m])) > 0')
    assert "HGET" in {m["span_name"] for m, _ in failing}
    assert any("WRONGPASS invalid username-password pair" in line for line in logs(t.twin, "cart"))
    spans = [s for s in failing_spans(t.twin, "cart") if s.kind == "SPAN_KIND_SERVER"]
    assert spans and "WRONGPASS" in spans[-1].status_message, spans[-1:]

    t.undo(rotate(b"cart-store"), clears_within=2 * 60 + SLACK, expected=expected)
