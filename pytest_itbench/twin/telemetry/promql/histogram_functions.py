"""histogram_quantile and histogram_fraction over classic histograms (``_bucket`` series with ``le``).

Bucket series are grouped by all their labels but ``le`` (the metric name
included, so two histograms never mix); the result carries the group's
labels without ``le`` and without the name. The store holds no native
histograms, so the functions that only read native histograms
(histogram_count, histogram_sum, ...) return nothing, as Prometheus does
for float samples.
"""

from __future__ import annotations

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


def _parse_le(text: str) -> float | None:
    if "_" in text:  # Python's float() accepts digit separators, Go's ParseFloat does not here
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _by_histogram(ev: "Evaluator", series: list[StepSeries]) -> dict[Labels, list[tuple[float, StepSeries]]]:
    groups: dict[Labels, list[tuple[float, StepSeries]]] = {}
    for s in series:
        le_text = lbl.get(s.labels, lbl.BUCKET_LABEL)
        upper = _parse_le(le_text)
        if upper is None:
            ev.annotations.warn(f'bucket label "le" is missing or has a malformed value of {lbl.go_quote(le_text)}')
            continue
        groups.setdefault(lbl.drop(s.labels, (lbl.BUCKET_LABEL,)), []).append((upper, s))
    return groups


def _per_step(ev: "Evaluator", series: list[StepSeries], params: list[list[float]],
              compute: Callable[[list[tuple[float, float]], tuple[float, ...]], Slot]) -> list[StepSeries]:
    out: list[StepSeries] = []
    for key, buckets in _by_histogram(ev, series).items():
        values: list[Slot] = []
        for step in range(ev.n):
            present = [(upper, s.values[step]) for upper, s in buckets if s.values[step] is not None]
            values.append(compute(present, tuple(p[step] for p in params)) if present else None)
        if has_values(values):
            out.append(StepSeries(drop_metric_name(key), values))
    return merge_by_labels(out)


def histogram_quantile(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    qs = ev.scalars(call.args[0])
    series = ev.vector(call.args[1])
    for q in dict.fromkeys(qs):
        if q != q or q < 0 or q > 1:
            ev.annotations.warn(f"quantile value should be between 0 and 1, got {format_g(q)}")

    def compute(buckets: list[tuple[float, float]], params: tuple[float, ...]) -> float:
        value, forced = bucket_quantile(params[0], buckets)
        if forced:
            ev.annotations.info(_MONOTONICITY)
        return value

    return _per_step(ev, series, [qs], compute)


def histogram_fraction(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    lower, upper = ev.scalars(call.args[0]), ev.scalars(call.args[1])
    series = ev.vector(call.args[2])
    return _per_step(ev, series, [lower, upper], lambda buckets, p: bucket_fraction(p[0], p[1], buckets))


def native_only(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    """histogram_count/sum/avg/stddev/stdvar read native histograms only; float samples are ignored."""
    ev.vector(call.args[0])
    return []
