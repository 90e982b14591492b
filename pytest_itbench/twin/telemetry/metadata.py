"""Metric metadata (type, help, unit) as scrape targets expose it, for ``/api/v1/metadata``.

Whoever writes a metric family into the store registers it here once, the
way an exporter's ``# HELP`` and ``# TYPE`` lines reach Prometheus.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

METRIC_TYPES = frozenset({"counter", "gauge", "histogram", "gaugehistogram", "summary", "info", "stateset",
                          "unknown"})


@dataclass(frozen=True)
class MetricMetadata:
    type: str
    help: str
    unit: str = ""


class MetadataRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._families: dict[str, dict[MetricMetadata, None]] = {}

    def register(self, family: str, type: str, help: str, unit: str = "") -> None:
        """Record a metric family's metadata; a family may have several (as from different targets)."""
        if type not in METRIC_TYPES:
            raise ValueError(f"unknown metric type {type!r} for {family}")
        with self._lock:
            self._families.setdefault(family, {})[MetricMetadata(type, help, unit)] = None

    def families(self, metric: str | None = None, limit: int = -1,
                 limit_per_metric: int = -1) -> dict[str, list[MetricMetadata]]:
        """Metadata by family name, as ``/api/v1/metadata`` filters it (negative limits mean none)."""
        with self._lock:
            names = [metric] if metric else list(self._families)
            out: dict[str, list[MetricMetadata]] = {}
            for name in names:
                if 0 <= limit <= len(out):
                    break
                entries = list(self._families.get(name, ()))
                if not entries:
                    continue
                out[name] = entries[:limit_per_metric] if limit_per_metric > 0 else entries
            return out
