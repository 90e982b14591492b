"""``{{ ... }}`` variables: JMESPath (the ``jmespath`` package) plus Kyverno's added functions."""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timedelta, timezone
from fractions import Fraction

import jmespath
import jmespath.exceptions
from jmespath import functions
import yaml

from .values import (
    format_duration,
    format_quantity,
    is_number,
    number_out,
    parse_duration,
    parse_number,
    parse_quantity,
    to_text,
    wildcard_match,
)

# a variable may hold one level of braces inside (JMESPath literals such as `{}`)
VARIABLE = re.compile(r"(?<!\\)\{\{((?:\{[^{}]*\}|[^{}])*)\}\}")


class VariableError(Exception):
    """A variable that does not resolve, or a JMESPath expression that fails."""


def _any():
    return {"types": []}


class _KyvernoFunctions(functions.Functions):
    # strings
    @functions.signature({"types": ["string"]})
    def _func_to_upper(self, s):
        return s.upper()

    @functions.signature({"types": ["string"]})
    def _func_to_lower(self, s):
        return s.lower()

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_split(self, s, sep):
        return s.split(sep)

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_equal_fold(self, a, b):
        return a.casefold() == b.casefold()

    @functions.signature({"types": ["string"]}, {"types": ["string"]}, {"types": ["string"]}, {"types": ["number"]})
    def _func_replace(self, s, old, new, n):
        return s.replace(old, new, int(n)) if n >= 0 else s.replace(old, new)

    @functions.signature({"types": ["string"]}, {"types": ["string"]}, {"types": ["string"]})
    def _func_replace_all(self, s, old, new):
        return s.replace(old, new)

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_trim(self, s, cutset):
        return s.strip(cutset)

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_trim_prefix(self, s, prefix):
        return s[len(prefix):] if s.startswith(prefix) else s

    @functions.signature({"types": ["string"]}, {"types": ["number"]})
    def _func_truncate(self, s, n):
        return s[: max(int(n), 0)]

    @functions.signature({"types": ["string"]}, {"types": ["string", "number"]})
    def _func_regex_match(self, regex, s):
        return re.search(_go_regex(regex), to_text(s)) is not None

    @functions.signature({"types": ["string"]}, {"types": ["string", "number"]}, {"types": ["string", "number"]})
    def _func_regex_replace_all(self, regex, src, repl):
        go_repl = re.sub(r"\$\{?(\d+)\}?", r"\\g<\1>", to_text(repl))
        return re.sub(_go_regex(regex), go_repl, to_text(src))

    @functions.signature({"types": ["string"]}, {"types": ["string", "number"]}, {"types": ["string", "number"]})
    def _func_regex_replace_all_literal(self, regex, src, repl):
        return re.sub(_go_regex(regex), lambda _m: to_text(repl), to_text(src))

    @functions.signature({"types": ["string"]}, {"types": ["string", "number"]})
    def _func_pattern_match(self, pattern, s):
        return wildcard_match(pattern, to_text(s))

    @functions.signature({"types": ["object"]}, {"types": ["object"]})
    def _func_label_match(self, selector, labels):
        return all(labels.get(k) == v for k, v in selector.items())

    @functions.signature({"types": ["string"]})
    def _func_base64_decode(self, s):
        return base64.b64decode(s).decode()

    @functions.signature({"types": ["string"]})
    def _func_base64_encode(self, s):
        return base64.b64encode(s.encode()).decode()

    @functions.signature({"types": ["string"]})
    def _func_parse_json(self, s):
        return json.loads(s)

    @functions.signature({"types": ["string"]})
    def _func_parse_yaml(self, s):
        return yaml.safe_load(s)

    @functions.signature({"types": ["string"]})
    def _func_path_canonicalize(self, s):
        import posixpath
        return posixpath.normpath(s) if s else s

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_semver_compare(self, version, rng):
        return _semver_satisfies(version, rng)

    # arithmetic on numbers, quantities and durations
    @functions.signature(_any(), _any())
    def _func_add(self, a, b):
        return _arith(a, b, "+")

    @functions.signature(_any(), _any())
    def _func_subtract(self, a, b):
        return _arith(a, b, "-")

    @functions.signature(_any(), _any())
    def _func_multiply(self, a, b):
        return _arith(a, b, "*")

    @functions.signature(_any(), _any())
    def _func_divide(self, a, b):
        return _arith(a, b, "/")

    @functions.signature(_any(), _any())
    def _func_modulo(self, a, b):
        return _arith(a, b, "%")

    @functions.signature({"types": ["number"]})
    def _func_round(self, x):
        return round(x)

    @functions.signature({"types": ["array"]})
    def _func_sum(self, items):
        if not items:
            raise VariableError("sum of an empty array")
        total = items[0]
        for item in items[1:]:
            total = _arith(total, item, "+")
        return total

    # objects
    @functions.signature({"types": ["object", "array"]}, {"types": ["string", "number"]})
    def _func_lookup(self, coll, key):
        if isinstance(coll, dict):
            return coll.get(key)
        i = int(key)
        return coll[i] if 0 <= i < len(coll) else None

    @functions.signature({"types": ["object", "array"]}, {"types": ["string"]}, {"types": ["string"]})
    def _func_items(self, coll, key_name, val_name):
        if isinstance(coll, dict):
            return [{key_name: k, val_name: v} for k, v in sorted(coll.items())]
        return [{key_name: i, val_name: v} for i, v in enumerate(coll)]

    @functions.signature({"types": ["array"]}, {"types": ["array"]})
    def _func_object_from_lists(self, keys, values):
        return {str(k): (values[i] if i < len(values) else None) for i, k in enumerate(keys)}

    # time
    @functions.signature()
    def _func_time_now(self):
        return _rfc3339(datetime.now(timezone.utc).astimezone())

    @functions.signature()
    def _func_time_now_utc(self):
        return _rfc3339(datetime.now(timezone.utc))

    @functions.signature({"types": ["string"]}, {"types": ["string"]}, {"types": ["string"]})
    def _func_time_since(self, _layout, start, end):
        t0 = _parse_time(start)
        t1 = _parse_time(end) if end else datetime.now(timezone.utc)
        return format_duration(Fraction(int((t1 - t0).total_seconds() * 10**6), 10**6))

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_time_add(self, t, d):
        dur = parse_duration(d)
        if dur is None:
            raise VariableError(f"time_add: {d!r} is not a duration")
        return _rfc3339(_parse_time(t) + timedelta(seconds=float(dur)))

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_time_before(self, a, b):
        return _parse_time(a) < _parse_time(b)

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_time_after(self, a, b):
        return _parse_time(a) > _parse_time(b)

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_time_diff(self, a, b):
        return format_duration(Fraction(int((_parse_time(b) - _parse_time(a)).total_seconds() * 10**6), 10**6))

    @functions.signature({"types": ["string"]})
    def _func_time_utc(self, t):
        return _rfc3339(_parse_time(t).astimezone(timezone.utc))


_OPTIONS = jmespath.Options(custom_functions=_KyvernoFunctions())


def _go_regex(regex: str) -> str:
    return regex.replace("(?P<", "(?P<").replace("\\z", "\\Z")


def _rfc3339(t: datetime) -> str:
    s = t.replace(microsecond=0).isoformat()
    return s.replace("+00:00", "Z")


def _parse_time(s: str) -> datetime:
    t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _semver(v: str) -> tuple:
    core = v.lstrip("v").split("-")[0].split("+")[0]
    parts = [int(p) for p in core.split(".") if p.isdigit()]
    return tuple((parts + [0, 0, 0])[:3])


def _semver_satisfies(version: str, rng: str) -> bool:
    v = _semver(version)
    for clause in rng.split():
        m = re.match(r"^(>=|<=|>|<|=|!=)?(.+)$", clause)
        op, target = m.group(1) or "=", _semver(m.group(2))
        ok = {">=": v >= target, "<=": v <= target, ">": v > target, "<": v < target,
              "=": v == target, "!=": v != target}[op]
        if not ok:
            return False
    return True


def _arith(a, b, op: str):
    na, nb = (a if is_number(a) else None), (b if is_number(b) else None)
    if na is not None and nb is not None:
        x, y = Fraction(na), Fraction(nb)
        if op in "/%" and y == 0:
            raise VariableError("division by zero")
        r = {"+": x + y, "-": x - y, "*": x * y, "/": x / y, "%": x % y}[op]
        return float(r) if op == "/" else number_out(r)
    qa, qb = parse_quantity(a), parse_quantity(b)
    if qa is not None and qb is not None and (isinstance(a, str) or isinstance(b, str)):
        like = a if isinstance(a, str) else b
        if op in "/%" and qb == 0:
            raise VariableError("division by zero")
        if op == "/":
            return float(qa / qb) if isinstance(b, str) else format_quantity(qa / qb, like)
        if op == "*":
            return format_quantity(qa * qb, like)
        r = {"+": qa + qb, "-": qa - qb, "%": qa % qb}[op]
        return format_quantity(r, like)
    da = parse_duration(a, numbers_as_seconds=True)
    db = parse_duration(b, numbers_as_seconds=True)
    if da is not None and db is not None:
        if op in "/%" and db == 0:
            raise VariableError("division by zero")
        if op == "/":
            return float(da / db) if isinstance(b, str) else format_duration(da / db)
        r = {"+": da + db, "-": da - db, "*": da * db, "%": da % db}[op]
        return format_duration(r)
    raise VariableError(f"invalid operands for arithmetic: {a!r} {op} {b!r}")


def search(expression: str, data: dict):
    """Evaluate a JMESPath expression with Kyverno's functions."""
    try:
        return jmespath.search(expression.strip(), data, options=_OPTIONS)
    except jmespath.exceptions.ParseError as e:
        raise VariableError(f"failed to parse JMESPath {expression!r}: {e}") from e
    except jmespath.exceptions.JMESPathError as e:
        raise VariableError(f"JMESPath query {expression!r} failed: {e}") from e
    except VariableError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError, yaml.YAMLError) as e:
        raise VariableError(f"JMESPath query {expression!r} failed: {e}") from e


def resolve(expression: str, data: dict, *, missing_ok: bool = False):
    value = search(expression, data)
    if value is None and not missing_ok:
        raise VariableError(f"variable substitution failed: {{{{{expression.strip()}}}}} did not resolve")
    return value


def substitute(value, data: dict, *, missing_ok: bool = False):
    """Replace every ``{{ expr }}`` in strings anywhere inside ``value``.

    A string that is exactly one variable takes the variable's type; otherwise the value is
    written into the string (JSON for maps and lists). An unresolved variable raises
    VariableError unless ``missing_ok`` (then it becomes null, or "" inside a string).
    """
    if isinstance(value, dict):
        return {substitute(k, data, missing_ok=missing_ok): substitute(v, data, missing_ok=missing_ok)
                for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, data, missing_ok=missing_ok) for v in value]
    if not isinstance(value, str) or "{{" not in value:
        return value
    m = VARIABLE.fullmatch(value.strip())
    if m and value.strip() == value:
        return resolve(m.group(1), data, missing_ok=missing_ok)

    def one(match):
        got = resolve(match.group(1), data, missing_ok=missing_ok)
        return "" if got is None else to_text(got)

    out = VARIABLE.sub(one, value)
    return out.replace("\\{{", "{{")


__all__ = ["VariableError", "search", "resolve", "substitute", "parse_number", "VARIABLE"]
