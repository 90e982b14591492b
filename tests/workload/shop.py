"""The astronomy shop in a twin, and ways to read what its traffic produced over a window of simulated time.

The shop is applied from the application's own manifests, init containers included: the consumers'
``until nc -z kafka 9092`` (and cart's wait for valkey-cart) hold those pods in ``Init:0/1`` until the
Service has a ready endpoint that listens, as on a real cluster, and flagd's ``init-config`` copies its flag
file out of the ConfigMap into the emptyDir flagd reads.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from pytest_itbench.apps.catalog import application
from pytest_itbench.twin import Twin
from pytest_itbench.twin.apiserver.registry import DeleteOptions
from pytest_itbench.twin.telemetry.spans import DURATION_BUCKETS_MS, SpanKey, SpanSeries

NAMESPACE = "astronomy-shop"
START = 1_700_000_000
SETTLE = 180  # seconds from applying the manifests until every service serves


def documents(edit=None) -> list[dict]:
    docs = application("astronomy-shop").documents()
    for doc in docs:
        if edit is not None:
            edit(doc)
    return docs


def shop_twin(seed: int = 1, edit=None, *, settle: float = SETTLE, telemetry: bool = False) -> Twin:
    """A twin running the shop, settled; ``edit(doc)`` may change the manifests first."""
    twin = Twin(seed=seed, nodes=3, start_time=START, telemetry=telemetry)
    apply(twin, *documents(edit))
    twin.warp(settle)
    return twin


def apply(twin: Twin, *objects: dict) -> None:
    for obj in objects:
        res = twin.api.catalog.for_api_version(obj["apiVersion"], obj["kind"])
        twin.api.create(res, obj["metadata"].get("namespace") or NAMESPACE, obj, twin.admin_ctx)


def delete(twin: Twin, plural: str, name: str, group: str = "", version: str = "v1") -> None:
    res = twin.api.catalog.lookup(group, version, plural)
    twin.api.delete(res, NAMESPACE, name, DeleteOptions(), twin.admin_ctx)


def update(twin: Twin, plural: str, name: str, change, group: str = "", version: str = "v1") -> None:
    res = twin.api.catalog.lookup(group, version, plural)
    obj = twin.api.get(res, NAMESPACE, name)
    change(obj)
    twin.api.update(res, NAMESPACE, name, obj, twin.admin_ctx)


def pod_of(twin: Twin, deployment: str) -> dict:
    pods = [p for p in twin.store.list("pods", NAMESPACE)[0]
            if (p["metadata"].get("labels") or {}).get("opentelemetry.io/name") == deployment
            and not p["metadata"].get("deletionTimestamp")]
    return max(pods, key=lambda p: p["metadata"]["creationTimestamp"])


def restart(twin: Twin, deployment: str) -> None:
    """Delete the deployment's pod, as ``kubectl rollout restart`` would end up doing."""
    delete(twin, "pods", pod_of(twin, deployment)["metadata"]["name"])


def set_flag(twin: Twin, flag: str, variant: str) -> None:
    """Turn a demo flag to ``variant`` in flagd-config, then restart flagd, as ITBench's flag faults do."""
    def change(configmap: dict) -> None:
        document = json.loads(configmap["data"]["demo.flagd.json"])
        document["flags"][flag]["defaultVariant"] = variant
        configmap["data"]["demo.flagd.json"] = json.dumps(document, indent=2)
    update(twin, "configmaps", "flagd-config", change)
    restart(twin, "flagd")


def logs(twin: Twin, deployment: str, container: str | None = None) -> list[str]:
    pod = pod_of(twin, deployment)
    return [line.text for line in twin.logs.lines(NAMESPACE, pod["metadata"]["name"], container or deployment)]


def usage(twin: Twin, deployment: str) -> tuple[float, int]:
    """(cores, bytes) of the deployment's container as metrics-server reports it."""
    pod = pod_of(twin, deployment)
    sample = twin.metrics.pod_sample(NAMESPACE, pod["metadata"]["name"])
    used = sample.usage[deployment]
    return used.cpu_nanocores / 1e9, used.memory_bytes


@dataclass
class Window:
    """What the span metrics counted between two moments."""

    seconds: float
    spans: dict[SpanKey, SpanSeries]

    def calls(self, service: str, *, status: str | None = None, kind: str = "SPAN_KIND_SERVER",
              span: str | None = None) -> float:
        return sum(s.calls for k, s in self.spans.items() if k.service_name == service and k.span_kind == kind
                   and (status is None or k.status_code == status) and (span is None or k.span_name == span))

    def rate(self, service: str, **kw) -> float:
        return self.calls(service, **kw) / self.seconds

    def errors(self, service: str, **kw) -> float:
        return self.calls(service, status="STATUS_CODE_ERROR", **kw)

    def p95_ms(self, service: str, *, kind: str = "SPAN_KIND_SERVER", span: str | None = None) -> float:
        buckets = [0.0] * (len(DURATION_BUCKETS_MS) + 1)
        for key, series in self.spans.items():
            if key.service_name == service and key.span_kind == kind and (span is None or key.span_name == span):
                buckets = [a + b for a, b in zip(buckets, series.bucket_counts)]
        total = sum(buckets)
        if total == 0:
            return math.nan
        seen = 0.0
        for bound, count in zip((*DURATION_BUCKETS_MS, math.inf), buckets):
            seen += count
            if seen >= 0.95 * total:
                return bound
        return math.inf

    def error_keys(self) -> list[SpanKey]:
        """The span series that counted errors, but the load generator's: its client spans mark the 404s of the
        background floor (behaviour.yaml) as errors, as OpenTelemetry's HTTP client convention says, and no shipped
        rule reads them."""
        return sorted((k for k, s in self.spans.items() if k.status_code == "STATUS_CODE_ERROR" and s.calls > 0
                       and k.service_name != "load-generator"),
                      key=lambda k: (k.service_name, k.span_name))


def window(twin: Twin, seconds: float) -> Window:
    """Warp ``seconds`` and return what the span metrics counted meanwhile."""
    before = twin.workload.span_series()
    twin.warp(seconds)
    after = twin.workload.span_series()
    delta = {}
    for key, series in after.items():
        old = before.get(key)
        if old is None:
            delta[key] = series
            continue
        delta[key] = SpanSeries(series.calls - old.calls, series.duration_sum_ms - old.duration_sum_ms,
                                [a - b for a, b in zip(series.bucket_counts, old.bucket_counts)])
    return Window(seconds, delta)
