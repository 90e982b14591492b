"""histogram_quantile and histogram_fraction over classic histograms (``_bucket`` series with ``le``).

Bucket series are grouped by all their labels but ``le`` (the metric name
included, so two histograms never mix); the result carries the group's
labels without ``le`` and without the name. The store holds no native
histograms, so the functions that only read native histograms
(histogram_count, histogram_sum, ...) return nothing, as Prometheus does
for float samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable

from .. import labels as lbl
from ..labels import Labels
from . import ast
from .numeric import bucket_fraction, bucket_quantile
from .steps import Slot, StepSeries, drop_metric_name, has_values, merge_by_labels
from .values import format_g

if TYPE_CHECKING:
    from .evaluator import Evaluator

_MONOTONICITY = ("input to histogram_quantile needed to be fixed for monotonicity "
                 "(see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)")


@dataclass(frozen=True)
class ForcedMonotonicity:
    """What Prometheus' monotonicity info reports: over which steps and buckets counts were raised, by how
    much at most, and how often (its ``histogramQuantileForcedMonotonicityErr``)."""

    min_ts: int
    max_ts: int
    min_bucket: float
    max_bucket: float
    max_diff: float
    count: int = 0  # further occurrences merged into this one

    def merge(self, later: "ForcedMonotonicity") -> "ForcedMonotonicity":
        return ForcedMonotonicity(min(self.min_ts, later.min_ts), max(self.max_ts, later.max_ts),
                                  min(self.min_bucket, later.min_bucket), max(self.max_bucket, later.max_bucket),
                                  max(self.max_diff, later.max_diff), self.count + later.count + 1)

    def text(self) -> str:
        return (f"from buckets {format_g(self.min_bucket)} to {format_g(self.max_bucket)}, with a max diff of "
                f"{'%.2g' % self.max_diff}, over {self.count + 1} samples from {_rfc3339(self.min_ts)} to "
                f"{_rfc3339(self.max_ts)}")


def _rfc3339(t_ms: int) -> str:
    return datetime.fromtimestamp(int(t_ms / 1000), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_le(text: str) -> float | None:
    if "_" in text:  # Python's float() accepts digit separators, Go's ParseFloat does not here
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _by_histogram(ev: "Evaluator", series: list[StepSeries],
                  pos: int | None) -> dict[Labels, list[tuple[float, StepSeries]]]:
    groups: dict[Labels, list[tuple[float, StepSeries]]] = {}
    for s in series:
        le_text = lbl.get(s.labels, lbl.BUCKET_LABEL)
        upper = _parse_le(le_text)
        if upper is None:
            # Prometheus names the metric here only with delayed name removal, a flag the twin leaves off.
            ev.annotations.warn(f'bucket label "le" is missing or has a malformed value of {lbl.go_quote(le_text)}',
                                pos)
            continue
        groups.setdefault(lbl.drop(s.labels, (lbl.BUCKET_LABEL,)), []).append((upper, s))
    return groups


def _per_step(ev: "Evaluator", series: list[StepSeries], params: list[list[float]],
              compute: Callable[[list[tuple[float, float]], tuple[float, ...], int], Slot],
              pos: int | None) -> list[StepSeries]:
    out: list[StepSeries] = []
    for key, buckets in _by_histogram(ev, series, pos).items():
        values: list[Slot] = []
        for step in range(ev.n):
            present = [(upper, s.values[step]) for upper, s in buckets if s.values[step] is not None]
            values.append(compute(present, tuple(p[step] for p in params), ev.times[step]) if present else None)
        if has_values(values):
            out.append(StepSeries(drop_metric_name(key), values))
    return merge_by_labels(out)


def histogram_quantile(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    qs = ev.scalars(call.args[0])
    series = ev.vector(call.args[1])
    for q in dict.fromkeys(qs):
        if q != q or q < 0 or q > 1:
            ev.annotations.warn(f"quantile value should be between 0 and 1, got {format_g(q)}", call.args[0].pos)

    def compute(buckets: list[tuple[float, float]], params: tuple[float, ...], t_ms: int) -> float:
        value, forced = bucket_quantile(params[0], buckets)
        if forced is not None:
            ev.annotations.info(_MONOTONICITY, call.args[1].pos, ForcedMonotonicity(t_ms, t_ms, *forced))
        return value

    return _per_step(ev, series, [qs], compute, call.args[1].pos)


def histogram_fraction(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    lower, upper = ev.scalars(call.args[0]), ev.scalars(call.args[1])
    series = ev.vector(call.args[2])
    return _per_step(ev, series, [lower, upper], lambda buckets, p, t_ms: bucket_fraction(p[0], p[1], buckets),
                     call.args[2].pos)


def native_only(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    """histogram_count/sum/avg/stddev/stdvar read native histograms only; float samples are ignored."""
    ev.vector(call.args[0])
    return []
