"""The typed syntax tree the engine evaluates.

``parse.py`` builds it from promql-parser's tree, resolving what the parser
leaves loose (metric name vs ``__name__`` matcher, durations, ``@``), so the
evaluator works on plain Python objects with a value type on every node.
``pos`` is where a node starts in the query (a character offset, None when
unknown), for the position annotations carry; it takes no part in equality.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from ..labels import Matcher

if TYPE_CHECKING:
    from .signatures import FunctionSignature


class ValueType(enum.Enum):
    SCALAR = "scalar"
    STRING = "string"
    VECTOR = "vector"
    MATRIX = "matrix"

    @property
    def documented(self) -> str:
        """The type as Prometheus' error messages name it."""
        return {"vector": "instant vector", "matrix": "range vector"}.get(self.value, self.value)


class AtKind(enum.Enum):
    TIME = "time"
    START = "start"  # @ start(): the query's start time
    END = "end"  # @ end(): the query's end time


@dataclass(frozen=True)
class At:
    kind: AtKind
    t_ms: int = 0  # for AtKind.TIME


@dataclass(frozen=True)
class NumberLiteral:
    value: float
    pos: int | None = field(default=None, compare=False)
    type = ValueType.SCALAR


@dataclass(frozen=True)
class StringLiteral:
    value: str
    pos: int | None = field(default=None, compare=False)
    type = ValueType.STRING


@dataclass(frozen=True)
class VectorSelector:
    name: str | None
    matchers: tuple[Matcher, ...]  # includes __name__="<name>" when the name is given
    offset_ms: int = 0
    at: At | None = None
    pos: int | None = field(default=None, compare=False)
    type = ValueType.VECTOR


@dataclass(frozen=True)
class MatrixSelector:
    selector: VectorSelector
    range_ms: int
    pos: int | None = field(default=None, compare=False)
    type = ValueType.MATRIX


@dataclass(frozen=True)
class Subquery:
    expr: "Expr"
    range_ms: int
    step_ms: int  # 0: the engine's default subquery step
    offset_ms: int = 0
    at: At | None = None
    pos: int | None = field(default=None, compare=False)
    type = ValueType.MATRIX


@dataclass(frozen=True)
class Call:
    func: "FunctionSignature"
    args: tuple["Expr", ...]
    pos: int | None = field(default=None, compare=False)

    @property
    def type(self) -> ValueType:
        return self.func.return_type


@dataclass(frozen=True)
class Aggregate:
    op: str  # sum, avg, count, min, max, group, stddev, stdvar, topk, bottomk, quantile, count_values
    expr: "Expr"
    param: "Expr | None"
    grouping: tuple[str, ...]
    without: bool
    pos: int | None = field(default=None, compare=False)
    type = ValueType.VECTOR


class Cardinality(enum.Enum):
    ONE_TO_ONE = "one-to-one"
    MANY_TO_ONE = "many-to-one"  # group_left
    ONE_TO_MANY = "one-to-many"  # group_right
    MANY_TO_MANY = "many-to-many"  # set operators


@dataclass(frozen=True)
class VectorMatching:
    card: Cardinality
    on: bool  # on(...) rather than ignoring(...)
    labels: tuple[str, ...]
    include: tuple[str, ...]  # group_left/group_right(...) labels


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: "Expr"
    rhs: "Expr"
    return_bool: bool
    matching: VectorMatching | None  # None unless both sides are instant vectors
    pos: int | None = field(default=None, compare=False)

    @property
    def type(self) -> ValueType:
        if self.lhs.type is ValueType.SCALAR and self.rhs.type is ValueType.SCALAR:
            return ValueType.SCALAR
        return ValueType.VECTOR


@dataclass(frozen=True)
class Negation:
    expr: "Expr"
    pos: int | None = field(default=None, compare=False)

    @property
    def type(self) -> ValueType:
        return self.expr.type


Expr = Union[NumberLiteral, StringLiteral, VectorSelector, MatrixSelector, Subquery, Call, Aggregate, Binary,
             Negation]

SET_OPS = frozenset({"and", "or", "unless"})
