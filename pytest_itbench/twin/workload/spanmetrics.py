"""The spanmetrics connector's series, accumulated from the engine's per-step request counts.

The engine knows how many spans of each kind it produced in a step (a fractional expectation) and
their latency distribution. Each series keeps the expected count per duration bucket; a series
reports each bucket's expectation rounded to a whole number of spans, and its count as their sum,
so counters only grow, are whole, and track the model without drift. Bucket shares are computed
once per distribution: while the distribution stays the same, a step only adds to one number.
"""

from __future__ import annotations

import threading

from ..telemetry.spans import DURATION_BUCKETS_MS, SpanKey, SpanSeries
from .latency import Mixture

_BOUNDS_SECONDS = tuple(b / 1000 for b in DURATION_BUCKETS_MS)


class _Series:
    __slots__ = ("closed", "closed_sum", "shares", "mean_ms", "pending")

    def __init__(self) -> None:
        self.closed = [0.0] * (len(DURATION_BUCKETS_MS) + 1)
        self.closed_sum = 0.0
        self.shares: tuple[float, ...] | None = None
        self.mean_ms = 0.0
        self.pending = 0.0  # spans with the current distribution, not yet folded into ``closed``

    def add(self, count: float, shares: tuple[float, ...], mean_ms: float) -> None:
        if shares is not self.shares:
            self._fold()
            self.shares, self.mean_ms = shares, mean_ms
        self.pending += count

    def _fold(self) -> None:
        if self.shares is not None and self.pending:
            for i, share in enumerate(self.shares):
                self.closed[i] += self.pending * share
            self.closed_sum += self.pending * self.mean_ms
        self.pending = 0.0

    def report(self) -> SpanSeries:
        self._fold()  # the expectations only grow, so rounding them afresh keeps every count monotonic
        buckets = [float(int(c + 0.5)) for c in self.closed]
        return SpanSeries(sum(buckets), self.closed_sum, buckets)


class SpanMetrics:
    """A :class:`~pytest_itbench.twin.telemetry.spans.SpanMetricsSource`."""

    def __init__(self) -> None:
        self._series: dict[SpanKey, _Series] = {}
        self._shares: dict[Mixture, tuple[float, ...]] = {}
        self._lock = threading.Lock()

    def record(self, key: SpanKey, count: float, latency: Mixture) -> None:
        """``count`` more spans (an expectation) whose durations follow ``latency`` (seconds)."""
        if count <= 0:
            return
        shares = self._shares.get(latency)
        if shares is None:
            if len(self._shares) > 4096:
                self._shares.clear()
            shares = self._shares[latency] = tuple(latency.fractions(_BOUNDS_SECONDS))
        with self._lock:
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = _Series()
            series.add(count, shares, latency.mean * 1000)

    def span_series(self) -> dict[SpanKey, SpanSeries]:
        with self._lock:
            out = {key: series.report() for key, series in self._series.items()}
        return {key: series for key, series in out.items() if series.calls > 0}
