"""kube-state-metrics (v2.20.0) from the twin's store: the families kube-prometheus-stack scrapes."""

from .exporter import KINDS, KubeStateMetrics

__all__ = ["KINDS", "KubeStateMetrics"]
