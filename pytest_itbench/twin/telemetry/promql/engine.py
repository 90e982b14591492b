"""The PromQL engine: instant and range queries over a :class:`Queryable`.

    engine = Engine(tsdb)
    result = engine.instant_query('sum by (job) (rate(http_requests_total[5m]))', time=clock.now())
    result.value          # Vector / Scalar / String / Matrix
    result.warnings       # Prometheus' annotations, as the API returns them

Times are Unix seconds passed in by the caller (the twin's simulated clock);
the engine never reads a clock. ``abort`` lets the caller stop a long query
(the HTTP API passes a deadline check for its ``timeout`` parameter).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..tsdb import to_millis
from . import ast
from .ast import ValueType
from .errors import InvalidQuery
from .evaluator import Evaluator, Queryable
from .parse import parse
from .steps import Annotations
from .values import Matrix, Sample, Scalar, Series, String, Value, Vector

DEFAULT_LOOKBACK_DELTA = 300.0  # seconds, Prometheus' --query.lookback-delta
DEFAULT_SUBQUERY_STEP = 60.0  # seconds, Prometheus' default evaluation interval


@dataclass
class QueryResult:
    value: Value
    warnings: list[str] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)


class Engine:
    def __init__(self, queryable: Queryable, *, lookback_delta: float = DEFAULT_LOOKBACK_DELTA,
                 default_subquery_step: float = DEFAULT_SUBQUERY_STEP):
        self.queryable = queryable
        self.lookback_delta = lookback_delta
        self.default_subquery_step = default_subquery_step

    def instant_query(self, query: str, time: float, *, lookback_delta: float | None = None,
                      abort: Optional[Callable[[], bool]] = None) -> QueryResult:
        expr = parse(query)
        t = to_millis(time)
        annotations = Annotations(query)
        ev = self._evaluator(range(t, t + 1), t, t, lookback_delta, annotations, abort)
        if expr.type is ValueType.MATRIX:
            assert isinstance(expr, (ast.MatrixSelector, ast.Subquery))
            series = [Series(s.labels, list(zip(s.timestamps, s.values))) for s in ev.matrix(expr) if s.values]
            value: Value = Matrix(sorted(series, key=lambda s: s.labels))
        else:
            result = ev.eval(expr)
            if expr.type is ValueType.SCALAR:
                value = Scalar(t, result[0])  # type: ignore[index]
            elif expr.type is ValueType.STRING:
                value = String(t, result)  # type: ignore[arg-type]
            else:
                value = Vector([Sample(s.labels, s.values[0], t) for s in result  # type: ignore[union-attr]
                                if s.values[0] is not None])
        return QueryResult(value, list(annotations.warnings), list(annotations.infos))

    def range_query(self, query: str, start: float, end: float, step: float, *,
                    lookback_delta: float | None = None,
                    abort: Optional[Callable[[], bool]] = None) -> QueryResult:
        expr = parse(query)
        if expr.type not in (ValueType.SCALAR, ValueType.VECTOR):
            raise InvalidQuery(f'invalid expression type "{expr.type.documented}" for range query, '
                               "must be Scalar or instant Vector")
        start_ms, end_ms, step_ms = to_millis(start), to_millis(end), to_millis(step)
        if step_ms <= 0:
            raise InvalidQuery("zero or negative query resolution step widths are not accepted. "
                               "Try a positive integer")
        if end_ms < start_ms:
            return QueryResult(Matrix([]))
        annotations = Annotations(query)
        ev = self._evaluator(range(start_ms, end_ms + 1, step_ms), start_ms, end_ms, lookback_delta, annotations,
                             abort)
        result = ev.eval(expr)
        if expr.type is ValueType.SCALAR:
            series = [Series((), list(zip(ev.times, result)))]  # type: ignore[arg-type]
        else:
            series = [Series(s.labels, [(t, v) for t, v in zip(ev.times, s.values) if v is not None])
                      for s in result]  # type: ignore[union-attr]
            series = [s for s in series if s.points]
            series.sort(key=lambda s: s.labels)
        return QueryResult(Matrix(series), list(annotations.warnings), list(annotations.infos))

    def _evaluator(self, times: range, start_ms: int, end_ms: int, lookback_delta: float | None,
                   annotations: Annotations, abort: Optional[Callable[[], bool]]) -> Evaluator:
        lookback = self.lookback_delta if lookback_delta is None or lookback_delta <= 0 else lookback_delta
        return Evaluator(self.queryable, times, query_start_ms=start_ms, query_end_ms=end_ms,
                         lookback_ms=to_millis(lookback), default_subquery_step_ms=to_millis(self.default_subquery_step),
                         annotations=annotations, abort=abort)
