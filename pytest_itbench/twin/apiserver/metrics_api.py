"""The metrics.k8s.io/v1beta1 API (PodMetrics, NodeMetrics)."""

from __future__ import annotations


def register(server, metrics) -> None:
    """Register the metrics handlers with the server's virtual resources."""
