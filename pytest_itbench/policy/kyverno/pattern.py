"""Kyverno validate patterns: overlay-style structural matching with anchors and operators.

``match_pattern(resource, pattern)`` returns None when the resource satisfies the pattern,
or a ``PatternError`` naming the path (``/spec/containers/0/image/``) where it does not.
A ``PatternError`` with ``skip=True`` means a conditional or global anchor did not hold, so
the rule does not apply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .errors import PolicyError
from .values import (
    has_wildcard,
    is_number,
    parse_duration,
    parse_number,
    parse_quantity,
    to_text,
    wildcard_match,
)

# anchor kinds
PLAIN, CONDITION, GLOBAL, EQUALITY, EXISTENCE, NEGATION, ADD = (
    "plain", "condition", "global", "equality", "existence", "negation", "add")
_ANCHOR = re.compile(r"^(<|=|\^|X|\+)?\((.+)\)$")
_ANCHOR_KIND = {None: CONDITION, "<": GLOBAL, "=": EQUALITY, "^": EXISTENCE, "X": NEGATION, "+": ADD}
_RANGE = re.compile(
    r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+)[A-Za-zµ]*)(!?)-([+-]?(?:\d+(?:\.\d*)?|\.\d+)[A-Za-zµ]*)$")


@dataclass
class PatternError:
    path: str
    message: str
    skip: bool = False

    def __str__(self) -> str:
        return self.message


def parse_key(key: str) -> tuple[str, str]:
    """(anchor kind, bare key) of a pattern key such as ``=(securityContext)``."""
    m = _ANCHOR.match(key)
    if not m:
        if key.startswith(("(", "=(", "^(", "X(", "<(", "+(")) and not key.endswith(")"):
            raise PolicyError(f"invalid anchor key {key!r}: missing ')'")
        return PLAIN, key
    return _ANCHOR_KIND[m.group(1)], m.group(2)


class _Skip(Exception):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


class _Fail(Exception):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


def match_pattern(resource, pattern) -> PatternError | None:
    """Match a whole resource against a pattern (the root path is ``/``)."""
    check_pattern(pattern, "")
    if not _globals_hold(resource, pattern):
        return PatternError("", "global anchor mismatch", skip=True)
    try:
        _element(resource, pattern, "/")
    except _Skip as s:
        return PatternError(s.path, f"conditional anchor mismatch at path {s.path}: {s}", skip=True)
    except _Fail as f:
        return PatternError(f.path, str(f))
    return None


def check_pattern(pattern, where: str) -> None:
    """Raise PolicyError for a pattern Kyverno would refuse (bad anchors, bad operators)."""
    if isinstance(pattern, dict):
        for key, value in pattern.items():
            kind, _ = parse_key(str(key))
            if kind == EXISTENCE and not isinstance(value, list):
                raise PolicyError(f"{where}/{key}: existence anchor ^() needs a list value")
            check_pattern(value, f"{where}/{key}")
    elif isinstance(pattern, list):
        for i, item in enumerate(pattern):
            check_pattern(item, f"{where}/{i}")
    elif isinstance(pattern, str):
        for alt in pattern.split("|"):
            for part in alt.split("&"):
                part = part.strip()
                if part[:2] in (">=", "<=") and not part[2:].strip():
                    raise PolicyError(f"{where}: operator {part!r} has no operand")
                if part[:1] in (">", "<") and not part[1:].strip():
                    raise PolicyError(f"{where}: operator {part!r} has no operand")


# --- structure -------------------------------------------------------------------------

def _element(resource, pattern, path: str) -> None:
    if isinstance(pattern, dict):
        if not isinstance(resource, dict):
            raise _Fail(path, f"expected a map at {path}")
        _map(resource, pattern, path)
    elif isinstance(pattern, list):
        if not isinstance(resource, list):
            raise _Fail(path, f"expected a list at {path}")
        _array(resource, pattern, path)
    else:
        if isinstance(resource, list) and not isinstance(pattern, list):
            for i, item in enumerate(resource):
                if isinstance(item, (dict, list)) or not value_matches(item, pattern):
                    raise _Fail(f"{path}{i}/", f"value at {path}{i}/ does not match {pattern!r}")
            return
        if isinstance(resource, dict):
            raise _Fail(path, f"expected a value at {path}, found a map")
        if not value_matches(resource, pattern):
            raise _Fail(path, f"value {resource!r} at {path} does not match {pattern!r}")


def _expand_wildcard_keys(resource: dict, pattern: dict) -> list:
    """Pattern entries, with a wildcard key (``app.io/*``) standing for every resource key it matches."""
    entries = []
    for k, v in pattern.items():
        kind, key = parse_key(str(k))
        if has_wildcard(key) and kind != NEGATION:
            hits = [rk for rk in resource if wildcard_match(key, str(rk))]
            if hits:
                entries.extend(((kind, rk), v) for rk in hits)
                continue
            if kind in (EQUALITY, ADD):
                continue
        elif has_wildcard(key) and kind == NEGATION:
            entries.extend(((kind, rk), v) for rk in resource if wildcard_match(key, str(rk)))
            continue
        entries.append(((kind, key), v))
    return entries


def _map(resource: dict, pattern: dict, path: str) -> None:
    entries = _expand_wildcard_keys(resource, pattern)
    # conditions first: a condition that does not hold skips this whole map
    for (kind, key), value in entries:
        if kind not in (CONDITION, GLOBAL):
            continue
        sub = f"{path}{key}/"
        if key not in resource:
            raise _Skip(sub, f"key {key} not found")
        try:
            _element(resource[key], value, sub)
        except (_Fail, _Skip) as e:
            raise _Skip(sub, f"condition on {key} not met") from e
    for (kind, key), value in entries:
        sub = f"{path}{key}/"
        if kind in (CONDITION, GLOBAL, ADD):
            continue
        if kind == EQUALITY:
            if key in resource:
                _element(resource[key], value, sub)
        elif kind == NEGATION:
            if key in resource:
                raise _Fail(sub, f"{key} is not allowed")
        elif kind == EXISTENCE:
            _existence(resource.get(key), value, sub)
        else:
            if key not in resource:
                if value is None or value == "":
                    continue
                raise _Fail(sub, f"key {key} is missing")
            _element(resource[key], value, sub)


def _existence(resource, pattern: list, path: str) -> None:
    if not isinstance(resource, list) or not resource:
        raise _Fail(path, "existence anchor: no list found")
    for pat in pattern:
        for item in resource:
            try:
                _element(item, pat, path)
                break
            except (_Fail, _Skip):
                continue
        else:
            raise _Fail(path, "existence anchor: no element matches")


def _array(resource: list, pattern: list, path: str) -> None:
    if not pattern:
        return
    if len(pattern) == 1:
        applied, first_skip = 0, None
        for i, item in enumerate(resource):
            try:
                _element(item, pattern[0], f"{path}{i}/")
            except _Skip as s:
                first_skip = first_skip or s
                continue
            applied += 1
        if resource and applied == 0 and first_skip is not None:
            raise first_skip
        return
    if len(resource) != len(pattern):
        raise _Fail(path, f"expected {len(pattern)} elements at {path}, found {len(resource)}")
    for i, (item, pat) in enumerate(zip(resource, pattern)):
        _element(item, pat, f"{path}{i}/")


# --- global anchors: checked across the whole resource first ----------------------------

def _has_global(pattern) -> bool:
    if isinstance(pattern, dict):
        return any(parse_key(str(k))[0] == GLOBAL or _has_global(v) for k, v in pattern.items())
    if isinstance(pattern, list):
        return any(_has_global(p) for p in pattern)
    return False


def _globals_hold(resource, pattern) -> bool:
    """Every global anchor ``<(key)`` holds somewhere in the resource."""
    if not _has_global(pattern):
        return True
    if isinstance(pattern, dict):
        if not isinstance(resource, dict):
            return False
        for k, v in pattern.items():
            kind, key = parse_key(str(k))
            if kind == GLOBAL:
                if key not in resource:
                    return False
                try:
                    _element(resource[key], v, "/")
                except (_Fail, _Skip):
                    return False
            elif _has_global(v):
                if key not in resource or not _globals_hold(resource[key], v):
                    return False
        return True
    if isinstance(pattern, list):
        if not isinstance(resource, list):
            return False
        return all(any(_globals_hold(item, p) for item in resource) for p in pattern if _has_global(p))
    return True


# --- scalars ------------------------------------------------------------------------------

def value_matches(value, pattern) -> bool:
    """A resource scalar against a pattern scalar (with operators when the pattern is a string)."""
    if pattern is None:
        return value in (None, "", 0, False) or value == {} or value == []
    if isinstance(pattern, bool):
        return isinstance(value, bool) and value == pattern
    if is_number(pattern):
        if isinstance(value, bool) or value is None:
            return False
        n = parse_number(value)
        return n is not None and n == Fraction(pattern)
    if isinstance(pattern, str):
        if value is None:
            return False
        return any(
            all(_sub_pattern(value, part) for part in alt.split("&"))
            for alt in pattern.split("|")
        )
    raise PolicyError(f"unsupported pattern value {pattern!r}")


def _sub_pattern(value, pattern: str) -> bool:
    p = pattern.strip() if pattern.strip() != "" else pattern
    for op in (">=", "<=", ">", "<"):
        if p.startswith(op):
            return _compare(value, p[len(op):].strip(), op)
    m = _RANGE.match(p)
    if m:
        low, negated, high = m.groups()
        inside = _compare(value, low, ">=") and _compare(value, high, "<=")
        return not inside if negated else inside
    if p.startswith("!"):
        inner = p[1:]
        m = _RANGE.match(inner)
        if m and not m.group(2):
            return not (_compare(value, m.group(1), ">=") and _compare(value, m.group(3), "<="))
        return not _equal(value, inner)
    return _equal(value, p)


def _equal(value, pattern: str) -> bool:
    if isinstance(value, (dict, list)):
        return pattern == "*"
    text = to_text(value)
    if wildcard_match(pattern, text):
        return True
    if has_wildcard(pattern):
        return False
    a, b = parse_quantity(value), parse_quantity(pattern)
    if a is not None and b is not None:
        return a == b
    a, b = parse_duration(value), parse_duration(pattern)
    return a is not None and b is not None and a == b


def _compare(value, operand: str, op: str) -> bool:
    if isinstance(value, (bool, dict, list)) or value is None:
        return False
    for parse in (parse_number, parse_quantity, parse_duration):
        a, b = parse(value), parse(operand)
        if a is not None and b is not None:
            return {">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]
    return False
