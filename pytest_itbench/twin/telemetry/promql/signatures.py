"""The signatures of PromQL's functions: argument types, variadic arity, result type.

The parser checks every call against this table, so a wrongly typed call is
a parse error (``bad_data``) worded as Prometheus words it. Functions that
Prometheus ships behind ``--enable-feature=promql-experimental-functions``
are listed as experimental and rejected, as a Prometheus with default flags
rejects them. The implementations are a separate table (``functions.py``).

``variadic``: 0 means exactly the listed arguments; n > 0 means the last
argument may be omitted or repeated up to n times in total; -1 means it may
repeat without limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ast import ValueType

S, V, M, STR = ValueType.SCALAR, ValueType.VECTOR, ValueType.MATRIX, ValueType.STRING


@dataclass(frozen=True)
class FunctionSignature:
    name: str
    arg_types: tuple[ValueType, ...]
    return_type: ValueType
    variadic: int = 0
    experimental: bool = False


def _sig(name: str, args: tuple[ValueType, ...], returns: ValueType, variadic: int = 0,
         experimental: bool = False) -> tuple[str, FunctionSignature]:
    return name, FunctionSignature(name, args, returns, variadic, experimental)


_VECTOR_MATH = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "deg", "exp",
                "floor", "ln", "log10", "log2", "rad", "sgn", "sin", "sinh", "sort", "sort_desc", "sqrt", "tan",
                "tanh", "timestamp", "absent", "histogram_avg", "histogram_count", "histogram_sum",
                "histogram_stddev", "histogram_stdvar")
_OVER_TIME = ("absent_over_time", "avg_over_time", "changes", "count_over_time", "delta", "deriv",
              "first_over_time", "idelta", "increase", "irate", "last_over_time", "max_over_time",
              "min_over_time", "present_over_time", "rate", "resets", "stddev_over_time", "stdvar_over_time",
              "sum_over_time")
_DATE = ("days_in_month", "day_of_month", "day_of_week", "day_of_year", "hour", "minute", "month", "year")
_EXPERIMENTAL_OVER_TIME = ("mad_over_time", "ts_of_first_over_time", "ts_of_last_over_time", "ts_of_max_over_time",
                           "ts_of_min_over_time")

SIGNATURES: dict[str, FunctionSignature] = dict(
    [_sig(name, (V,), V) for name in _VECTOR_MATH]
    + [_sig(name, (M,), V) for name in _OVER_TIME]
    + [_sig(name, (V,), V, variadic=1) for name in _DATE]
    + [
        _sig("clamp", (V, S, S), V),
        _sig("clamp_max", (V, S), V),
        _sig("clamp_min", (V, S), V),
        _sig("histogram_fraction", (S, S, V), V),
        _sig("histogram_quantile", (S, V), V),
        _sig("label_join", (V, STR, STR, STR), V, variadic=-1),
        _sig("label_replace", (V, STR, STR, STR, STR), V),
        _sig("pi", (), S),
        _sig("predict_linear", (M, S), V),
        _sig("quantile_over_time", (S, M), V),
        _sig("round", (V, S), V, variadic=1),
        _sig("scalar", (V,), S),
        _sig("time", (), S),
        _sig("vector", (S,), V),
    ]
    + [_sig(name, (M,), V, experimental=True) for name in _EXPERIMENTAL_OVER_TIME]
    + [
        _sig("double_exponential_smoothing", (M, S, S), V, experimental=True),
        _sig("histogram_quantiles", (V, STR, S, S), V, variadic=9, experimental=True),
        _sig("info", (V, V), V, variadic=1, experimental=True),
        _sig("max_of", (S, S), S, experimental=True),
        _sig("min_of", (S, S), S, experimental=True),
        _sig("sort_by_label", (V, STR), V, variadic=-1, experimental=True),
        _sig("sort_by_label_desc", (V, STR), V, variadic=-1, experimental=True),
        _sig("start_timestamp", (V,), V, experimental=True),
        _sig("start", (), S, experimental=True),
        _sig("end", (), S, experimental=True),
        _sig("range", (), S, experimental=True),
        _sig("step", (), S, experimental=True),
    ]
)

# Aggregation operators and the type of their parameter, if they take one.
AGGREGATION_PARAMS: dict[str, ValueType | None] = {
    "sum": None, "avg": None, "count": None, "min": None, "max": None, "group": None, "stddev": None,
    "stdvar": None, "topk": S, "bottomk": S, "quantile": S, "count_values": STR,
}
EXPERIMENTAL_AGGREGATIONS = frozenset({"limitk", "limit_ratio"})
