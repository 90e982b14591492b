"""The applications' OpenTelemetry Collectors: one target per namespace, serving span metrics and app metrics.

The traffic engine hands over its sources when it starts (:meth:`OtelCollector.add_spans`,
:meth:`OtelCollector.add_app_metrics`); a namespace's target exists while some source reports
series in it.
"""

from __future__ import annotations

from typing import Iterable

from ..appmetrics import AppMetricsSource
from ..spans import SpanMetricsSource
from . import targets
from .app_metrics import AppMetrics
from .base import MetricFamily, SeriesGroup, TargetScrape
from .span_metrics import SpanMetrics


class OtelCollector:
    job = targets.COLLECTOR_SERVICE

    def __init__(self) -> None:
        self._spans: list[SpanMetrics] = []
        self._apps: list[AppMetrics] = []

    @property
    def families(self) -> list[MetricFamily]:
        out: list[MetricFamily] = []
        for part in (*self._spans[:1], *self._apps):  # every span view has the same two families
            out.extend(part.families)
        return out

    def add_spans(self, source: SpanMetricsSource) -> None:
        self._spans.append(SpanMetrics(source))

    def add_app_metrics(self, source: AppMetricsSource) -> None:
        self._apps.append(AppMetrics(source))

    def scrape(self, now: float) -> Iterable[TargetScrape]:
        by_namespace: dict[str, list[SeriesGroup]] = {}
        for part in (*self._spans, *self._apps):
            for namespace, groups in part.groups().items():
                by_namespace.setdefault(namespace, []).extend(groups)
        return [TargetScrape((namespace,), targets.otel_collector(namespace), groups)
                for namespace, groups in sorted(by_namespace.items())]
