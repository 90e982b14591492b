"""The evaluator: walks the typed tree and computes every node at all steps of a query.

Selectors read the :class:`Queryable`; functions, aggregations and
operators live in their own modules and call back into the evaluator for
their operands. Times are integer milliseconds throughout; the evaluation
times are passed in, never read from a clock.
"""

from __future__ import annotations

import bisect
from typing import Callable, Optional, Protocol, Sequence, Union

from .. import labels as lbl
from ..labels import Labels, Matcher
from . import ast
from .aggregation import aggregate
from .binary import binary
from .errors import EvaluationError, QueryTimeout
from .functions import FUNCTIONS
from .range_functions import Geometry, SeriesFunction, Window, geometry
from .steps import (Annotations, RangeSamples, StepSeries, drop_metric_name, has_values, merge_by_labels,
                    require_unique_labels)

Scalars = list[float]
StepValue = Union[Scalars, list[StepSeries], str]

_COUNTER_SUFFIXES = ("_total", "_sum", "_count", "_bucket")


class StoredSeries(Protocol):
    """What a :class:`Queryable` returns for each series (see ``tsdb.SeriesSamples``)."""

    labels: Labels
    timestamps: Sequence[int]
    values: Sequence[float]
    stale: Sequence[int]
    resets: Sequence[int]


class Queryable(Protocol):
    def select(self, matchers: Sequence[Matcher], mint_ms: int, maxt_ms: int) -> list[StoredSeries]:
        """Series matching all matchers with samples in [mint_ms, maxt_ms], in a stable order."""


class Evaluator:
    """Evaluates expressions at the step times ``times`` (one time for an instant query)."""

    def __init__(self, queryable: Queryable, times: range, *, query_start_ms: int, query_end_ms: int,
                 lookback_ms: int, default_subquery_step_ms: int, annotations: Annotations,
                 abort: Optional[Callable[[], bool]] = None):
        self.queryable = queryable
        self.times = times
        self.n = len(times)
        self.query_start_ms = query_start_ms
        self.query_end_ms = query_end_ms
        self.lookback_ms = lookback_ms
        self.default_subquery_step_ms = default_subquery_step_ms
        self.annotations = annotations
        self._abort = abort

    def check_abort(self) -> None:
        if self._abort is not None and self._abort():
            raise QueryTimeout()

    # ---- dispatch --------------------------------------------------------------------------------
    def eval(self, node: ast.Expr) -> StepValue:
        self.check_abort()
        if isinstance(node, ast.NumberLiteral):
            return [node.value] * self.n
        if isinstance(node, ast.StringLiteral):
            return node.value
        if isinstance(node, ast.VectorSelector):
            return self.vector_selector(node)
        if isinstance(node, ast.Call):
            return FUNCTIONS[node.func.name](self, node)
        if isinstance(node, ast.Aggregate):
            return aggregate(self, node)
        if isinstance(node, ast.Binary):
            return binary(self, node)
        if isinstance(node, ast.Negation):
            return self._negate(node)
        raise EvaluationError(f"cannot evaluate a {node.type.documented} here")

    def scalars(self, node: ast.Expr) -> Scalars:
        """The value of a scalar-typed node at every step (the parser checked the type)."""
        return self.eval(node)  # type: ignore[return-value]

    def vector(self, node: ast.Expr) -> list[StepSeries]:
        """The value of an instant-vector-typed node (the parser checked the type)."""
        return self.eval(node)  # type: ignore[return-value]

    def _negate(self, node: ast.Negation) -> StepValue:
        value = self.eval(node.expr)
        if node.expr.type is ast.ValueType.SCALAR:
            return [-v for v in value]  # type: ignore[union-attr]
        return merge_by_labels([StepSeries(drop_metric_name(s.labels),
                                           [-v if v is not None else None for v in s.values])
                                for s in value])  # type: ignore[union-attr]

    # ---- time ------------------------------------------------------------------------------------
    def at_time(self, at: ast.At) -> int:
        if at.kind is ast.AtKind.START:
            return self.query_start_ms
        if at.kind is ast.AtKind.END:
            return self.query_end_ms
        return at.t_ms

    def eval_times(self, at: ast.At | None, offset_ms: int) -> list[int]:
        """The time each step reads data at: the step (or the ``@`` time) minus the offset."""
        if at is not None:
            return [self.at_time(at) - offset_ms] * self.n
        return [t - offset_ms for t in self.times]

    # ---- instant vector selectors ------------------------------------------------------------------
    def vector_selector(self, node: ast.VectorSelector, sample_times: bool = False) -> list[StepSeries]:
        """The newest sample within the lookback window before each step; with ``sample_times``,
        the samples' timestamps (in seconds) instead of their values."""
        times = self.eval_times(node.at, node.offset_ms)
        stored = self.queryable.select(node.matchers, times[0] - self.lookback_ms + 1, times[-1])
        positions: dict[range, list[int]] = {}  # series scraped at the same times share lookups
        out: list[StepSeries] = []
        for i, s in enumerate(stored):
            if i % 256 == 0:
                self.check_abort()
            ts = s.timestamps
            idx = positions.get(ts) if isinstance(ts, range) else None
            if idx is None:
                idx = self._newest_within_lookback(ts, times)
                if isinstance(ts, range):
                    positions[ts] = idx
            if s.stale:
                stale = set(s.stale)
                idx = [-1 if j in stale else j for j in idx]
            if sample_times:
                values = [ts[j] / 1000 if j >= 0 else None for j in idx]
            else:
                vs = s.values
                values = [vs[j] if j >= 0 else None for j in idx]
            if has_values(values):
                out.append(StepSeries(s.labels, values))
        return out

    def _newest_within_lookback(self, ts: Sequence[int], times: list[int]) -> list[int]:
        out: list[int] = []
        lookback = self.lookback_ms
        right = bisect.bisect_right
        previous_t, previous_j = None, -1
        for t in times:
            if t != previous_t:
                j = right(ts, t) - 1
                previous_t, previous_j = t, (j if j >= 0 and ts[j] > t - lookback else -1)
            out.append(previous_j)
        return out

    # ---- range vectors -----------------------------------------------------------------------------
    def range_samples(self, node: ast.MatrixSelector | ast.Subquery, after_ms: int,
                      until_ms: int) -> list[RangeSamples]:
        """Samples in (after_ms, until_ms] of every series a range selector or subquery yields."""
        if isinstance(node, ast.MatrixSelector):
            stored = self.queryable.select(node.selector.matchers, after_ms + 1, until_ms)
            # A series without staleness markers has the shape of RangeSamples already.
            return [_without_stale(s) if s.stale else s for s in stored]  # type: ignore[misc]
        step = node.step_ms or self.default_subquery_step_ms
        start = (after_ms // step + 1) * step  # the subquery grid is aligned to multiples of its step
        if start > until_ms:
            return []
        inner = Evaluator(self.queryable, range(start, until_ms + 1, step), query_start_ms=self.query_start_ms,
                          query_end_ms=self.query_end_ms, lookback_ms=self.lookback_ms,
                          default_subquery_step_ms=self.default_subquery_step_ms,
                          annotations=self.annotations, abort=self._abort)
        out: list[RangeSamples] = []
        for s in inner.vector(node.expr):
            ts = [t for t, v in zip(inner.times, s.values) if v is not None]
            vs = [v for v in s.values if v is not None]
            resets = [k for k in range(1, len(vs)) if vs[k] < vs[k - 1]]
            out.append(RangeSamples(s.labels, ts, vs, resets))
        return out

    def range_windows(self, node: ast.MatrixSelector | ast.Subquery,
                      params: Sequence[Scalars] = (), first_arg_pos: int | None = None) -> list[Window]:
        selector_at = node.selector.at if isinstance(node, ast.MatrixSelector) else node.at
        offset = node.selector.offset_ms if isinstance(node, ast.MatrixSelector) else node.offset_ms
        range_ms = node.range_ms
        ends = self.eval_times(selector_at, offset)
        return [Window(end - range_ms, end, t, range_ms / 1000, tuple(p[k] for p in params), self.annotations,
                       first_arg_pos)
                for k, (end, t) in enumerate(zip(ends, self.times))]

    def over_range(self, call: ast.Call, fn: SeriesFunction, keep_name: bool = False,
                   expects_counter: bool = False) -> list[StepSeries]:
        """Apply a range-vector function to its range argument at every step.

        ``expects_counter`` (rate, increase) adds Prometheus' info annotation for
        metrics whose name does not look like a counter's.
        """
        index = next(i for i, a in enumerate(call.args) if a.type is ast.ValueType.MATRIX)
        source = call.args[index]
        params = [self.scalars(a) for i, a in enumerate(call.args) if i != index]
        windows = self.range_windows(source, params, call.args[0].pos)
        samples = self.range_samples(source, min(w.start for w in windows), max(w.end for w in windows))
        # The loop below runs once per series (thousands in a rule evaluation), so it is kept lean:
        # has_values, drop_metric_name's common case and the counter-name check are written out in it.
        shared: dict[range, Geometry] = {}
        out: list[StepSeries] = []
        checked_names: set[str] = set()
        n = len(windows)
        previous_ts: object = None
        geo = Geometry([], [])
        for i, s in enumerate(samples):
            if not i & 255:
                self.check_abort()
            ts = s.timestamps
            if ts is previous_ts:  # the store hands series scraped together the same range object
                pass
            elif type(ts) is range:  # series scraped at the same times share the window bounds
                geo = shared.get(ts)
                if geo is None:
                    geo = shared[ts] = geometry(ts, windows)
                previous_ts = ts
            else:
                geo = geometry(ts, windows)
                previous_ts = None
            values = fn(s, geo, windows)
            if values.count(None) == n:
                continue
            labels = s.labels
            named = labels and labels[0][0] == lbl.METRIC_NAME
            if keep_name:
                out.append(StepSeries(labels, values))
            elif named and (len(labels) == 1 or labels[1][0] > "__unit__"):  # drop_metric_name's common case
                out.append(StepSeries(labels[1:], values))
            else:
                out.append(StepSeries(drop_metric_name(labels), values))
            if expects_counter and (labels[0][1] if named else lbl.get(labels, lbl.METRIC_NAME)) not in checked_names:
                self._check_counter_name(labels, checked_names, call.args[0].pos)
        require_unique_labels(out)
        return out

    def _check_counter_name(self, labels: Labels, checked: set[str], pos: int | None) -> None:
        name = lbl.get(labels, lbl.METRIC_NAME)
        if name in checked:
            return
        checked.add(name)
        if name and not name.endswith(_COUNTER_SUFFIXES):
            self.annotations.info(
                f'metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "{name}"', pos)

    def matrix(self, node: ast.MatrixSelector | ast.Subquery) -> list[RangeSamples]:
        """A range vector evaluated at the (single) step: the result of an instant query for ``x[5m]``."""
        window = self.range_windows(node)[0]
        return self.range_samples(node, window.start, window.end)


def _without_stale(s: StoredSeries) -> RangeSamples:
    stale = set(s.stale)
    keep = [i for i in range(len(s.values)) if i not in stale]
    renumber = {old: new for new, old in enumerate(keep)}
    return RangeSamples(s.labels, [s.timestamps[i] for i in keep], [s.values[i] for i in keep],
                        [renumber[r] for r in s.resets])
