"""Float arithmetic as Go and Prometheus do it.

Python raises where Go returns a special value (``1/0`` is ``+Inf`` in Go,
``math.log(0)`` is ``-Inf``), and Prometheus sums with Kahan-Neumaier
compensation and computes quantiles in its own way. These helpers give the
engine Go's answers.
"""

from __future__ import annotations

import bisect
import math
from typing import Optional, Sequence

INF = math.inf
NAN = math.nan
SMALL_DELTA_TOLERANCE = 1e-12  # histogram_quantile's tolerance for bucket counts that should be equal
_MIN_NORMAL = 2.2250738585072014e-308


def div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)


def mod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:  # fmod(x, 0) and fmod(±Inf, y): NaN in Go
        return NAN


def _odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2) != 0


def power(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except OverflowError:
        return -INF if x < 0 and _odd_integer(y) else INF
    except ValueError:
        if x == 0:  # 0 to a negative power
            return math.copysign(INF, x) if _odd_integer(y) else INF
        return NAN  # a negative base to a non-integer power


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """One step of Kahan-Neumaier summation; returns the new sum and compensation."""
    t = total + inc
    if math.isinf(t):
        return t, 0.0
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def kahan_sum(values: Sequence[float]) -> float:
    total = c = 0.0
    for v in values:
        total, c = kahan_inc(v, total, c)
    return total if math.isinf(total) else total + c


def almost_equal(a: float, b: float, epsilon: float) -> bool:
    """Prometheus' ``almost.Equal``: relative comparison, and NaN equals NaN."""
    if a != a and b != b:
        return True
    if a == b:
        return True
    abs_sum = abs(a) + abs(b)
    diff = abs(a - b)
    if a == 0 or b == 0 or abs_sum < _MIN_NORMAL:
        return diff < epsilon * _MIN_NORMAL
    return diff / min(abs_sum, 1.7976931348623157e308) < epsilon


def _nan_first(v: float) -> tuple[bool, float]:
    return (v == v, v)


def quantile(q: float, values: list[float]) -> float:
    """The q-quantile of ``values`` by linear interpolation between closest ranks (NaNs sort first)."""
    if not values or q != q:
        return NAN
    if q < 0:
        return -INF
    if q > 1:
        return INF
    ordered = sorted(values, key=_nan_first)
    n = len(ordered)
    rank = q * (n - 1)
    lower = max(0, math.floor(rank))
    upper = min(n - 1, lower + 1)
    weight = rank - math.floor(rank)
    return ordered[lower] * (1 - weight) + ordered[upper] * weight


def _prepare_buckets(buckets: list[tuple[float, float]]) -> list[list[float]] | None:
    """Buckets sorted by upper bound with equal bounds merged; None without a +Inf bucket."""
    ordered = sorted(buckets, key=lambda b: b[0])
    if not ordered or ordered[-1][0] != INF:
        return None
    merged = [list(ordered[0])]
    for upper, count in ordered[1:]:
        if upper == merged[-1][0]:
            merged[-1][1] += count
        else:
            merged.append([upper, count])
    return merged


Forced = Optional[tuple[float, float, float]]  # the lowest and highest bucket raised, the largest raise


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> tuple[float, Forced]:
    """histogram_quantile over classic buckets (upper bound, cumulative count).

    Returns the quantile and, when bucket counts had to be made monotonic, what was raised (the figures
    Prometheus' monotonicity info reports), else None.
    """
    if q != q:
        return NAN, None
    if q < 0:
        return -INF, None
    if q > 1:
        return INF, None
    merged = _prepare_buckets(buckets)
    if merged is None:
        return NAN, None
    forced = _make_monotonic(merged)
    if len(merged) < 2:
        return NAN, forced
    observations = merged[-1][1]
    if observations == 0:
        return NAN, forced
    rank = q * observations
    counts = [b[1] for b in merged[:-1]]
    b = bisect.bisect_left(counts, rank)  # first bucket whose count reaches the rank
    if b == len(merged) - 1:
        return merged[-2][0], forced
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0], forced
    bucket_start = 0.0
    bucket_end = merged[b][0]
    count = merged[b][1]
    if b > 0:
        bucket_start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    return bucket_start + (bucket_end - bucket_start) * (rank / count), forced


def _make_monotonic(buckets: list[list[float]]) -> Forced:
    """Raise counts that fall below their predecessor; counts within tolerance become equal."""
    forced = False
    lowest, highest, largest = INF, -INF, 0.0
    prev = buckets[0][1]
    for bucket in buckets[1:]:
        curr = bucket[1]
        if curr == prev:
            continue
        if almost_equal(prev, curr, SMALL_DELTA_TOLERANCE):
            bucket[1] = prev
            continue
        if curr < prev:
            bucket[1] = prev
            forced = True
            lowest, highest, largest = min(lowest, bucket[0]), max(highest, bucket[0]), max(largest, prev - curr)
            continue
        prev = curr
    return (lowest, highest, largest) if forced else None


def bucket_fraction(lower: float, upper: float, buckets: list[tuple[float, float]]) -> float:
    """histogram_fraction over classic buckets: the estimated share of observations in [lower, upper]."""
    merged = _prepare_buckets(buckets)
    if merged is None:
        return NAN
    count = merged[-1][1]
    if count == 0 or lower != lower or upper != upper:
        return NAN
    if lower >= upper:
        return 0.0
    rank = lower_rank = upper_rank = 0.0
    lower_set = upper_set = False
    lower_bound = -INF if merged[0][0] <= 0 else 0.0
    for i, (upper_bound, bucket_count) in enumerate(merged):
        if i > 0:
            lower_bound = merged[i - 1][0]

        def interpolate(v: float) -> float:
            if lower_bound == -INF:
                return bucket_count
            return rank + (bucket_count - rank) * (v - lower_bound) / (upper_bound - lower_bound)

        if not lower_set and lower_bound >= lower:
            lower_rank, lower_set = rank, True
        if not upper_set and lower_bound >= upper:
            upper_rank, upper_set = rank, True
        if lower_set and upper_set:
            break
        if not lower_set and lower_bound < lower < upper_bound:
            lower_rank, lower_set = interpolate(lower), True
        if not upper_set and lower_bound < upper < upper_bound:
            upper_rank, upper_set = interpolate(upper), True
        if lower_set and upper_set:
            break
        rank = bucket_count
    if not lower_set or lower_rank > count:
        lower_rank = count
    if not upper_set or upper_rank > count:
        upper_rank = count
    return (upper_rank - lower_rank) / count


def linear_regression(ts: Sequence[int], vs: Sequence[float], lo: int, hi: int,
                      intercept_ms: int) -> tuple[float, float]:
    """Least-squares slope (per second) and intercept at ``intercept_ms`` of samples lo..hi-1."""
    n = 0.0
    sum_x = c_x = sum_y = c_y = sum_xy = c_xy = sum_x2 = c_x2 = 0.0
    init_y = vs[lo]
    const_y = True
    for i in range(lo, hi):
        y = vs[i]
        if const_y and i > lo and y != init_y:
            const_y = False
        n += 1.0
        x = (ts[i] - intercept_ms) / 1e3
        sum_x, c_x = kahan_inc(x, sum_x, c_x)
        sum_y, c_y = kahan_inc(y, sum_y, c_y)
        sum_xy, c_xy = kahan_inc(x * y, sum_xy, c_xy)
        sum_x2, c_x2 = kahan_inc(x * x, sum_x2, c_x2)
    if const_y:
        if math.isinf(init_y):
            return NAN, NAN
        return 0.0, init_y
    sum_x += c_x
    sum_y += c_y
    sum_xy += c_xy
    sum_x2 += c_x2
    cov_xy = sum_xy - sum_x * sum_y / n
    var_x = sum_x2 - sum_x * sum_x / n
    slope = div(cov_xy, var_x)
    intercept = sum_y / n - slope * sum_x / n
    return slope, intercept
