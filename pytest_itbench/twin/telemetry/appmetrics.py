"""What an application's own exporters report, beyond span metrics: the contract the scrape loop reads.

In a real cluster these series come from receivers and exporters next to the application (the
collector's kafkametrics and postgresql receivers, translated to Prometheus names by its
Prometheus exporter). The traffic engine computes the same quantities from its model of the
application and hands them over as plain samples; the metrics exporter appends them at each
scrape, adding nothing but the scrape's own labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol


@dataclass(frozen=True)
class AppSample:
    """One series' value at the current simulated time (counters are cumulative and only grow)."""

    name: str  # a Prometheus metric name, e.g. kafka_consumer_group_lag_sum_ratio
    labels: Mapping[str, str]
    value: float
    kind: str = "gauge"  # "gauge" or "counter", for the metadata the exporter publishes
    help: str = ""


class AppMetricsSource(Protocol):
    def app_samples(self) -> Iterable[AppSample]:
        """Every series the application's exporters report now."""
