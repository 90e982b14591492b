"""Parsing: promql-parser's syntax tree, type-checked against our signatures, as a typed tree.

promql-parser (a Rust port of Prometheus' parser) does the lexing, the
grammar and most checks. This module then converts its tree into the
engine's own nodes (``ast.py``), checking every call and aggregation against
``signatures.py`` and rejecting what a Prometheus with default flags rejects
(experimental functions, fill modifiers). Error messages are reworded where
the port's wording differs from Prometheus' (``range vector`` rather than
``matrix``, Go's double quotes).
"""

from __future__ import annotations

import functools
import re
from datetime import timedelta
from typing import Callable

import promql_parser as pp

from .. import labels as lbl
from ..labels import Matcher, MatchType
from . import ast
from .ast import ValueType
from .byte_escapes import restore
from .byte_escapes import rewrite as rewrite_byte_escapes
from .errors import ParseError
from .positions import LostPosition, Span, spans
from .signatures import AGGREGATION_PARAMS, EXPERIMENTAL_AGGREGATIONS, SIGNATURES

# The port's enums are not hashable: they are looked up by their names.
_MATCH_TYPES = {"MatchOp.Equal": MatchType.EQUAL, "MatchOp.NotEqual": MatchType.NOT_EQUAL,
                "MatchOp.Re": MatchType.REGEX, "MatchOp.NotRe": MatchType.NOT_REGEX}
_CARDINALITIES = {"VectorMatchCardinality.OneToOne": ast.Cardinality.ONE_TO_ONE,
                  "VectorMatchCardinality.ManyToOne": ast.Cardinality.MANY_TO_ONE,
                  "VectorMatchCardinality.OneToMany": ast.Cardinality.ONE_TO_MANY,
                  "VectorMatchCardinality.ManyToMany": ast.Cardinality.MANY_TO_MANY}
_PARSER_TYPES = {"vector": ValueType.VECTOR, "matrix": ValueType.MATRIX, "scalar": ValueType.SCALAR,
                 "string": ValueType.STRING}


@functools.lru_cache(maxsize=2048)
def parse(query: str) -> ast.Expr:
    """The typed tree of ``query``; raises :class:`ParseError` with Prometheus' wording.

    Trees are immutable, so a query seen before (a rule at every evaluation) is parsed once."""
    try:
        tree = pp.parse(rewrite_byte_escapes(query))
    except ValueError as exc:
        raise ParseError(prometheus_wording(str(exc))) from None
    try:
        span: Span | None = spans(query, tree)
    except LostPosition:
        span = None  # the query still runs; its annotations go without a position
    return _convert(tree, span)


def parse_selector(text: str) -> tuple[Matcher, ...]:
    """The matchers of a series selector such as ``up{job="api"}`` (for ``match[]`` parameters)."""
    node = parse(text)
    if not isinstance(node, ast.VectorSelector):
        raise ParseError(f"expected a vector selector, got {node.type.documented}")
    return node.matchers


# ---- rewording -----------------------------------------------------------------------------------

def _doc(name: str) -> str:
    return _PARSER_TYPES[name].documented if name in _PARSER_TYPES else name


def _expected_type(m: re.Match) -> str:
    want, context, function, got = m.group(1), m.group(2), m.group(3), m.group(4)
    if context == "call to function":
        where = f'call to function "{function}"'
    elif want in ("scalar", "string"):
        where = "aggregation parameter"  # the port names the parameter's context like the operand's
    else:
        where = "aggregation expression"
    return f"expected type {_doc(want)} in {where}, got {_doc(got)}"


_REWORDINGS: list[tuple[re.Pattern, Callable[[re.Match], str]]] = [
    (re.compile(r"^expected type (\w+) in (call to function|aggregation expression)(?: '([^']*)')?, got (\w+)$"),
     _expected_type),
    (re.compile(r"^expected (at least |at most |)(\d+) argument\(s\) in call to '([^']*)', got (\d+)$"),
     lambda m: f'expected {m.group(1)}{m.group(2)} argument(s) in call to "{m.group(3)}", got {m.group(4)}'),
    (re.compile(r"^unknown function with name '([^']*)'$"),
     lambda m: f'unknown function with name "{m.group(1)}"'),
    (re.compile(r"^metric name must not be set twice: '([^']*)' or '([^']*)'$"),
     lambda m: f'metric name must not be set twice: "{m.group(1)}" or "{m.group(2)}"'),
    (re.compile(r"^set operator '(\w+)' not allowed in binary scalar expression$"),
     lambda m: f'set operator "{m.group(1)}" not allowed in binary scalar expression'),
    (re.compile(r"^label '([^']*)' must not occur in ON and GROUP clause at once$"),
     lambda m: f'label "{m.group(1)}" must not occur in ON and GROUP clause at once'),
    (re.compile(r"^unary expression only allowed on expressions of type scalar or vector, got: (\w+)$"),
     lambda m: f'unary expression only allowed on expressions of type scalar or instant vector, got "{_doc(m.group(1))}"'),
    (re.compile(r"^subquery is only allowed on vector, got (\w+) instead$"),
     lambda m: f"subquery is only allowed on instant vector, got {m.group(1)} instead"),
    (re.compile(r"^unexpected identifier '([^']*)' in label matching, expected string$"),
     lambda m: f'unexpected identifier "{m.group(1)}" in label matching, expected string'),
]


def prometheus_wording(message: str) -> str:
    for pattern, reword in _REWORDINGS:
        m = pattern.match(message)
        if m:
            return reword(m)
    return message


# ---- conversion --------------------------------------------------------------------------------

def _millis(delta: timedelta | None) -> int:
    return 0 if delta is None else delta // timedelta(milliseconds=1)


def _at(node) -> ast.At | None:
    at = node.at
    if at is None:
        return None
    if at.type == pp.AtModifierType.Start:
        return ast.At(ast.AtKind.START)
    if at.type == pp.AtModifierType.End:
        return ast.At(ast.AtKind.END)
    try:
        moment = at.at
    except BaseException as exc:  # the port panics (a BaseException) on times before 1970
        if type(exc).__name__ != "PanicException":
            raise
        raise ParseError("timestamp out of bounds for @ modifier: times before 1970 are not supported") from None
    return ast.At(ast.AtKind.TIME, round(moment.timestamp() * 1000))


def _start(span: Span | None) -> int | None:
    return None if span is None else span.start


def _child(span: Span | None, k: int) -> Span | None:
    return None if span is None else span.children[k]


def _selector(node: pp.VectorSelector, span: Span | None) -> ast.VectorSelector:
    if node.matchers.or_matchers:
        raise ParseError('unexpected "or" in label matching, expected "," or "}"')
    try:
        matchers = [Matcher(_MATCH_TYPES[str(m.op)], restore(m.name), restore(m.value)) for m in node.matchers.matchers]
    except re.error as exc:
        raise ParseError(f"error parsing regexp: {exc}") from None
    if node.name:
        matchers.insert(0, lbl.equal(lbl.METRIC_NAME, restore(node.name)))
    return ast.VectorSelector(node.name and restore(node.name), tuple(matchers), _millis(node.offset), _at(node), _start(span))


def _expect(node: ast.Expr, want: ValueType, context: str) -> None:
    if node.type is not want:
        raise ParseError(f"expected type {want.documented} in {context}, got {node.type.documented}")


def _call(node: pp.Call, span: Span | None) -> ast.Call:
    name = node.func.name
    sig = SIGNATURES.get(name)
    if sig is None:
        raise ParseError(f'unknown function with name "{name}"')
    if sig.experimental:
        raise ParseError(f'function "{name}" is not enabled')
    args = tuple(_convert(a, _child(span, k)) for k, a in enumerate(node.args))
    nargs = len(sig.arg_types)
    if sig.variadic == 0:
        if len(args) != nargs:
            raise ParseError(f'expected {nargs} argument(s) in call to "{name}", got {len(args)}')
    elif len(args) < nargs - 1:
        raise ParseError(f'expected at least {nargs - 1} argument(s) in call to "{name}", got {len(args)}')
    elif sig.variadic > 0 and len(args) > nargs - 1 + sig.variadic:
        raise ParseError(f'expected at most {nargs - 1 + sig.variadic} argument(s) in call to "{name}", '
                         f"got {len(args)}")
    for i, arg in enumerate(args):
        _expect(arg, sig.arg_types[min(i, nargs - 1)], f'call to function "{name}"')
    return ast.Call(sig, args, _start(span))


def _aggregate(node: pp.AggregateExpr, span: Span | None) -> ast.Aggregate:
    op = str(node.op)
    if op in EXPERIMENTAL_AGGREGATIONS:
        raise ParseError(f"{op}() is experimental and must be enabled with "
                         "--enable-feature=promql-experimental-functions")
    has_param = node.param is not None
    expr = _convert(node.expr, _child(span, 1 if has_param else 0))
    _expect(expr, ValueType.VECTOR, "aggregation expression")
    param = _convert(node.param, _child(span, 0)) if has_param else None
    if AGGREGATION_PARAMS[op] is not None:
        _expect(param, AGGREGATION_PARAMS[op], "aggregation parameter")
    modifier = node.modifier
    if modifier is None:
        return ast.Aggregate(op, expr, param, (), False, _start(span))
    without = modifier.type == pp.AggModifierType.Without
    return ast.Aggregate(op, expr, param, tuple(modifier.labels), without, _start(span))


def _binary(node: pp.BinaryExpr, span: Span | None) -> ast.Binary:
    op = str(node.op)
    lhs, rhs = _convert(node.lhs, _child(span, 0)), _convert(node.rhs, _child(span, 1))
    modifier = node.modifier
    return_bool = bool(modifier and modifier.return_bool)
    if modifier is not None and (modifier.fill_values.lhs is not None or modifier.fill_values.rhs is not None):
        raise ParseError("binop fill modifiers are experimental and not enabled")
    matching = None
    if lhs.type is ValueType.VECTOR and rhs.type is ValueType.VECTOR:
        if op in ast.SET_OPS:
            card = ast.Cardinality.MANY_TO_MANY
        else:
            card = _CARDINALITIES[str(modifier.card)] if modifier is not None else ast.Cardinality.ONE_TO_ONE
        spec = modifier.matching if modifier is not None else None
        on = spec is not None and spec.type == pp.LabelModifierType.Include
        matching = ast.VectorMatching(card, on, tuple(spec.labels) if spec is not None else (),
                                      tuple((modifier.group_labels or ()) if modifier is not None else ()))
    return ast.Binary(op, lhs, rhs, return_bool, matching, _start(span))


def _convert(node, span: Span | None) -> ast.Expr:
    if isinstance(node, pp.ParenExpr):
        # The parentheses vanish from the tree; what they hold starts, as in Prometheus, at "(".
        inner = _child(span, 0)
        return _convert(node.expr, None if span is None else Span(span.start, inner.children))
    pos = _start(span)
    if isinstance(node, pp.NumberLiteral):
        return ast.NumberLiteral(node.val, pos)
    if isinstance(node, pp.StringLiteral):
        return ast.StringLiteral(restore(node.val), pos)
    if isinstance(node, pp.VectorSelector):
        return _selector(node, span)
    if isinstance(node, pp.MatrixSelector):
        return ast.MatrixSelector(_selector(node.vector_selector, span), _millis(node.range), pos)
    if isinstance(node, pp.SubqueryExpr):
        return ast.Subquery(_convert(node.expr, _child(span, 0)), _millis(node.range), _millis(node.step),
                            _millis(node.offset), _at(node), pos)
    if isinstance(node, pp.Call):
        return _call(node, span)
    if isinstance(node, pp.AggregateExpr):
        return _aggregate(node, span)
    if isinstance(node, pp.BinaryExpr):
        return _binary(node, span)
    if isinstance(node, pp.UnaryExpr):
        return ast.Negation(_convert(node.expr, _child(span, 0)), pos)
    raise ParseError(f"unsupported expression {type(node).__name__}")
