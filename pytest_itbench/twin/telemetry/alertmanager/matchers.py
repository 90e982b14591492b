"""Alertmanager's label matchers: ``severity="critical"``, ``alertname=~"Kube.*"``, as filters and silences use them.

Parsing is Alertmanager v0.27's default (the UTF-8 parser with a fallback to
the classic one, which in practice accepts what the classic parser accepts):
``name op value`` with the value optionally double-quoted, OpenMetrics
escapes inside quotes, regular expressions anchored at both ends. A label a
set lacks matches as the empty value.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Mapping

from ..gotemplate.lexer import go_quote


class MatchType(enum.Enum):
    EQUAL = "="
    NOT_EQUAL = "!="
    REGEX = "=~"
    NOT_REGEX = "!~"


class MatcherError(ValueError):
    pass


@dataclass(frozen=True)
class Matcher:
    type: MatchType
    name: str
    value: str
    _regex: re.Pattern | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, type: MatchType, name: str, value: str) -> "Matcher":
        regex = None
        if type in (MatchType.REGEX, MatchType.NOT_REGEX):
            try:
                regex = re.compile(f"(?:{value})")
            except re.error as exc:
                raise MatcherError(f"error parsing regexp: {exc}: `{value}`") from None
        return cls(type, name, value, regex)

    @property
    def is_regex(self) -> bool:
        return self.type in (MatchType.REGEX, MatchType.NOT_REGEX)

    @property
    def is_equal(self) -> bool:
        return self.type in (MatchType.EQUAL, MatchType.REGEX)

    def matches(self, value: str) -> bool:
        if self.type is MatchType.EQUAL:
            return value == self.value
        if self.type is MatchType.NOT_EQUAL:
            return value != self.value
        assert self._regex is not None
        hit = self._regex.fullmatch(value) is not None
        return hit if self.type is MatchType.REGEX else not hit

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        return self.matches(labels.get(self.name, ""))

    def __str__(self) -> str:
        """``labels.Matcher.String()``: ``name="value"`` with OpenMetrics escapes."""
        if any(ch.isspace() or ch in "{}!=~,\\\"'`" for ch in self.name):
            return f"{go_quote(self.name)}{self.type.value}{go_quote(self.value)}"
        escaped = self.value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
        return f'{self.name}{self.type.value}"{escaped}"'


def matches_all(matchers: list[Matcher], labels: Mapping[str, str]) -> bool:
    return all(m.matches_labels(labels) for m in matchers)


_MATCHER = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(=~|=|!=|!~)\s*(.*?)\s*$", re.DOTALL)
_TYPES = {t.value: t for t in MatchType}


def parse_matcher(text: str) -> Matcher:
    """One matcher, as the API's ``filter`` parameter takes it."""
    if text.startswith("{") or text.endswith("}"):
        raise MatcherError(f"unexpected open or close brace: {text}")
    m = _MATCHER.match(text)
    if m is None:
        raise MatcherError(f"bad matcher format: {text}")
    raw = m.group(3)
    quoted = raw.startswith('"')
    if quoted:
        raw = raw[1:]
    value: list[str] = []
    escaped = False
    for i, ch in enumerate(raw):
        if escaped:
            escaped = False
            value.append({"n": "\n", '"': '"', "\\": "\\"}.get(ch, "\\" + ch))
            continue
        if ch == "\\" and i < len(raw) - 1:
            escaped = True
        elif ch == '"':
            if not quoted or i < len(raw) - 1:
                raise MatcherError(f"matcher value contains unescaped double quote: {m.group(3)}")
            quoted = False
        else:
            value.append(ch)
    if quoted:
        raise MatcherError(f"matcher value contains unescaped double quote: {m.group(3)}")
    return Matcher.of(_TYPES[m.group(2)], m.group(1), "".join(value))
