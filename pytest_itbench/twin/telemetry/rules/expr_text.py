"""An expression as Prometheus prints it (``parser.Expr.String()``), from promql-parser's tree.

Prometheus evaluates a rule's expression through its printed form and shows
that form as the rule's ``query`` in ``/api/v1/rules`` and in alerts'
``generatorURL``: ``sum(rate(x[5m])) by (job)`` reads back as
``sum by (job) (rate(x[5m]))``, selectors' matchers sorted, on one line.
"""

from __future__ import annotations

import re
from datetime import timedelta

import promql_parser as pp

from ..gotemplate.lexer import go_quote
from ..promql.values import format_value
from ..durations import format_duration

_LEGACY_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_MATCH_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}
_PARAMETRIC = {"topk", "bottomk", "quantile", "count_values", "limitk", "limit_ratio"}


def expression_text(query: str) -> str:
    """The printed form of ``query`` (which must parse)."""
    return _text(pp.parse(query))


def _labels(names) -> str:
    return ", ".join(n if _LEGACY_NAME.match(n) else go_quote(n) for n in names)


def _duration(delta: timedelta) -> str:
    return format_duration(delta.total_seconds())


def _offset(delta: timedelta | None) -> str:
    if not delta:
        return ""
    seconds = delta.total_seconds()
    return f" offset {format_duration(seconds)}" if seconds > 0 else f" offset -{format_duration(-seconds)}"


def _at(node) -> str:
    at = node.at
    if at is None:
        return ""
    if at.type == pp.AtModifierType.Start:
        return " @ start()"
    if at.type == pp.AtModifierType.End:
        return " @ end()"
    return f" @ {at.at.timestamp():.3f}"


def _matcher(m) -> str:
    name = m.name if _LEGACY_NAME.match(m.name) else go_quote(m.name)
    return f"{name}{_MATCH_OPS[str(m.op)]}{go_quote(m.value)}"


def _selector(node: pp.VectorSelector, with_modifiers: bool = True) -> str:
    texts = sorted(_matcher(m) for m in node.matchers.matchers
                   if not (m.name == "__name__" and str(m.op) == "MatchOp.Equal" and m.value == node.name
                           and node.name))
    out = (node.name or "") + ("{" + ",".join(texts) + "}" if texts else "")
    if with_modifiers:
        out += _at(node) + _offset(node.offset)
    return out


def _binary(node: pp.BinaryExpr) -> str:
    op = str(node.op)
    modifier = node.modifier
    text = f"{_text(node.lhs)} {op}"
    if modifier is None:
        return f"{text} {_text(node.rhs)}"
    if modifier.return_bool:
        text += " bool"
    card = str(modifier.card)
    grouped = card in ("VectorMatchCardinality.ManyToOne", "VectorMatchCardinality.OneToMany")
    matching = modifier.matching
    on = matching is not None and matching.type == pp.LabelModifierType.Include
    labels = list(matching.labels) if matching is not None else []
    if labels or on or grouped:
        text += f" {'on' if on else 'ignoring'} ({_labels(labels)})"
    if grouped:
        side = "left" if card == "VectorMatchCardinality.ManyToOne" else "right"
        text += f" group_{side} ({_labels(modifier.group_labels or [])})"
    return f"{text} {_text(node.rhs)}"


def _aggregate(node: pp.AggregateExpr) -> str:
    op = str(node.op)
    text = op
    modifier = node.modifier
    if modifier is not None:
        if modifier.type == pp.AggModifierType.Without:
            text += f" without ({_labels(modifier.labels)}) "
        elif modifier.labels:
            text += f" by ({_labels(modifier.labels)}) "
    param = f"{_text(node.param)}, " if op in _PARAMETRIC and node.param is not None else ""
    return f"{text}({param}{_text(node.expr)})"


def _text(node) -> str:
    if isinstance(node, pp.ParenExpr):
        return f"({_text(node.expr)})"
    if isinstance(node, pp.NumberLiteral):
        return format_value(node.val)
    if isinstance(node, pp.StringLiteral):
        return go_quote(node.val)
    if isinstance(node, pp.VectorSelector):
        return _selector(node)
    if isinstance(node, pp.MatrixSelector):
        vs = node.vector_selector
        return f"{_selector(vs, with_modifiers=False)}[{_duration(node.range)}]{_at(vs)}{_offset(vs.offset)}"
    if isinstance(node, pp.SubqueryExpr):
        step = _duration(node.step) if node.step else ""
        return f"{_text(node.expr)}[{_duration(node.range)}:{step}]{_at(node)}{_offset(node.offset)}"
    if isinstance(node, pp.Call):
        return f"{node.func.name}({', '.join(_text(a) for a in node.args)})"
    if isinstance(node, pp.AggregateExpr):
        return _aggregate(node)
    if isinstance(node, pp.BinaryExpr):
        return _binary(node)
    if isinstance(node, pp.UnaryExpr):
        return f"-{_text(node.expr)}"
    raise TypeError(f"cannot print {type(node).__name__}")
