"""Label sets and label matchers, as Prometheus defines them.

A label set is a tuple of ``(name, value)`` pairs sorted by name: hashable,
compact, and ordered the way Prometheus orders series (``labels.Compare``
compares name then value, pair by pair, which is what tuple comparison does).
The metric name is the ``__name__`` label.

Matchers follow Prometheus' semantics: ``=~`` and ``!~`` are fully anchored
RE2 expressions in which ``.`` also matches a newline, and a label that a
series lacks has the empty value (so ``{a=""}`` selects series without ``a``).
"""

from __future__ import annotations

import enum
import functools
import re
from typing import Iterable, Mapping

Labels = tuple[tuple[str, str], ...]

METRIC_NAME = "__name__"
BUCKET_LABEL = "le"
EMPTY: Labels = ()


def from_mapping(mapping: Mapping[str, str]) -> Labels:
    """A label set from a mapping; empty values are dropped, as Prometheus never stores them."""
    return tuple(sorted((k, v) for k, v in mapping.items() if v != ""))


def get(labels: Labels, name: str) -> str:
    for k, v in labels:
        if k == name:
            return v
    return ""


def to_dict(labels: Labels) -> dict[str, str]:
    return dict(labels)


def without_name(labels: Labels) -> Labels:
    """``labels`` without ``__name__``, wherever it sorts (``__address__`` comes before it)."""
    if labels and labels[0][0] == METRIC_NAME:
        return labels[1:]
    if any(name == METRIC_NAME for name, _ in labels):
        return tuple(pair for pair in labels if pair[0] != METRIC_NAME)
    return labels


def keep(labels: Labels, names: Iterable[str]) -> Labels:
    wanted = set(names)
    return tuple(pair for pair in labels if pair[0] in wanted)


def drop(labels: Labels, names: Iterable[str]) -> Labels:
    unwanted = set(names)
    return tuple(pair for pair in labels if pair[0] not in unwanted)


def with_label(labels: Labels, name: str, value: str) -> Labels:
    """``labels`` with ``name`` set to ``value`` (removed when ``value`` is empty)."""
    rest = [pair for pair in labels if pair[0] != name]
    if value != "":
        rest.append((name, value))
        rest.sort()
    return tuple(rest)


def format_labels(labels: Labels) -> str:
    """``{__name__="up", job="api"}``, as Go's ``labels.Labels.String()`` writes a label set."""
    return "{" + ", ".join(f"{_label_name(k)}={go_quote(v)}" for k, v in labels) + "}"


_LEGACY_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _label_name(name: str) -> str:
    return name if _LEGACY_NAME.match(name) else go_quote(name)


def go_quote(text: str) -> str:
    """A double-quoted string with Go's ``strconv.Quote`` escapes."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class MatchType(enum.Enum):
    EQUAL = "="
    NOT_EQUAL = "!="
    REGEX = "=~"
    NOT_REGEX = "!~"


class Matcher:
    """One label matcher: ``name op value``."""

    __slots__ = ("type", "name", "value", "_regex")

    def __init__(self, type: MatchType, name: str, value: str):
        self.type = type
        self.name = name
        self.value = value
        self._regex = compile_anchored(value) if type in (MatchType.REGEX, MatchType.NOT_REGEX) else None

    def matches(self, value: str) -> bool:
        t = self.type
        if t is MatchType.EQUAL:
            return value == self.value
        if t is MatchType.NOT_EQUAL:
            return value != self.value
        hit = self._regex.fullmatch(value) is not None
        return hit if t is MatchType.REGEX else not hit

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Matcher) and self.type is other.type and self.name == other.name
                and self.value == other.value)

    def __hash__(self) -> int:
        return hash((self.type, self.name, self.value))

    def __repr__(self) -> str:
        return f"{self.name}{self.type.value}{go_quote(self.value)}"


def equal(name: str, value: str) -> Matcher:
    return Matcher(MatchType.EQUAL, name, value)


# RE2 syntax that Python's ``re`` spells differently. PromQL expressions use
# little of it; POSIX classes and ``\z`` are the ones seen in the wild.
_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_POSIX_CLASS = re.compile(r"\[:(\^?)(" + "|".join(_POSIX_CLASSES) + r"):\]")


def _re2_to_python(pattern: str) -> str:
    def posix(m: re.Match) -> str:
        if m.group(1):  # a negated class inside a bracket has no direct Python form
            raise re.error(f"unsupported negated POSIX class in {pattern!r}")
        return _POSIX_CLASSES[m.group(2)]

    return _scope_inline_flags(_POSIX_CLASS.sub(posix, pattern).replace("\\z", "\\Z"))


_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]*)?)\)")


def _scope_inline_flags(pattern: str) -> str:
    """RE2's ``(?i)`` anywhere sets flags up to the end of the enclosing group; Python takes such flags only
    at the very start. Each becomes a scoped ``(?i:…)`` closed where the group (or an alternative of it)
    ends: ``((?i)PRO).*`` -> ``((?i:PRO)).*``, ``a(?i)b|c`` -> ``a(?i:b)|(?i:c)``."""
    if "(?" not in pattern:
        return pattern
    out: list[str] = []
    levels: list[list[str]] = [[]]  # per open group: the flags opened in it so far
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif ch == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])
            i = end
        elif ch == "(" and (m := _INLINE_FLAGS.match(pattern, i)):
            flags = m.group(1)
            if "U" in flags:
                raise re.error(f"the ungreedy flag (?U) is not supported in {pattern!r}")
            out.append(f"(?{flags}:")
            levels[-1].append(flags)
            i = m.end()
        elif ch == "(":
            levels.append([])
            out.append("(")
            i += 1
        elif ch == ")":
            out.append(")" * len(levels.pop() if len(levels) > 1 else []) + ")")
            i += 1
        elif ch == "|":
            opened = levels[-1]
            out.append(")" * len(opened) + "|" + "".join(f"(?{flags}:" for flags in opened))
            i += 1
        else:
            out.append(ch)
            i += 1
    out.append(")" * len(levels[0]))
    return "".join(out)


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that opens at ``i`` (``]`` first in a class is a literal)."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
        elif pattern[j] == "[" and pattern.startswith("[:", j):
            close = pattern.find(":]", j + 2)
            j = close + 2 if close >= 0 else j + 1
        elif pattern[j] == "]":
            return j + 1
        else:
            j += 1
    return len(pattern)  # unterminated: left for re to report


@functools.lru_cache(maxsize=4096)
def compile_anchored(pattern: str) -> re.Pattern:
    """A regex matched against the whole value, with ``.`` matching newlines (Go's ``(?s:…)``)."""
    return re.compile(_re2_to_python(pattern), re.DOTALL)
