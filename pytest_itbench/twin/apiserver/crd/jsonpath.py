"""The JSONPath of kubectl and client-go, in the subset CRDs use for printer columns and scale paths.

Supported: ``.field``, ``['field']`` (for names with dots), ``[n]`` (negative
counts from the end), ``[start:end]``, ``[*]`` and ``.*``, ``..field``
(recursive descent), and filters ``[?(@.a.b == "x")]`` with ``==``, ``!=``,
``<``, ``<=``, ``>``, ``>=`` against a string, number or boolean, or
``[?(@.a)]`` for presence. The expression may be wrapped in ``{}``, as
client-go templates are. Missing keys yield no result rather than an error
(client-go's ``AllowMissingKeys(true)``, which printer columns use).
"""

from __future__ import annotations

import re
from typing import Any, Callable

Step = Callable[[list], list]


class JSONPathError(ValueError):
    pass


class JSONPath:
    def __init__(self, expression: str):
        self.expression = expression
        text = expression.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1].strip()
        self.steps: list[Step] = _parse(text)

    def find(self, value: Any) -> list:
        """Every value the path selects in ``value``, in document order."""
        nodes = [value]
        for step in self.steps:
            nodes = step(nodes)
            if not nodes:
                break
        return nodes

    def first(self, value: Any, default: Any = None) -> Any:
        found = self.find(value)
        return found[0] if found else default


_NAME_END = re.compile(r"[.\[]")
_FILTER = re.compile(r"^@((?:\.[^.\s=!<>]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*(.+?))?\s*$")


def _parse(text: str) -> list[Step]:
    steps: list[Step] = []
    i = 0
    if text.startswith("$"):
        i = 1
    while i < len(text):
        if text.startswith("..", i):
            end = _name_end(text, i + 2)
            steps.append(_descend(text[i + 2:end]))
            i = end
        elif text[i] == ".":
            if text.startswith(".*", i):
                steps.append(_wildcard)
                i += 2
                continue
            end = _name_end(text, i + 1)
            name = text[i + 1:end]
            if name:
                steps.append(_field(name))
            i = end
        elif text[i] == "[":
            end = _bracket_end(text, i)
            steps.append(_bracket(text[i + 1:end].strip()))
            i = end + 1
        else:
            raise JSONPathError(f"unrecognized character in action: {text[i:]!r}")
    return steps


def _name_end(text: str, start: int) -> int:
    m = _NAME_END.search(text, start)
    return m.start() if m else len(text)


def _bracket_end(text: str, start: int) -> int:
    depth, quote = 0, ""
    for j in range(start, len(text)):
        ch = text[j]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
            if depth == 0 and ch == "]":
                return j
    raise JSONPathError(f"unclosed array expect ]: {text[start:]!r}")


def _bracket(inner: str) -> Step:
    if inner == "*":
        return _wildcard
    if inner.startswith("?(") and inner.endswith(")"):
        return _filter(inner[2:-1].strip())
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return _field(inner[1:-1])
    if ":" in inner:
        try:
            start, end = (int(p) if p.strip() else None for p in inner.split(":")[:2])
        except ValueError:
            raise JSONPathError(f"invalid array slice {inner!r}") from None
        return lambda nodes: [x for n in nodes if isinstance(n, list) for x in n[start:end]]
    try:
        index = int(inner)
    except ValueError:
        raise JSONPathError(f"invalid array index {inner!r}") from None
    return lambda nodes: [n[index] for n in nodes if isinstance(n, list) and -len(n) <= index < len(n)]


def _field(name: str) -> Step:
    return lambda nodes: [n[name] for n in nodes if isinstance(n, dict) and name in n]


def _wildcard(nodes: list) -> list:
    out = []
    for n in nodes:
        if isinstance(n, dict):
            out.extend(n.values())
        elif isinstance(n, list):
            out.extend(n)
    return out


def _descend(name: str) -> Step:
    def step(nodes: list) -> list:
        out = []
        stack = list(reversed(nodes))
        while stack:
            n = stack.pop()
            if isinstance(n, dict):
                if name in n:
                    out.append(n[name])
                stack.extend(reversed(list(n.values())))
            elif isinstance(n, list):
                stack.extend(reversed(n))
        return out
    return step


def _filter(expression: str) -> Step:
    m = _FILTER.match(expression)
    if not m:
        raise JSONPathError(f"unrecognized filter {expression!r}")
    path = [p for p in m.group(1).split(".") if p]
    op, literal = m.group(2), m.group(3)
    want = _literal(literal) if op else None

    def keep(item) -> bool:
        cur = item
        for key in path:
            if not isinstance(cur, dict) or key not in cur:
                return False
            cur = cur[key]
        return True if op is None else _compare(cur, op, want)

    def step(nodes: list) -> list:
        out = []
        for n in nodes:
            items = n if isinstance(n, list) else list(n.values()) if isinstance(n, dict) else []
            out.extend(item for item in items if keep(item))
        return out
    return step


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise JSONPathError(f"unrecognized literal {text!r} in filter") from None


def _compare(have: Any, op: str, want: Any) -> bool:
    if isinstance(have, bool) != isinstance(want, bool):
        return op == "!="
    numeric = isinstance(have, (int, float)) and isinstance(want, (int, float))
    if not numeric and type(have) is not type(want):
        return op == "!="
    if op == "==":
        return have == want
    if op == "!=":
        return have != want
    if not numeric and not isinstance(have, str):
        return False
    return {"<": have < want, "<=": have <= want, ">": have > want, ">=": have >= want}[op]
