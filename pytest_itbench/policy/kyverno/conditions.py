"""Conditions of ``preconditions`` and ``validate.deny``: key, operator, value, any/all."""

from __future__ import annotations

import json
import re

from .errors import PolicyError
from .values import (
    is_number,
    parse_duration,
    parse_number,
    parse_quantity,
    to_text,
    wildcard_match,
)
from .variables import substitute

OPERATORS = {
    "equals", "notequals", "in", "notin", "anyin", "allin", "anynotin", "allnotin",
    "greaterthan", "greaterthanorequals", "lessthan", "lessthanorequals",
    "durationgreaterthan", "durationgreaterthanorequals", "durationlessthan", "durationlessthanorequals",
}
_RANGE = re.compile(r"^([+-]?\d+(?:\.\d+)?)-([+-]?\d+(?:\.\d+)?)$")


def normalise(block, where: str) -> tuple[list, list]:
    """(any, all) of a conditions block; a bare list is the legacy form, meaning all."""
    if block is None:
        return [], []
    if isinstance(block, list):
        conds_any, conds_all = [], block
    elif isinstance(block, dict):
        extra = set(block) - {"any", "all"}
        if extra:
            raise PolicyError(f"{where}: only 'any' and 'all' are allowed, found {sorted(extra)}")
        conds_any, conds_all = block.get("any") or [], block.get("all") or []
    else:
        raise PolicyError(f"{where}: conditions must be a list or an any/all map")
    for name, conds in (("any", conds_any), ("all", conds_all)):
        for i, c in enumerate(conds):
            if not isinstance(c, dict) or "operator" not in c:
                raise PolicyError(f"{where}.{name}[{i}]: a condition needs key, operator and value")
            if str(c["operator"]).lower() not in OPERATORS:
                raise PolicyError(f"{where}.{name}[{i}].operator: unknown operator {c['operator']!r}")
    return conds_any, conds_all


def evaluate(block, data: dict, where: str, *, missing_ok: bool) -> tuple[bool, str]:
    """(result, message): all of ``all`` hold and, when ``any`` is given, at least one of it.

    The message joins the ``message`` fields of the conditions that decided the outcome.
    """
    conds_any, conds_all = normalise(block, where)
    messages: list[str] = []
    all_ok = True
    for c in conds_all:
        if not _one(c, data, missing_ok):
            all_ok = False
            if c.get("message"):
                messages.append(str(c["message"]))
    any_ok = not conds_any
    any_msgs: list[str] = []
    for c in conds_any:
        if _one(c, data, missing_ok):
            any_ok = True
        elif c.get("message"):
            any_msgs.append(str(c["message"]))
    if not any_ok:
        messages.extend(any_msgs)
    return all_ok and any_ok, "; ".join(messages)


def evaluate_deny(block, data: dict, where: str) -> tuple[bool, str]:
    """(deny, message) for deny conditions: deny when the conditions hold."""
    conds_any, conds_all = normalise(block, where)
    all_ok = all(_one(c, data, False) for c in conds_all)
    hits = [c for c in conds_any if _one(c, data, False)]
    any_ok = not conds_any or bool(hits)
    deny = all_ok and any_ok
    msgs = []
    if deny:
        msgs = [str(c["message"]) for c in (conds_all + hits) if c.get("message")]
    return deny, "; ".join(msgs)


def _one(cond: dict, data: dict, missing_ok: bool) -> bool:
    key = substitute(cond.get("key"), data, missing_ok=missing_ok)
    value = substitute(cond.get("value"), data, missing_ok=missing_ok)
    return check(key, str(cond["operator"]).lower(), value)


def check(key, op: str, value) -> bool:
    op = op.lower()
    if op == "equals":
        return _equals(key, value)
    if op == "notequals":
        return not _equals(key, value)
    if op in ("in", "notin"):
        inside = _legacy_in(key, value)
        return inside if op == "in" else not inside
    if op in ("anyin", "allin", "anynotin", "allnotin"):
        keys = key if isinstance(key, list) else [key]
        values = _as_list(value)
        members = [_member(k, values) for k in keys]
        if op == "anyin":
            return any(members)
        if op == "allin":
            return bool(keys) and all(members)
        if op == "anynotin":
            return not all(members) if keys else False
        return bool(keys) and not any(members)
    if op.startswith("duration"):
        a = parse_duration(key, numbers_as_seconds=True)
        b = parse_duration(value, numbers_as_seconds=True)
        if a is None or b is None:
            return False
        return _cmp(a, b, op[len("duration"):])
    return _numeric(key, value, op)


def _as_list(value) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("["):
            try:
                parsed = json.loads(s)
                if isinstance(parsed, list):
                    return parsed
            except ValueError:
                pass
    return [value]


def _member(k, values: list) -> bool:
    for v in values:
        if _equals(k, v):
            return True
        # Kyverno's set operators match wildcards both ways: `key: "*" AnyIn [get]` holds, as does
        # `key: [get] AnyIn ["g*"]` (anyin.go: wildcard.Match(val, key) || wildcard.Match(key, val)).
        if isinstance(k, str) and isinstance(v, str) and wildcard_match(k, v):
            return True
        if isinstance(v, str):
            m = _RANGE.match(v.strip())
            n = parse_number(k)
            if m and n is not None and parse_number(m.group(1)) <= n <= parse_number(m.group(2)):
                return True
    return False


def _legacy_in(key, value) -> bool:
    values = _as_list(value)
    if isinstance(key, list):
        return all(any(_equals(k, v) for v in values) for k in key)
    return any(_equals(key, v) for v in values)


def _equals(key, value) -> bool:
    if isinstance(key, (dict, list)) or isinstance(value, (dict, list)):
        return key == value
    if isinstance(key, bool) or isinstance(value, bool):
        if isinstance(key, bool) and isinstance(value, bool):
            return key == value
        return to_text(key) == to_text(value)
    if key is None or value is None:
        return key is None and value is None or to_text(key) == to_text(value)
    if is_number(key) and is_number(value):
        return key == value
    if is_number(key) or is_number(value):
        a, b = parse_number(key), parse_number(value)
        if a is not None and b is not None:
            return a == b
    ks, vs = to_text(key), to_text(value)
    if wildcard_match(vs, ks) or ks == vs:
        return True
    a, b = parse_quantity(key), parse_quantity(value)
    if a is not None and b is not None and isinstance(key, str) and isinstance(value, str):
        return a == b
    a, b = parse_duration(key), parse_duration(value)
    return a is not None and b is not None and a == b


def _cmp(a, b, op: str) -> bool:
    return {"greaterthan": a > b, "greaterthanorequals": a >= b,
            "lessthan": a < b, "lessthanorequals": a <= b}[op]


def _numeric(key, value, op: str) -> bool:
    for parse in (parse_number, parse_quantity, parse_duration):
        a, b = parse(key), parse(value)
        if a is not None and b is not None:
            return _cmp(a, b, op)
    if isinstance(key, str) and isinstance(value, str):
        sv = re.fullmatch(r"v?\d+\.\d+\.\d+.*", key) and re.fullmatch(r"v?\d+\.\d+\.\d+.*", value)
        if sv:
            from .variables import _semver
            return _cmp(_semver(key), _semver(value), op)
    return False
