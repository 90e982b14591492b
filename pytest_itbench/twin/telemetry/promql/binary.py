"""Binary operators: arithmetic, comparisons (with ``bool``) and set operators, with vector matching.

Matching follows Prometheus: series are matched on their signature (the
``on(...)`` labels, or all labels but the ``ignoring(...)`` ones and the
metric name); the "one" side of a match may hold only one series per
signature at a step, and one-to-one matching may pair a signature only once.
Arithmetic and ``bool`` comparisons drop the metric name; filtering
comparisons keep the left-hand sample.
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Callable

from .. import labels as lbl
from ..labels import Labels
from . import ast
from .ast import Cardinality, ValueType
from .errors import EvaluationError
from .numeric import div, mod, power
from .steps import DUPLICATE_LABELSET, Slot, StepSeries, drop_metric_name, has_values, merge_by_labels

if TYPE_CHECKING:
    from .evaluator import Evaluator

ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": div, "%": mod, "^": power, "atan2": math.atan2,
}
COMPARISON: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le,
}


def binary(ev: "Evaluator", node: ast.Binary) -> list:
    lt, rt = node.lhs.type, node.rhs.type
    if lt is ValueType.SCALAR and rt is ValueType.SCALAR:
        return _scalar_scalar(node, ev.scalars(node.lhs), ev.scalars(node.rhs))
    if lt is ValueType.VECTOR and rt is ValueType.SCALAR:
        return _vector_scalar(node, ev.vector(node.lhs), ev.scalars(node.rhs), swapped=False)
    if lt is ValueType.SCALAR:
        return _vector_scalar(node, ev.vector(node.rhs), ev.scalars(node.lhs), swapped=True)
    lhs, rhs = ev.vector(node.lhs), ev.vector(node.rhs)
    if node.op in ast.SET_OPS:
        return _set_operation(node, lhs, rhs)
    return _vector_vector(node, lhs, rhs)


def _scalar_scalar(node: ast.Binary, lhs: list[float], rhs: list[float]) -> list[float]:
    if node.op in COMPARISON:  # between scalars only with bool, which the parser enforces
        cmp = COMPARISON[node.op]
        return [1.0 if cmp(a, b) else 0.0 for a, b in zip(lhs, rhs)]
    fn = ARITHMETIC[node.op]
    return [fn(a, b) for a, b in zip(lhs, rhs)]


def _vector_scalar(node: ast.Binary, series: list[StepSeries], scalars: list[float],
                   swapped: bool) -> list[StepSeries]:
    out: list[StepSeries] = []
    if node.op in ARITHMETIC:
        fn = ARITHMETIC[node.op]
        for s in series:
            if swapped:
                values = [fn(x, v) if v is not None else None for v, x in zip(s.values, scalars)]
            else:
                values = [fn(v, x) if v is not None else None for v, x in zip(s.values, scalars)]
            out.append(StepSeries(drop_metric_name(s.labels), values))
        return merge_by_labels(out)
    cmp = COMPARISON[node.op]
    for s in series:
        if swapped:
            kept = [None if v is None else cmp(x, v) for v, x in zip(s.values, scalars)]
        else:
            kept = [None if v is None else cmp(v, x) for v, x in zip(s.values, scalars)]
        if node.return_bool:
            out.append(StepSeries(drop_metric_name(s.labels),
                                  [None if k is None else (1.0 if k else 0.0) for k in kept]))
        else:
            values = [v if k else None for v, k in zip(s.values, kept)]  # the vector's sample, whichever side
            if has_values(values):
                out.append(StepSeries(s.labels, values))
    return merge_by_labels(out)


def signature_function(matching: ast.VectorMatching) -> Callable[[Labels], Labels]:
    if matching.on:
        names = frozenset(matching.labels)
        return lambda labels: tuple(pair for pair in labels if pair[0] in names)
    ignored = frozenset((*matching.labels, lbl.METRIC_NAME))
    return lambda labels: tuple(pair for pair in labels if pair[0] not in ignored)


def _presence(series: list[StepSeries], sig: Callable[[Labels], Labels], n: int) -> dict[Labels, list[bool]]:
    """For each signature, whether any of its series has a sample at each step."""
    present: dict[Labels, list[bool]] = {}
    for s in series:
        mask = present.setdefault(sig(s.labels), [False] * n)
        for i, v in enumerate(s.values):
            if v is not None:
                mask[i] = True
    return present


def _set_operation(node: ast.Binary, lhs: list[StepSeries], rhs: list[StepSeries]) -> list[StepSeries]:
    sig = signature_function(node.matching)
    n = len(lhs[0].values) if lhs else len(rhs[0].values) if rhs else 0
    out: list[StepSeries] = []
    if node.op == "or":
        left = _presence(lhs, sig, n)
        out.extend(lhs)
        for s in rhs:
            mask = left.get(sig(s.labels))
            values = s.values if mask is None else [None if m else v for v, m in zip(s.values, mask)]
            if has_values(values):
                out.append(StepSeries(s.labels, values))
        return merge_by_labels(out)
    right = _presence(rhs, sig, n)
    keep_where_present = node.op == "and"
    for s in lhs:
        mask = right.get(sig(s.labels))
        if mask is None:
            if not keep_where_present:
                out.append(s)
            continue
        values = [v if m == keep_where_present else None for v, m in zip(s.values, mask)]
        if has_values(values):
            out.append(StepSeries(s.labels, values))
    return out


def _result_labels(many: Labels, one: Labels, node: ast.Binary) -> Labels:
    """The labels of a matched pair's result: the "many" side's, reduced and extended as the modifiers say."""
    m = node.matching
    labels = many
    if node.return_bool or node.op in ARITHMETIC:
        labels = drop_metric_name(labels)
    if m.card is Cardinality.ONE_TO_ONE:
        labels = lbl.keep(labels, m.labels) if m.on else lbl.drop(labels, m.labels)
    for name in m.include:  # group_left/group_right(...) labels come from the "one" side
        labels = lbl.with_label(labels, name, lbl.get(one, name))
    return labels


def _element_function(node: ast.Binary, swap: bool) -> Callable[[float, float], Slot]:
    """The operation on a (many-side, one-side) value pair; None drops the pair."""
    if node.op in ARITHMETIC:
        fn = ARITHMETIC[node.op]
        return (lambda a, b: fn(b, a)) if swap else fn
    cmp = COMPARISON[node.op]
    if node.return_bool:
        if swap:
            return lambda a, b: 1.0 if cmp(b, a) else 0.0
        return lambda a, b: 1.0 if cmp(a, b) else 0.0
    if swap:  # group_right filters the right-hand ("many") side but keeps the left-hand value
        return lambda a, b: b if cmp(b, a) else None
    return lambda a, b: a if cmp(a, b) else None


def _vector_vector(node: ast.Binary, lhs: list[StepSeries], rhs: list[StepSeries]) -> list[StepSeries]:
    m = node.matching
    swap = m.card is Cardinality.ONE_TO_MANY
    many, one = (rhs, lhs) if swap else (lhs, rhs)
    if not many or not one:
        return []
    sig = signature_function(m)
    n = len(many[0].values)
    one_by_sig: dict[Labels, list[StepSeries]] = {}
    for s in one:
        one_by_sig.setdefault(sig(s.labels), []).append(s)
    many_sigs = [sig(s.labels) for s in many]
    fn = _element_function(node, swap)
    if (m.card is Cardinality.ONE_TO_ONE and len(set(many_sigs)) == len(many_sigs)
            and all(len(group) == 1 for group in one_by_sig.values())):
        # Every signature appears once on each side: no step can hold a conflict.
        out: list[StepSeries] = []
        for s, key in zip(many, many_sigs):
            group = one_by_sig.get(key)
            if group is None:
                continue
            other = group[0]
            values = [None if a is None or b is None else fn(a, b) for a, b in zip(s.values, other.values)]
            if has_values(values):
                out.append(StepSeries(_result_labels(s.labels, other.labels, node), values))
        return out
    return _match_per_step(node, many, many_sigs, one_by_sig, fn, n, swap)


def _match_per_step(node: ast.Binary, many: list[StepSeries], many_sigs: list[Labels],
                    one_by_sig: dict[Labels, list[StepSeries]], fn: Callable[[float, float], Slot], n: int,
                    swap: bool) -> list[StepSeries]:
    """The general case: signatures repeat, so conflicts are checked step by step."""
    many_present = [any(s.values[i] is not None for s in many) for i in range(n)]
    for key, group in one_by_sig.items():
        if len(group) > 1:
            _check_one_side_unique(key, group, many_present, "left" if swap else "right")
    one_to_one = node.matching.card is Cardinality.ONE_TO_ONE
    matched: dict[tuple[Labels, int], set[Labels]] = {}
    results: dict[Labels, list[Slot]] = {}
    for s, key in zip(many, many_sigs):
        for other in one_by_sig.get(key, ()):
            labels = _result_labels(s.labels, other.labels, node)
            for i, (a, b) in enumerate(zip(s.values, other.values)):
                if a is None or b is None:
                    continue
                seen = matched.setdefault((key, i), set())
                if one_to_one and seen:
                    raise EvaluationError("multiple matches for labels: many-to-one matching must be explicit "
                                          "(group_left/group_right)")
                if labels in seen:
                    raise EvaluationError("multiple matches for labels: grouping labels must ensure unique matches")
                seen.add(labels)
                value = fn(a, b)
                if value is None:
                    continue
                slots = results.setdefault(labels, [None] * n)
                if slots[i] is not None:
                    raise EvaluationError(DUPLICATE_LABELSET)
                slots[i] = value
    return [StepSeries(labels, slots) for labels, slots in results.items()]


def _check_one_side_unique(key: Labels, group: list[StepSeries], many_present: list[bool], side: str) -> None:
    for i, active in enumerate(many_present):
        if not active:
            continue
        at_step = [s for s in group if s.values[i] is not None]
        if len(at_step) > 1:
            first, second = sorted(lbl.format_labels(s.labels) for s in at_step[:2])
            raise EvaluationError(
                f"found duplicate series for the match group {lbl.format_labels(key)} on the {side} hand-side "
                f"of the operation: [{first}, {second}];many-to-many matching not allowed: matching labels "
                "must be unique on one side")
