"""The exporters a real cluster's Prometheus scrapes, played from the twin's state.

- :class:`KubeStateMetrics`: kube-state-metrics from the object store;
- :class:`Cadvisor`: the kubelets' cAdvisor endpoints from pod statuses and the usage model;
- :class:`OtelCollector`: the applications' collectors (span metrics, app metrics) from the traffic engine.
"""

from . import targets
from .base import Exporter, MetricFamily, SeriesGroup, TargetScrape
from .cadvisor import Cadvisor
from .collector import OtelCollector
from .ksm import KubeStateMetrics

__all__ = ["Cadvisor", "Exporter", "KubeStateMetrics", "MetricFamily", "OtelCollector", "SeriesGroup",
           "TargetScrape", "targets"]
