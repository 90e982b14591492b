"""Aggregation operators: sum, avg, count, min, max, group, stddev, stdvar, quantile, topk, bottomk, count_values.

Groups are fixed per series (labels do not change between steps), so series
are grouped once and each group's values are combined step by step.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from .. import labels as lbl
from ..labels import Labels
from . import ast
from .errors import EvaluationError
from .numeric import kahan_sum, quantile
from .steps import Slot, StepSeries, has_values
from .values import format_g, format_value

if TYPE_CHECKING:
    from .evaluator import Evaluator

_INT64_MAX = 9.223372036854775807e18
_INT64_MIN = -9.223372036854775808e18


def grouping_function(grouping: Sequence[str], without: bool) -> Callable[[Labels], Labels]:
    """The labels an aggregation keeps: the ``by`` labels, or all but the ``without`` ones and the name."""
    if without:
        dropped = frozenset((*grouping, lbl.METRIC_NAME))
        return lambda labels: tuple([pair for pair in labels if pair[0] not in dropped])
    if not grouping:
        return lambda labels: lbl.EMPTY
    kept = frozenset(grouping)
    return lambda labels: tuple([pair for pair in labels if pair[0] in kept])


def fast_sum(values: Sequence[float]) -> float:
    """The sum of ``values`` rounded once (math.fsum), which Prometheus' Kahan summation approximates;
    infinities of both signs give NaN and an overflowing sum gives ±Inf, as in Go."""
    try:
        return math.fsum(values)
    except (ValueError, OverflowError):
        return kahan_sum(values)


def _sum(values: list[float], q: float) -> float:
    return fast_sum(values)


def _avg(values: list[float], q: float) -> float:
    n = len(values)
    total = fast_sum(values)
    if math.isinf(total) and all(math.isfinite(v) for v in values):
        return fast_sum([v / n for v in values])  # the sum overflows; the mean does not
    return total / n


def _count(values: list[float], q: float) -> float:
    return float(len(values))


def _group(values: list[float], q: float) -> float:
    return 1.0


def _max(values: list[float], q: float) -> float:
    best = values[0]
    for v in values:
        if v > best or best != best:  # NaN only wins when there is nothing else
            best = v
    return best


def _min(values: list[float], q: float) -> float:
    best = values[0]
    for v in values:
        if v < best or best != best:
            best = v
    return best


def _stdvar(values: list[float], q: float) -> float:
    first = values[0]
    mean, aux, count = first, (0.0 if math.isfinite(first) else math.nan), 1.0
    for v in values[1:]:
        count += 1
        delta = v - mean
        mean += delta / count
        aux += delta * (v - mean)
    return aux / count


def _stddev(values: list[float], q: float) -> float:
    return math.sqrt(_stdvar(values, q))


def _quantile(values: list[float], q: float) -> float:
    return quantile(q, values)


_COMBINE: dict[str, Callable[[list[float], float], float]] = {
    "sum": _sum, "avg": _avg, "count": _count, "group": _group, "max": _max, "min": _min,
    "stddev": _stddev, "stdvar": _stdvar, "quantile": _quantile,
}


def aggregate(ev: "Evaluator", node: ast.Aggregate) -> list[StepSeries]:
    param = ev.eval(node.param) if node.param is not None else None
    series = ev.vector(node.expr)
    if node.op == "count_values":
        return _count_values(node, param, series)  # type: ignore[arg-type]
    if node.op in ("topk", "bottomk"):
        return _top_or_bottom(ev, node, param, series)  # type: ignore[arg-type]
    if node.op == "quantile":
        _check_quantiles(ev, param, node.param.pos)  # type: ignore[arg-type,union-attr]
    combine = _COMBINE[node.op]
    key = grouping_function(node.grouping, node.without)
    groups: dict[Labels, list[list[Slot]]] = {}
    for s in series:
        groups.setdefault(key(s.labels), []).append(s.values)
    qs = param if param is not None else [0.0] * ev.n
    out: list[StepSeries] = []
    for labels, columns in groups.items():
        if len(columns) == 1:
            values = [combine([v], q) if v is not None else None for v, q in zip(columns[0], qs)]
        else:
            values = []
            for step_values, q in zip(zip(*columns), qs):
                present = [v for v in step_values if v is not None]
                values.append(combine(present, q) if present else None)
        out.append(StepSeries(labels, values))
    return out


def _check_quantiles(ev: "Evaluator", qs: list[float], pos: int | None) -> None:
    # As Prometheus: a NaN parameter makes its maximum and minimum NaN, so only NaN is reported.
    if any(q != q for q in qs):
        ev.annotations.warn("quantile value should be between 0 and 1, got NaN", pos)
        return
    if max(qs) > 1:
        ev.annotations.warn(f"quantile value should be between 0 and 1, got {format_g(max(qs))}", pos)
    if min(qs) < 0:
        ev.annotations.warn(f"quantile value should be between 0 and 1, got {format_g(min(qs))}", pos)


def _top_or_bottom(ev: "Evaluator", node: ast.Aggregate, ks: list[float],
                   series: list[StepSeries]) -> list[StepSeries]:
    """topk/bottomk: per step and group, the k largest (smallest) samples, NaN last; labels unchanged."""
    if any(k != k for k in ks):
        raise EvaluationError("Parameter value is NaN")
    if max(ks) < 1:
        return []
    if min(ks) <= _INT64_MIN:
        raise EvaluationError(f"Scalar value {format_g(min(ks))} underflows int64")
    if max(ks) >= _INT64_MAX:
        raise EvaluationError(f"Scalar value {format_g(max(ks))} overflows int64")
    if not series:
        return []
    top = node.op == "topk"
    key = grouping_function(node.grouping, node.without)
    groups: dict[Labels, list[int]] = {}
    for i, s in enumerate(series):
        groups.setdefault(key(s.labels), []).append(i)

    def rank(item: tuple[float, int]) -> tuple[bool, float]:
        v = item[0]
        if v != v:
            return (True, 0.0)  # NaN ranks after every number, for both topk and bottomk
        return (False, -v if top else v)

    chosen: list[Optional[list[Slot]]] = [None] * len(series)
    ordered: list[StepSeries] = []  # an instant query keeps Prometheus' order: by group, best first
    for step in range(ev.n):
        k = min(int(ks[step]), len(series))
        if k < 1:
            continue
        for members in groups.values():
            present = [(series[i].values[step], i) for i in members if series[i].values[step] is not None]
            for value, i in sorted(present, key=rank)[:k]:
                if ev.n == 1:
                    ordered.append(StepSeries(series[i].labels, [value]))
                    continue
                slots = chosen[i]
                if slots is None:
                    slots = chosen[i] = [None] * ev.n
                slots[step] = value
    if ev.n == 1:
        return ordered
    return [StepSeries(series[i].labels, slots) for i, slots in enumerate(chosen) if slots is not None]


def _count_values(node: ast.Aggregate, label: str, series: list[StepSeries]) -> list[StepSeries]:
    """count_values: how many series have each value, the value written into ``label``."""
    if label == "":
        raise EvaluationError('invalid label name ""')
    key = grouping_function(node.grouping if node.without else (*node.grouping, label), node.without)
    n = len(series[0].values) if series else 0
    counts: dict[Labels, list[Slot]] = {}
    for s in series:
        for step, v in enumerate(s.values):
            if v is None:
                continue
            labels = key(lbl.with_label(s.labels, label, format_value(v)))
            slots = counts.get(labels)
            if slots is None:
                slots = counts[labels] = [None] * n
            slots[step] = (slots[step] or 0.0) + 1.0
    return [StepSeries(labels, slots) for labels, slots in counts.items() if has_values(slots)]
