"""label_replace and label_join: functions of a series' labels, not of its values."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .. import labels as lbl
from ..labels import compile_anchored
from . import ast
from .byte_escapes import printable, valid_utf8
from .errors import EvaluationError
from .steps import StepSeries, merge_by_labels

if TYPE_CHECKING:
    from .evaluator import Evaluator


def _string_arg(node: ast.Expr) -> str:
    assert isinstance(node, ast.StringLiteral)
    return node.value


def _valid_label_name(name: str) -> bool:
    # Prometheus 3 validates names by its UTF-8 scheme: any non-empty valid UTF-8 string.
    return name != "" and valid_utf8(name)


def label_replace(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    dst, replacement, src, pattern = (_string_arg(a) for a in call.args[1:])
    try:
        regex = compile_anchored(pattern)
    except re.error:
        raise EvaluationError(f"invalid regular expression in label_replace(): {pattern}") from None
    if not _valid_label_name(dst):
        raise EvaluationError(f"invalid destination label name in label_replace(): {printable(dst)}")
    out: list[StepSeries] = []
    for s in ev.vector(call.args[0]):
        match = regex.fullmatch(lbl.get(s.labels, src))
        if match is None:  # only a matching source value changes the labels
            out.append(s)
            continue
        out.append(StepSeries(lbl.with_label(s.labels, dst, go_expand(replacement, match)), s.values))
    return merge_by_labels(out)


def label_join(ev: "Evaluator", call: ast.Call) -> list[StepSeries]:
    dst, separator, *sources = (_string_arg(a) for a in call.args[1:])
    for src in sources:
        if not _valid_label_name(src):
            raise EvaluationError(f"invalid source label name in label_join(): {printable(src)}")
    if not _valid_label_name(dst):
        raise EvaluationError(f"invalid destination label name in label_join(): {printable(dst)}")
    out = [StepSeries(lbl.with_label(s.labels, dst, separator.join(lbl.get(s.labels, src) for src in sources)),
                      s.values)
           for s in ev.vector(call.args[0])]
    return merge_by_labels(out)


def go_expand(template: str, match: re.Match) -> str:
    """Go's ``Regexp.ExpandString``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``.

    As in Go, a name runs as long as letters, digits and underscores follow, so
    ``$1x`` means the group named ``1x`` (which does not exist: empty), and a
    ``$`` that starts no valid reference stays as it is.
    """
    out: list[str] = []
    rest = template
    while True:
        before, dollar, rest = rest.partition("$")
        out.append(before)
        if not dollar:
            return "".join(out)
        if rest.startswith("$"):
            out.append("$")
            rest = rest[1:]
            continue
        reference = _reference(rest)
        if reference is None:
            out.append("$")
            continue
        name, rest = reference
        out.append(_group(match, name))


def _reference(text: str) -> tuple[str, str] | None:
    """The name of a leading ``name`` or ``{name}``, and the text after it."""
    braced = text.startswith("{")
    body = text[1:] if braced else text
    i = 0
    while i < len(body) and (body[i].isalnum() or body[i] == "_"):
        i += 1
    if i == 0:
        return None
    name = body[:i]
    if braced:
        if i >= len(body) or body[i] != "}":
            return None
        i += 1
    return name, body[i:]


def _group(match: re.Match, name: str) -> str:
    if name.isdigit() and len(name) < 9 and not (name[0] == "0" and len(name) > 1):
        index = int(name)
        if index <= (match.re.groups or 0):
            return match.group(index) or ""
        return ""
    if name in match.re.groupindex:
        return match.group(name) or ""
    return ""
