"""Per-sample math and date functions, with Go's answers at the edges of their domains.

Python's ``math`` raises where Go returns NaN or an infinity (``log(0)``,
``sqrt(-1)``, ``exp(1000)``, ``sin(Inf)``); these wrappers return what
Prometheus returns.
"""

from __future__ import annotations

import calendar
import math
from datetime import datetime, timezone
from typing import Callable

from .numeric import INF, NAN, div

Unary = Callable[[float], float]


def _finite_or_same(fn: Callable[[float], int]) -> Unary:
    """ceil/floor: Python returns ints and raises on NaN and infinities."""
    return lambda x: float(fn(x)) if math.isfinite(x) else x


def _logarithm(fn: Unary) -> Unary:
    return lambda x: fn(x) if x > 0 else (-INF if x == 0 else NAN)


def _periodic(fn: Unary) -> Unary:
    return lambda x: NAN if math.isinf(x) else fn(x)


def _bounded(fn: Unary, low: float, high: float) -> Unary:
    return lambda x: fn(x) if low <= x <= high else NAN


def _overflowing(fn: Unary, signed: bool) -> Unary:
    def apply(x: float) -> float:
        try:
            return fn(x)
        except OverflowError:
            return math.copysign(INF, x) if signed else INF

    return apply


def _atanh(x: float) -> float:
    if -1 < x < 1:
        return math.atanh(x)
    if x in (1.0, -1.0):
        return math.copysign(INF, x)
    return NAN


def _sgn(x: float) -> float:
    if x < 0:
        return -1.0
    if x > 0:
        return 1.0
    return x  # 0 and NaN stay as they are


UNARY: dict[str, Unary] = {
    "abs": abs,
    "ceil": _finite_or_same(math.ceil),
    "floor": _finite_or_same(math.floor),
    "exp": _overflowing(math.exp, signed=False),
    "sqrt": lambda x: math.sqrt(x) if x >= 0 else NAN,
    "ln": _logarithm(math.log),
    "log2": _logarithm(math.log2),
    "log10": _logarithm(math.log10),
    "sgn": _sgn,
    "sin": _periodic(math.sin),
    "cos": _periodic(math.cos),
    "tan": _periodic(math.tan),
    "asin": _bounded(math.asin, -1, 1),
    "acos": _bounded(math.acos, -1, 1),
    "atan": math.atan,
    "sinh": _overflowing(math.sinh, signed=True),
    "cosh": _overflowing(math.cosh, signed=False),
    "tanh": math.tanh,
    "asinh": math.asinh,
    "acosh": lambda x: math.acosh(x) if x >= 1 else NAN,
    "atanh": _atanh,
    "rad": lambda x: x * math.pi / 180,
    "deg": lambda x: x * 180 / math.pi,
}


def round_to(x: float, to_nearest: float) -> float:
    """round(v, to_nearest): ties round up, as Prometheus computes it (through the inverse)."""
    inverse = div(1.0, to_nearest)
    y = x * inverse + 0.5
    return div(float(math.floor(y)) if math.isfinite(y) else y, inverse)


def go_min(x: float, y: float) -> float:
    """Go's math.Min: -Inf wins over NaN, NaN over everything else."""
    if x == -INF or y == -INF:
        return -INF
    if x != x or y != y:
        return NAN
    return x if x < y else y


def go_max(x: float, y: float) -> float:
    if x == INF or y == INF:
        return INF
    if x != x or y != y:
        return NAN
    return x if x > y else y


def clamp(x: float, low: float, high: float) -> float:
    return go_max(low, go_min(high, x))


def _date_part(part: Callable[[datetime], int]) -> Unary:
    def apply(seconds: float) -> float:
        if not math.isfinite(seconds):
            return NAN
        try:
            moment = datetime.fromtimestamp(int(seconds), tz=timezone.utc)  # Go truncates to whole seconds
        except (OverflowError, OSError, ValueError):
            return NAN
        return float(part(moment))

    return apply


DATE: dict[str, Unary] = {
    "day_of_month": _date_part(lambda d: d.day),
    "day_of_week": _date_part(lambda d: (d.weekday() + 1) % 7),  # Sunday is 0, as Go's Weekday
    "day_of_year": _date_part(lambda d: d.timetuple().tm_yday),
    "days_in_month": _date_part(lambda d: calendar.monthrange(d.year, d.month)[1]),
    "hour": _date_part(lambda d: d.hour),
    "minute": _date_part(lambda d: d.minute),
    "month": _date_part(lambda d: d.month),
    "year": _date_part(lambda d: d.year),
}
