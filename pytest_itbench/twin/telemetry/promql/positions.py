"""Where each node of a query starts, for annotations' ``(line:col)`` suffix.

Prometheus' annotations end with the position of the expression they are
about (``PositionRange.StartPosInput``): ``sort is ineffective … (1:5)`` for
``sum(sort(x))``. promql-parser's tree carries no positions, so this module
walks the query text alongside the tree, in the order the grammar writes each
node's parts, and returns a :class:`Span` tree shaped like the syntax tree.
The walk only has to follow text the parser already accepted; if it ever
loses its way (:class:`LostPosition`) the caller goes on without positions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import promql_parser as pp


@dataclass(frozen=True)
class Span:
    start: int  # a character offset into the query
    children: tuple["Span", ...] = ()


class LostPosition(Exception):
    """The walk did not find in the text what the tree says is there."""


_SPACE = re.compile(r"(?:\s+|#[^\n]*)*")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_DURATION = r"(?:\d+(?:ms|s|m|h|d|w|y))+"
_NUMBER = re.compile(rf"[-+]?\s*(?:{_DURATION}(?![\w.])|0[xX][0-9a-fA-F_]+|(?i:inf|nan)(?!\w)"
                     r"|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?)")
_BINARY_OP = re.compile(r"==|!=|>=|<=|>|<|\+|-|\*|/|%|\^|(?i:and|or|unless|atan2)(?!\w)")
_KEYWORD = {name: re.compile(rf"(?i:{name})(?![\w:])") for name in
            ("bool", "on", "ignoring", "group_left", "group_right", "by", "without", "offset")}
_OFFSET_VALUE = re.compile(rf"[-+]?\s*(?:{_DURATION}|\d+(?:\.\d+)?)")
_AT_VALUE = re.compile(r"(?i:start|end)\s*\(\s*\)|[-+]?\s*(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)")
_QUOTES = "\"'`"
_STOPS = {closing: re.compile(f"[{_QUOTES}{re.escape(closing)}]") for closing in ")]}"}


def spans(query: str, tree) -> Span:
    """The span tree of ``tree``, the parse of ``query``."""
    walk = _Walk(query)
    span = walk.node(tree)
    walk.space()
    if walk.i != len(query):
        raise LostPosition(f"text left after the expression at {walk.i}")
    return span


def line_col(query: str, offset: int) -> str:
    """``line:col`` as Prometheus writes it: 1-based, the column counted in bytes from the line's start."""
    before = query[:offset]
    line = before.count("\n") + 1
    return f"{line}:{len(before[before.rfind(chr(10)) + 1:].encode()) + 1}"


class _Walk:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    # ---- lexical steps ---------------------------------------------------------------------------

    def space(self) -> None:
        self.i = _SPACE.match(self.text, self.i).end()

    def take(self, pattern: re.Pattern | str, optional: bool = False) -> bool:
        self.space()
        if isinstance(pattern, str):
            if self.text.startswith(pattern, self.i):
                self.i += len(pattern)
                return True
        else:
            m = pattern.match(self.text, self.i)
            if m and m.end() > self.i:
                self.i = m.end()
                return True
        if optional:
            return False
        raise LostPosition(f"expected {getattr(pattern, 'pattern', pattern)!r} at {self.i}")

    def balanced(self, opening: str, closing: str) -> None:
        """Skip ``opening … closing`` (label lists, matchers, ranges), minding quoted strings."""
        self.take(opening)
        stop = _STOPS[closing]
        while m := stop.search(self.text, self.i):
            self.i = m.start()
            if self.text[self.i] in _QUOTES:
                self.string_body()
                continue
            self.i += 1
            return
        raise LostPosition(f"no {closing!r} after {opening!r}")

    def string_body(self) -> None:
        quote = self.text[self.i]
        self.i += 1
        while self.i < len(self.text):
            ch = self.text[self.i]
            self.i += 1
            if ch == "\\" and quote != "`":
                self.i += 1
            elif ch == quote:
                return
        raise LostPosition("unterminated string")

    def modifiers(self) -> None:
        """``offset <duration>`` and ``@ <time>``, in either order."""
        while True:
            if self.take(_KEYWORD["offset"], optional=True):
                self.take(_OFFSET_VALUE)
            elif self.take("@", optional=True):
                self.take(_AT_VALUE)
            else:
                return

    def label_list(self, *keywords: str) -> None:
        for keyword in keywords:
            if self.take(_KEYWORD[keyword], optional=True):
                self.space()
                if self.text.startswith("(", self.i):
                    self.balanced("(", ")")
                return

    # ---- nodes, each part in the order the grammar writes it --------------------------------------

    def start(self) -> int:
        self.space()
        return self.i

    def node(self, node) -> Span:
        start = self.start()
        if isinstance(node, pp.ParenExpr):
            self.take("(")
            inner = self.node(node.expr)
            self.take(")")
            return Span(start, (inner,))
        if isinstance(node, pp.NumberLiteral):
            self.take(_NUMBER)
            return Span(start)
        if isinstance(node, pp.StringLiteral):
            if self.i >= len(self.text) or self.text[self.i] not in _QUOTES:
                raise LostPosition(f"expected a string at {self.i}")
            self.string_body()
            return Span(start)
        if isinstance(node, pp.VectorSelector):
            self.selector()
            self.modifiers()
            return Span(start)
        if isinstance(node, pp.MatrixSelector):
            self.selector()
            self.balanced("[", "]")
            self.modifiers()
            return Span(start)
        if isinstance(node, pp.SubqueryExpr):
            inner = self.node(node.expr)
            self.balanced("[", "]")
            self.modifiers()
            return Span(start, (inner,))
        if isinstance(node, pp.Call):
            self.take(_IDENT)
            self.take("(")
            args = []
            for k, arg in enumerate(node.args):
                if k:
                    self.take(",")
                args.append(self.node(arg))
            self.take(",", optional=True)
            self.take(")")
            return Span(start, tuple(args))
        if isinstance(node, pp.AggregateExpr):
            self.take(_IDENT)
            self.label_list("by", "without")
            self.take("(")
            parts = []
            if node.param is not None:
                parts.append(self.node(node.param))
                self.take(",")
            parts.append(self.node(node.expr))
            self.take(",", optional=True)
            self.take(")")
            self.label_list("by", "without")
            return Span(start, tuple(parts))
        if isinstance(node, pp.BinaryExpr):
            lhs = self.node(node.lhs)
            self.take(_BINARY_OP)
            self.take(_KEYWORD["bool"], optional=True)
            self.label_list("on", "ignoring")
            self.label_list("group_left", "group_right")
            rhs = self.node(node.rhs)
            return Span(start, (lhs, rhs))
        if isinstance(node, pp.UnaryExpr):
            self.take(re.compile(r"[-+]"))
            return Span(start, (self.node(node.expr),))
        raise LostPosition(f"unknown node {type(node).__name__}")

    def selector(self) -> None:
        self.space()
        if self.i < len(self.text) and self.text[self.i] != "{":
            self.take(_IDENT)
            self.space()
        if self.text.startswith("{", self.i):
            self.balanced("{", "}")
