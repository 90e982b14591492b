"""What the traffic engine produces and the signal exporters read: span metrics and traces.

The contract between ``twin/workload`` (which decides what every request did) and the exporters
(span metrics scraped into Prometheus, traces served by the Jaeger query API). It mirrors what an
OpenTelemetry Collector holds in a real cluster: the spanmetrics connector's cumulative series, and
the spans the Jaeger exporter stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Protocol

# The spanmetrics connector's default explicit histogram buckets, in milliseconds.
DURATION_BUCKETS_MS: tuple[float, ...] = (2, 4, 6, 8, 10, 50, 100, 200, 400, 800, 1000, 1400, 2000, 5000, 10000,
                                          15000)

SPAN_KINDS = ("SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_INTERNAL", "SPAN_KIND_PRODUCER",
              "SPAN_KIND_CONSUMER")
STATUS_CODES = ("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")


@dataclass(frozen=True)
class SpanKey:
    """The labels of one spanmetrics series (the connector's default dimensions, plus the namespace)."""

    service_name: str
    span_name: str
    span_kind: str
    status_code: str
    namespace: str


@dataclass
class SpanSeries:
    """Cumulative totals since the series appeared, as the connector exports them (they only grow)."""

    calls: float = 0.0
    duration_sum_ms: float = 0.0
    # Per-bucket (non-cumulative) counts for DURATION_BUCKETS_MS, plus the +Inf overflow as the last item.
    bucket_counts: list[float] = field(default_factory=lambda: [0.0] * (len(DURATION_BUCKETS_MS) + 1))


class SpanMetricsSource(Protocol):
    def span_series(self) -> Mapping[SpanKey, SpanSeries]:
        """Every series seen so far, with its cumulative totals at the current simulated time."""


@dataclass
class Span:
    trace_id: str  # 32 lowercase hex digits
    span_id: str  # 16 lowercase hex digits
    parent_span_id: str | None
    service_name: str
    operation_name: str
    kind: str  # one of SPAN_KINDS
    start: float  # simulated epoch seconds
    duration: float  # seconds
    status_code: str  # one of STATUS_CODES
    status_message: str = ""
    attributes: dict = field(default_factory=dict)  # e.g. http.method, http.route, http.status_code, rpc.system
    resource: dict = field(default_factory=dict)  # e.g. service.name, k8s.pod.name, k8s.namespace.name
    events: list[dict] = field(default_factory=list)  # {"name", "time", "attributes"} (exceptions, ...)


@dataclass
class Trace:
    trace_id: str
    spans: list[Span]


class TraceSink(Protocol):
    def add(self, traces: Iterable[Trace]) -> None:
        """Store finished traces (the engine hands over what its sampler kept)."""
