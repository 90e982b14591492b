"""Label and field selectors with the syntax and semantics of k8s.io/apimachinery.

Label selectors: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``,
``a`` (exists), ``!a`` (does not exist), joined by commas, all of which must
hold. ``LabelSelector`` objects (``matchLabels`` / ``matchExpressions``) are
supported too. Field selectors: ``path=v``, ``path==v``, ``path!=v`` over the
fields a resource makes selectable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from .errors import BadRequest

_LABEL_KEY_CHARS = re.compile(r"[A-Za-z0-9_./-]")


class SelectorError(BadRequest):
    pass


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!":
            return self.key not in labels
        if self.op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        if self.op in ("!=", "notin"):
            return self.key not in labels or labels[self.key] not in self.values
        if self.op in ("gt", "lt"):
            if self.key not in labels:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if self.op == "gt" else have < want
        raise AssertionError(self.op)


class LabelSelector:
    """A parsed label selector; the empty selector matches everything."""

    def __init__(self, requirements: Iterable[Requirement] = ()):
        self.requirements = tuple(requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @classmethod
    def parse(cls, text: str | None) -> "LabelSelector":
        if not text or not text.strip():
            return cls()
        return cls(_LabelParser(text).parse())

    @classmethod
    def from_object(cls, selector: Mapping | None) -> "LabelSelector | None":
        """Convert a metav1.LabelSelector. ``None`` selects nothing; ``{}`` selects everything."""
        if selector is None:
            return None
        reqs: list[Requirement] = []
        for key, value in sorted((selector.get("matchLabels") or {}).items()):
            reqs.append(Requirement(key, "=", (str(value),)))
        for expr in selector.get("matchExpressions") or []:
            op = expr.get("operator")
            key = expr.get("key", "")
            values = tuple(str(v) for v in expr.get("values") or ())
            mapped = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}.get(op)
            if mapped is None:
                raise SelectorError(f'"{op}" is not a valid label selector operator')
            reqs.append(Requirement(key, mapped, values))
        return cls(reqs)

    def __str__(self) -> str:
        out = []
        for r in self.requirements:
            if r.op == "exists":
                out.append(r.key)
            elif r.op == "!":
                out.append("!" + r.key)
            elif r.op in ("in", "notin"):
                out.append(f"{r.key} {r.op} ({','.join(r.values)})")
            else:
                out.append(f"{r.key}{r.op}{r.values[0]}")
        return ",".join(out)


class _LabelParser:
    """A small lexer/parser for the label selector grammar of apimachinery's labels package."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, message: str) -> SelectorError:
        return SelectorError(f"unable to parse requirement: {message}")

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def word(self) -> str:
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and (_LABEL_KEY_CHARS.match(self.text[self.pos])):
            self.pos += 1
        return self.text[start:self.pos]

    def parse(self) -> list[Requirement]:
        reqs = [self.requirement()]
        while self.peek() == ",":
            self.pos += 1
            reqs.append(self.requirement())
        if self.peek():
            raise self.error(f"found '{self.text[self.pos]}', expected: ',' or 'end of string'")
        return reqs

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.pos += 1
            key = self.word()
            if not key:
                raise self.error("found '', expected: identifier")
            _validate_key(key)
            return Requirement(key, "!")
        key = self.word()
        if not key:
            found = self.peek() or ""
            raise self.error(f"found '{found}', expected: !, identifier, or 'end of string'")
        _validate_key(key)
        self.skip_ws()
        rest = self.text[self.pos:]
        for op, name in (("==", "="), ("!=", "!="), ("=", "=")):
            if rest.startswith(op):
                self.pos += len(op)
                value = self.word()
                _validate_value(value)
                return Requirement(key, name, (value,))
        if rest.startswith(">") or rest.startswith("<"):
            self.pos += 1
            value = self.word()
            try:
                int(value)
            except ValueError:
                raise self.error(f"for 'Gt', 'Lt' operators, the value must be an integer") from None
            return Requirement(key, "gt" if rest[0] == ">" else "lt", (value,))
        lowered = rest.lower()
        for op in ("notin", "in"):
            if lowered.startswith(op) and (len(rest) == len(op) or not _LABEL_KEY_CHARS.match(rest[len(op)])):
                self.pos += len(op)
                if self.peek() != "(":
                    raise self.error(f"found '{self.peek()}', expected: '('")
                self.pos += 1
                values: list[str] = []
                while True:
                    value = self.word()
                    _validate_value(value)
                    values.append(value)
                    nxt = self.peek()
                    if nxt == ",":
                        self.pos += 1
                        continue
                    if nxt == ")":
                        self.pos += 1
                        break
                    raise self.error(f"found '{nxt}', expected: ',' or ')'")
                return Requirement(key, op, tuple(values))
        if not rest or rest.startswith(","):
            return Requirement(key, "exists")
        raise self.error(f"found '{rest[0]}', expected: in, notin, =, ==, !=, gt, lt")


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _validate_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if len(name) > 63 or not _QUALIFIED_NAME.match(name) or (prefix and len(prefix) > 253):
        raise SelectorError(
            f'unable to parse requirement: invalid label key "{key}": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character")


def _validate_value(value: str) -> None:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        raise SelectorError(
            f'unable to parse requirement: values[0]: Invalid value: "{value}": a valid label must be an empty '
            "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character")


# ---- field selectors ---------------------------------------------------------------

FieldGetter = Callable[[dict], str]


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    op: str  # "=" or "!="
    value: str


class FieldSelector:
    def __init__(self, requirements: Iterable[FieldRequirement] = ()):
        self.requirements = tuple(requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    @classmethod
    def parse(cls, text: str | None) -> "FieldSelector":
        if not text:
            return cls()
        reqs = []
        for term in _split_unescaped(text, ","):
            if not term:
                continue
            for op, name in (("!=", "!="), ("==", "="), ("=", "=")):
                idx = _find_unescaped(term, op)
                if idx >= 0:
                    reqs.append(FieldRequirement(_unescape(term[:idx]).strip(), name,
                                                 _unescape(term[idx + len(op):])))
                    break
            else:
                raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        return cls(reqs)

    def check_supported(self, supported: Mapping[str, FieldGetter], kind: str, version: str) -> None:
        for r in self.requirements:
            if r.field not in supported:
                raise SelectorError(f'field label not supported: {r.field}')

    def matches(self, obj: dict, getters: Mapping[str, FieldGetter]) -> bool:
        for r in self.requirements:
            have = getters[r.field](obj)
            if (have == r.value) != (r.op == "="):
                return False
        return True

    def exact_value(self, field: str) -> str | None:
        """The value an ``=`` requirement pins ``field`` to, if any (used to narrow scans)."""
        for r in self.requirements:
            if r.field == field and r.op == "=":
                return r.value
        return None


def _find_unescaped(text: str, token: str) -> int:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(token, i):
            return i
        i += 1
    return -1


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, i = [], [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i:i + 2])
            i += 2
            continue
        if ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def path_getter(path: str, default: str = "") -> FieldGetter:
    """A getter for a dotted path; booleans and numbers print as Go's strconv does."""
    keys = path.split(".")

    def get(obj: dict) -> str:
        cur = obj
        for k in keys:
            if not isinstance(cur, dict) or k not in cur:
                return default
            cur = cur[k]
        if cur is None:
            return default
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get
