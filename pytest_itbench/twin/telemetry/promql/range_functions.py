"""Functions over range vectors: rate and friends, the ``*_over_time`` family, deriv, predict_linear.

Each function computes one series' value at every step. The evaluator
hands it the series' samples (:class:`RangeSamples`), the step windows
(:class:`Window`: ``(start, end]`` in milliseconds, the step's time and its
scalar arguments) and the sample index bounds of every window
(:class:`Geometry`), which depend on timestamps only and so are shared by
all series scraped at the same times. Most functions are written for one
window (a *kernel*) and lifted with :func:`per_window`; ``rate``,
``increase`` and ``delta``, which dominate dashboards and alert rules, work
on all windows of a series in one loop.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from .numeric import kahan_inc, linear_regression, quantile
from .steps import Annotations, RangeSamples, Slot
from .values import format_g


@dataclass(slots=True)
class Window:
    start: int  # exclusive
    end: int  # inclusive
    t: int  # the evaluation step's time
    range_s: float
    params: tuple[float, ...]  # the call's scalar arguments at this step
    annotations: Annotations
    first_arg_pos: int | None = None  # where the call's first argument starts, for annotations about it


@dataclass(slots=True)
class Geometry:
    """Index bounds [lo, hi) of each window in one timestamp sequence."""

    lo: list[int]
    hi: list[int]
    derived: dict = field(default_factory=dict)  # per-geometry data a function may cache


def geometry(ts: Sequence[int], windows: Sequence[Window]) -> Geometry:
    right = bisect.bisect_right
    return Geometry([right(ts, w.start) for w in windows], [right(ts, w.end) for w in windows])


SeriesFunction = Callable[[RangeSamples, Geometry, Sequence[Window]], list[Slot]]
Kernel = Callable[[RangeSamples, int, int, Window], Optional[float]]


def per_window(kernel: Kernel) -> SeriesFunction:
    """A series function that calls ``kernel`` on every non-empty window."""

    def apply(s: RangeSamples, geo: Geometry, windows: Sequence[Window]) -> list[Slot]:
        return [kernel(s, lo, hi, w) if lo < hi else None for lo, hi, w in zip(geo.lo, geo.hi, windows)]

    return apply


# ---- rate, increase, delta -----------------------------------------------------------------------

@dataclass(slots=True)
class _Timing:
    """Per window, what rate's extrapolation needs from timestamps alone (seconds).

    ``first`` is -1 where the window holds fewer than two samples. Extrapolation
    reaches a window boundary when the nearest sample is within 110% of the
    average spacing, and half a spacing otherwise (the series starts or ends
    inside the window). ``factor`` is the resulting multiplier (divided by the
    range for a rate), before a counter's zero-point correction.
    """

    first: list[int]
    last: list[int]
    sampled: list[float]
    to_start: list[float]
    to_end: list[float]
    divisor: list[float]  # the range in seconds for rate, 1 for increase and delta
    factor: list[float]


def _timing(ts: Sequence[int], geo: Geometry, windows: Sequence[Window], is_rate: bool) -> _Timing:
    t = _Timing([], [], [], [], [], [], [])
    for lo, hi, w in zip(geo.lo, geo.hi, windows):
        divisor = w.range_s if is_rate else 1.0
        if hi - lo < 2:
            for column, value in zip((t.first, t.last, t.sampled, t.to_start, t.to_end, t.divisor, t.factor),
                                     (-1, 0, 1.0, 0.0, 0.0, divisor, 0.0)):
                column.append(value)
            continue
        first_t, last_t = ts[lo], ts[hi - 1]
        sampled = (last_t - first_t) / 1000
        average = sampled / (hi - lo - 1)
        threshold = average * 1.1
        to_start = (first_t - w.start) / 1000
        to_end = (w.end - last_t) / 1000
        if to_start >= threshold:
            to_start = average / 2
        if to_end >= threshold:
            to_end = average / 2
        t.first.append(lo)
        t.last.append(hi - 1)
        t.sampled.append(sampled)
        t.to_start.append(to_start)
        t.to_end.append(to_end)
        t.divisor.append(divisor)
        t.factor.append((sampled + to_start + to_end) / sampled / divisor)
    return t


def _extrapolated(is_counter: bool, is_rate: bool) -> SeriesFunction:
    key = ("extrapolation", is_rate)

    def apply(s: RangeSamples, geo: Geometry, windows: Sequence[Window]) -> list[Slot]:
        t = geo.derived.get(key)
        if t is None:
            t = geo.derived[key] = _timing(s.timestamps, geo, windows, is_rate)
        vs = s.values
        if not is_counter:
            return [None if lo < 0 else (vs[last] - vs[lo]) * f for lo, last, f in zip(t.first, t.last, t.factor)]
        if not s.resets:
            if len(t.first) == 1:
                # One window (an instant query, a rule evaluation): the expression below without
                # the comprehension, which costs more than the arithmetic for thousands of series.
                lo = t.first[0]
                if lo < 0:
                    return [None]
                v0 = vs[lo]
                r = vs[t.last[0]] - v0
                sp, ts0 = t.sampled[0], t.to_start[0]
                if not (r > 0 and v0 >= 0 and sp * (v0 / r) < ts0):
                    return [r * t.factor[0]]
                return [r * ((sp + sp * (v0 / r) + t.to_end[0]) / sp / t.divisor[0])]
            # The common case, one expression per window: a counter is not extrapolated
            # below zero, so when its zero point (first / slope before the first sample)
            # is nearer than the window start, extrapolation stops there.
            return [None if lo < 0 else
                    r * f if not (r > 0 and v0 >= 0 and sp * (v0 / r) < ts0) else
                    r * ((sp + sp * (v0 / r) + te) / sp / d)
                    for lo, last, sp, ts0, te, d, f in zip(t.first, t.last, t.sampled, t.to_start, t.to_end,
                                                          t.divisor, t.factor)
                    for v0 in (vs[lo] if lo >= 0 else 0.0,)
                    for r in (vs[last] - v0,)]
        return [None if lo < 0 else _counter_with_resets(s, lo, last, sp, ts0, te, d)
                for lo, last, sp, ts0, te, d in zip(t.first, t.last, t.sampled, t.to_start, t.to_end, t.divisor)]

    return apply


def _counter_with_resets(s: RangeSamples, lo: int, last: int, sampled: float, to_start: float, to_end: float,
                         divisor: float) -> float:
    vs, resets = s.values, s.resets
    first = vs[lo]
    result = vs[last] - first
    for i in resets[bisect.bisect_right(resets, lo):bisect.bisect_right(resets, last)]:
        result += vs[i - 1]  # the value before the reset is what the difference lost
    if result > 0 and first >= 0:
        to_zero = sampled * (first / result)
        if to_zero < to_start:
            to_start = to_zero
    return result * ((sampled + to_start + to_end) / sampled / divisor)


rate = _extrapolated(is_counter=True, is_rate=True)
increase = _extrapolated(is_counter=True, is_rate=False)
delta = _extrapolated(is_counter=False, is_rate=False)


def _instant(is_rate: bool) -> Kernel:
    def kernel(s: RangeSamples, lo: int, hi: int, w: Window) -> Optional[float]:
        if hi - lo < 2:
            return None
        t0, t1 = s.timestamps[hi - 2], s.timestamps[hi - 1]
        v0, v1 = s.values[hi - 2], s.values[hi - 1]
        result = v1 if is_rate and v1 < v0 else v1 - v0  # after a counter reset the last value is the increase
        return result / ((t1 - t0) / 1000) if is_rate else result

    return kernel


irate = per_window(_instant(is_rate=True))
idelta = per_window(_instant(is_rate=False))


# ---- *_over_time ---------------------------------------------------------------------------------

def _avg(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    vs = s.values
    total, count, c = vs[lo], 1.0, 0.0
    mean = 0.0
    incremental = False
    for i in range(lo + 1, hi):
        f = vs[i]
        count = float(i - lo + 1)
        if not incremental:
            new_total, new_c = kahan_inc(f, total, c)
            if not math.isinf(new_total):
                total, c = new_total, new_c
                continue
            # The sum would overflow: continue with an incremental mean.
            incremental = True
            mean = total / (count - 1)
            c /= count - 1
        q = (count - 1) / count
        mean, c = kahan_inc(f / count, q * mean, q * c)
    if incremental:
        return mean + c
    return total / count + c / count


def _sum(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    total = c = 0.0
    vs = s.values
    for i in range(lo, hi):
        total, c = kahan_inc(vs[i], total, c)
    return total if math.isinf(total) else total + c


def _count(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    return float(hi - lo)


def _extreme(greater: bool) -> Kernel:
    def kernel(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
        vs = s.values
        best = vs[lo]
        for i in range(lo, hi):
            f = vs[i]
            if best != best or (f > best if greater else f < best):  # NaN only wins if nothing else is there
                best = f
        return best

    return kernel


def _quantile(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    q = w.params[0]
    if q != q or q < 0 or q > 1:
        w.annotations.warn(f"quantile value should be between 0 and 1, got {format_g(q)}", w.first_arg_pos)
    return quantile(q, list(s.values[lo:hi]))


def _variance(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    count = mean = c_mean = aux = c_aux = 0.0
    vs = s.values
    for i in range(lo, hi):
        f = vs[i]
        count += 1
        d = f - (mean + c_mean)
        mean, c_mean = kahan_inc(d / count, mean, c_mean)
        aux, c_aux = kahan_inc(d * (f - (mean + c_mean)), aux, c_aux)
    return (aux + c_aux) / count


def _stddev(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    return math.sqrt(_variance(s, lo, hi, w))


def _last(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    return s.values[hi - 1]


def _first(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    return s.values[lo]


def _present(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    return 1.0


def _changes(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    vs = s.values
    changes = 0
    prev = vs[lo]
    for i in range(lo + 1, hi):
        cur = vs[i]
        if cur != prev and not (cur != cur and prev != prev):
            changes += 1
        prev = cur
    return float(changes)


def _resets(s: RangeSamples, lo: int, hi: int, w: Window) -> float:
    resets = s.resets
    return float(bisect.bisect_left(resets, hi) - bisect.bisect_right(resets, lo))


def _deriv(s: RangeSamples, lo: int, hi: int, w: Window) -> Optional[float]:
    if hi - lo < 2:
        return None
    slope, _ = linear_regression(s.timestamps, s.values, lo, hi, s.timestamps[lo])
    return slope


def _predict_linear(s: RangeSamples, lo: int, hi: int, w: Window) -> Optional[float]:
    if hi - lo < 2:
        return None
    slope, intercept = linear_regression(s.timestamps, s.values, lo, hi, w.t)
    return slope * w.params[0] + intercept


avg_over_time = per_window(_avg)
sum_over_time = per_window(_sum)
count_over_time = per_window(_count)
max_over_time = per_window(_extreme(greater=True))
min_over_time = per_window(_extreme(greater=False))
quantile_over_time = per_window(_quantile)
stddev_over_time = per_window(_stddev)
stdvar_over_time = per_window(_variance)
last_over_time = per_window(_last)
first_over_time = per_window(_first)
present_over_time = per_window(_present)
changes = per_window(_changes)
resets = per_window(_resets)
deriv = per_window(_deriv)
predict_linear = per_window(_predict_linear)
