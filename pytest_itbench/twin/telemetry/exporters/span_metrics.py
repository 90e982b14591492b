"""The OpenTelemetry Collector's span metrics, as its prometheus exporter serves them and Prometheus scrapes them.

The spanmetrics connector counts spans by ``service.name``, span name, kind and status code (plus the
``namespace`` dimension ITBench configures) into ``traces.span.metrics.calls`` and the
``traces.span.metrics.duration`` histogram (unit ms, no descriptions); the prometheus exporter names
them ``traces_span_metrics_calls_total`` and ``traces_span_metrics_duration_milliseconds`` (``_bucket``
with ``le``, ``_sum``, ``_count``), adds ``job`` from ``service.name`` and ``otel_scope_name``. The
collector's ServiceMonitor scrapes without honor_labels, so the exposed ``job`` and ``namespace`` are
kept as ``exported_job`` and ``exported_namespace`` beside the target's own. One target per
namespace: each application has its collector.
"""

from __future__ import annotations

from ..labels import Labels
from ..spans import DURATION_BUCKETS_MS, SpanKey, SpanMetricsSource, SpanSeries
from . import targets
from .base import METRIC_NAME, MetricFamily, SeriesGroup, target_series_labels

CALLS = MetricFamily("traces_span_metrics_calls_total", "counter", "")
DURATION = MetricFamily("traces_span_metrics_duration_milliseconds", "histogram", "")
FAMILIES = (CALLS, DURATION)

SCOPE = "spanmetricsconnector"
_LE = tuple(f"{bound:g}" for bound in DURATION_BUCKETS_MS) + ("+Inf",)


class SpanMetrics:
    """A source's span keys as series groups, by namespace; the groups' values follow the source."""

    families = FAMILIES

    def __init__(self, source: SpanMetricsSource):
        self.source = source
        self._groups: dict[SpanKey, SeriesGroup] = {}

    def groups(self) -> dict[str, list[SeriesGroup]]:
        by_namespace: dict[str, list[SeriesGroup]] = {}
        for key, series in sorted(self.source.span_series().items(), key=lambda item: _order(item[0])):
            group = self._groups.get(key)
            if group is None:
                group = self._groups[key] = _group(key)
            _fill(group.values, series)
            by_namespace.setdefault(key.namespace, []).append(group)
        return by_namespace


def _order(key: SpanKey) -> tuple[str, ...]:
    return key.namespace, key.service_name, key.span_name, key.span_kind, key.status_code


def _group(key: SpanKey) -> SeriesGroup:
    target = targets.otel_collector(key.namespace)
    exposed = {"service_name": key.service_name, "span_name": key.span_name, "span_kind": key.span_kind,
               "status_code": key.status_code, "namespace": key.namespace, "job": key.service_name,
               "otel_scope_name": SCOPE}

    def labels(name: str, **extra: str) -> Labels:
        return target_series_labels(target, {**exposed, **extra, METRIC_NAME: name}, honor_labels=False)

    histogram = DURATION.name
    names = [labels(CALLS.name)]
    names += [labels(histogram + "_bucket", le=le) for le in _LE]
    names += [labels(histogram + "_sum"), labels(histogram + "_count")]
    return SeriesGroup(names, [0.0] * len(names))


def _fill(values: list[float], series: SpanSeries) -> None:
    """calls, the cumulative buckets, sum, count: in the order of the group's labels."""
    values[0] = series.calls
    running = 0.0
    for i, count in enumerate(series.bucket_counts):
        running += count
        values[1 + i] = running
    values[-2] = series.duration_sum_ms
    values[-1] = running
