"""An application's own metrics (Kafka consumer groups, database operations), scraped from its collector.

In the OpenTelemetry Demo the collector's receivers (kafkametrics, ...) produce these and its
prometheus exporter serves them beside the span metrics, so they are scraped through the same
target (:mod:`.collector`). A sample's ``namespace`` label names the application (its collector's
target); its other labels are exposed as they are. Families are published for
``/api/v1/metadata`` as samples of them first appear.
"""

from __future__ import annotations

from ..appmetrics import AppMetricsSource
from . import targets
from .base import METRIC_NAME, MetricFamily, SeriesGroup, target_series_labels


class AppMetrics:
    """A source's samples as series groups, by namespace; families as they first appear."""

    def __init__(self, source: AppMetricsSource):
        self.source = source
        self.families: list[MetricFamily] = []
        self._known: set[str] = set()
        self._groups: dict[tuple, SeriesGroup] = {}

    def groups(self) -> dict[str, list[SeriesGroup]]:
        by_namespace: dict[str, list[SeriesGroup]] = {}
        for sample in self.source.app_samples():
            exposed = dict(sample.labels)
            namespace = exposed.pop("namespace", "")
            key = (namespace, sample.name, tuple(sorted(exposed.items())))
            group = self._groups.get(key)
            if group is None:
                target = targets.otel_collector(namespace)
                labels = target_series_labels(target, {**exposed, METRIC_NAME: sample.name}, honor_labels=False)
                group = self._groups[key] = SeriesGroup([labels], [0.0])
            group.values[0] = float(sample.value)
            by_namespace.setdefault(namespace, []).append(group)
            if sample.name not in self._known:
                self._known.add(sample.name)
                self.families.append(MetricFamily(sample.name, sample.kind, sample.help))
        return by_namespace
