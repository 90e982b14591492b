"""The table of function implementations: name -> how to evaluate a call.

Every implementation takes the evaluator and the call node and returns the
call's value at all steps. The signatures (argument and result types) are
the other table, ``signatures.py``; the two are checked against each other
by the tests.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

from .. import labels as lbl
from . import ast, range_functions as rf
from .histogram_functions import histogram_fraction, histogram_quantile, native_only
from .label_functions import label_join, label_replace
from .math_functions import DATE, UNARY, Unary, clamp, round_to
from .numeric import INF, NAN
from .steps import Slot, StepSeries, drop_metric_name, has_values, merge_by_labels

if TYPE_CHECKING:
    from .evaluator import Evaluator, StepValue

Implementation = Callable[["Evaluator", ast.Call], "StepValue"]


# ---- adapters --------------------------------------------------------------------------------------

def _per_sample(fn: Callable[..., Slot]) -> Implementation:
    """Apply ``fn(value, *scalar_args)`` to every sample; the metric name is dropped."""

    def apply(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
        series = ev.vector(call.args[0])
        params = [ev.scalars(a) for a in call.args[1:]]
        out: list[StepSeries] = []
        for s in series:
            if params:
                values = [None if v is None else fn(v, *args) for v, *args in zip(s.values, *params)]
            else:
                values = [None if v is None else fn(v) for v in s.values]
            if has_values(values):
                out.append(StepSeries(drop_metric_name(s.labels), values))
        return merge_by_labels(out)

    return apply


def _date(fn: Unary) -> Implementation:
    """A date function: of the samples' values, or with no argument of the evaluation time."""
    per_sample = _per_sample(fn)

    def apply(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
        if call.args:
            return per_sample(ev, call)
        return [StepSeries(lbl.EMPTY, [fn(t / 1000) for t in ev.times])]

    return apply


def _over_range(fn: rf.SeriesFunction, keep_name: bool = False, expects_counter: bool = False) -> Implementation:
    return lambda ev, call: ev.over_range(call, fn, keep_name=keep_name, expects_counter=expects_counter)


# ---- functions with their own evaluation --------------------------------------------------------------

def _round(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    if len(call.args) == 1:
        return _per_sample(lambda v: round_to(v, 1.0))(ev, call)
    return _per_sample(round_to)(ev, call)


def _clamp_with(low: float | None, high: float | None) -> Implementation:
    """clamp_min/clamp_max: clamp with the other bound open."""

    def bounded(v: float, bound: float) -> Slot:
        return clamp(v, bound if low is None else low, bound if high is None else high)

    return _per_sample(bounded)


def _clamp(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    # A maximum below the minimum empties the vector at that step.
    return _per_sample(lambda v, low, high: None if high < low else clamp(v, low, high))(ev, call)


def _absent_labels(node: ast.Expr) -> lbl.Labels:
    """The labels absent() reports: the selector's equality matchers, unless a label is matched twice."""
    if isinstance(node, ast.MatrixSelector):
        node = node.selector
    if not isinstance(node, ast.VectorSelector):
        return lbl.EMPTY
    labels: dict[str, str] = {}
    seen: set[str] = set()
    for m in node.matchers:
        if m.name == lbl.METRIC_NAME:
            continue
        if m.type is lbl.MatchType.EQUAL and m.name not in seen:
            labels[m.name] = m.value
            seen.add(m.name)
        else:
            labels.pop(m.name, None)
    return lbl.from_mapping(labels)


def _absent(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    series = ev.vector(call.args[0])
    values: list[Slot] = [None if any(s.values[i] is not None for s in series) else 1.0 for i in range(ev.n)]
    return [StepSeries(_absent_labels(call.args[0]), values)] if has_values(values) else []


def _absent_over_time(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    present = ev.over_range(call, rf.present_over_time, keep_name=True)
    values: list[Slot] = [None if any(s.values[i] is not None for s in present) else 1.0 for i in range(ev.n)]
    return [StepSeries(_absent_labels(call.args[0]), values)] if has_values(values) else []


def _scalar(ev: "Evaluator", call: ast.Call) -> list[float]:
    series = ev.vector(call.args[0])
    out: list[float] = []
    for i in range(ev.n):
        present = [s.values[i] for s in series if s.values[i] is not None]
        out.append(present[0] if len(present) == 1 else NAN)
    return out


def _vector(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    return [StepSeries(lbl.EMPTY, list(ev.scalars(call.args[0])))]


def _time(ev: "Evaluator", call: ast.Call) -> list[float]:
    return [t / 1000 for t in ev.times]


def _pi(ev: "Evaluator", call: ast.Call) -> list[float]:
    return [math.pi] * ev.n


def _timestamp(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    """The time of each sample: a selector's own sample times, otherwise the evaluation time."""
    arg = call.args[0]
    if isinstance(arg, ast.VectorSelector):
        series = ev.vector_selector(arg, sample_times=True)
    else:
        series = [StepSeries(s.labels, [None if v is None else t / 1000 for v, t in zip(s.values, ev.times)])
                  for s in ev.vector(arg)]
    return merge_by_labels([StepSeries(drop_metric_name(s.labels), s.values) for s in series])


def _sort(descending: bool) -> Implementation:
    def apply(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
        series = ev.vector(call.args[0])
        if ev.n != 1:
            ev.annotations.warn("sort is ineffective for range queries since results are always ordered by labels",
                                call.pos)
            return series

        def key(s: StepSeries) -> tuple[bool, float]:
            v = s.values[0]
            if v != v:
                return (True, 0.0)  # NaN last either way
            return (False, -v if descending else v)

        return sorted(series, key=key)

    return apply


FUNCTIONS: dict[str, Implementation] = {
    **{name: _per_sample(fn) for name, fn in UNARY.items()},
    **{name: _date(fn) for name, fn in DATE.items()},
    "round": _round,
    "clamp": _clamp,
    "clamp_min": _clamp_with(low=None, high=INF),
    "clamp_max": _clamp_with(low=-INF, high=None),
    "absent": _absent,
    "absent_over_time": _absent_over_time,
    "scalar": _scalar,
    "vector": _vector,
    "time": _time,
    "pi": _pi,
    "timestamp": _timestamp,
    "sort": _sort(descending=False),
    "sort_desc": _sort(descending=True),
    "label_replace": label_replace,
    "label_join": label_join,
    "histogram_quantile": histogram_quantile,
    "histogram_fraction": histogram_fraction,
    "histogram_count": native_only,
    "histogram_sum": native_only,
    "histogram_avg": native_only,
    "histogram_stddev": native_only,
    "histogram_stdvar": native_only,
    "rate": _over_range(rf.rate, expects_counter=True),
    "increase": _over_range(rf.increase, expects_counter=True),
    "delta": _over_range(rf.delta),
    "irate": _over_range(rf.irate),
    "idelta": _over_range(rf.idelta),
    "deriv": _over_range(rf.deriv),
    "predict_linear": _over_range(rf.predict_linear),
    "changes": _over_range(rf.changes),
    "resets": _over_range(rf.resets),
    "avg_over_time": _over_range(rf.avg_over_time),
    "sum_over_time": _over_range(rf.sum_over_time),
    "count_over_time": _over_range(rf.count_over_time),
    "min_over_time": _over_range(rf.min_over_time),
    "max_over_time": _over_range(rf.max_over_time),
    "quantile_over_time": _over_range(rf.quantile_over_time),
    "stddev_over_time": _over_range(rf.stddev_over_time),
    "stdvar_over_time": _over_range(rf.stdvar_over_time),
    "present_over_time": _over_range(rf.present_over_time),
    "last_over_time": _over_range(rf.last_over_time, keep_name=True),
    "first_over_time": _over_range(rf.first_over_time, keep_name=True),
}
