"""Scalar helpers shared by patterns, conditions and JMESPath functions.

Kubernetes quantities (``500m``, ``1Gi``, ``2e3``), Go durations (``1h30m``, ``300ms``),
Kyverno's ``*``/``?`` wildcards, and the string form Kyverno gives a value before it
matches it against a string pattern.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": Fraction(1, 10**9),
    "us": Fraction(1, 10**6),
    "µs": Fraction(1, 10**6),
    "μs": Fraction(1, 10**6),
    "ms": Fraction(1, 1000),
    "s": Fraction(1),
    "m": Fraction(60),
    "h": Fraction(3600),
}


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_number(value) -> Fraction | None:
    """A JSON number, or a string holding a plain decimal number."""
    if is_number(value):
        return Fraction(value)
    if isinstance(value, str):
        s = value.strip()
        if re.fullmatch(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", s):
            return Fraction(s)
    return None


@lru_cache(maxsize=4096)
def _parse_quantity_str(s: str) -> Fraction | None:
    m = _QUANTITY.match(s.strip())
    if not m:
        return None
    number, exponent, suffix = m.groups()
    base = Fraction(number)
    if exponent:
        return base * Fraction(10) ** int(exponent[1:])
    suffix = suffix or ""
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix]


def parse_quantity(value) -> Fraction | None:
    """A Kubernetes resource quantity as an exact number, or None."""
    if is_number(value):
        return Fraction(value)
    if isinstance(value, str) and value.strip():
        return _parse_quantity_str(value)
    return None


@lru_cache(maxsize=4096)
def _parse_duration_str(s: str) -> Fraction | None:
    s = s.strip()
    if not s:
        return None
    sign = 1
    if s[0] in "+-":
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return Fraction(0)
    pos, total = 0, Fraction(0)
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            return None
        total += Fraction(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        return None
    return sign * total


def parse_duration(value, *, numbers_as_seconds: bool = False) -> Fraction | None:
    """A Go duration string (``1h30m``) in seconds, or None."""
    if is_number(value):
        return Fraction(value) if numbers_as_seconds else None
    if isinstance(value, str):
        return _parse_duration_str(value)
    return None


def format_quantity(q: Fraction, like: str = "") -> str:
    """Write a quantity back, in the binary or decimal family of ``like``."""
    binary = any(like.endswith(s) for s in _BINARY)
    if binary:
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            scaled = q / _BINARY[suffix]
            if scaled.denominator == 1 and scaled != 0:
                return f"{scaled.numerator}{suffix}"
    for suffix in ("E", "P", "T", "G", "M", "k", "", "m", "u", "n"):
        scaled = q / _DECIMAL[suffix]
        if scaled.denominator == 1 and (scaled != 0 or suffix == ""):
            return f"{scaled.numerator}{suffix}"
    return str(float(q))


def format_duration(seconds: Fraction) -> str:
    """A duration in Go's ``time.Duration.String()`` shape (``1h30m0s``)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds < 1:
        for unit, scale in (("ms", Fraction(1, 1000)), ("µs", Fraction(1, 10**6)), ("ns", Fraction(1, 10**9))):
            if seconds >= scale:
                return f"{sign}{_trim(seconds / scale)}{unit}"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = sign
    if hours:
        out += f"{int(hours)}h"
    if hours or minutes:
        out += f"{int(minutes)}m"
    return out + f"{_trim(secs)}s"


def _trim(x: Fraction) -> str:
    if x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):.9f}".rstrip("0").rstrip(".")


def number_out(x: Fraction):
    """A Fraction as the JSON number a Go engine would produce."""
    if x.denominator == 1:
        return int(x.numerator)
    return float(x)


@lru_cache(maxsize=4096)
def _wildcard_regex(pattern: str) -> re.Pattern:
    parts = []
    for ch in pattern:
        if ch == "*":
            parts.append(".*")
        elif ch == "?":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def wildcard_match(pattern: str, text: str) -> bool:
    """Kyverno's wildcard match: ``*`` any run of characters, ``?`` exactly one."""
    if "*" not in pattern and "?" not in pattern:
        return pattern == text
    return _wildcard_regex(pattern).fullmatch(text) is not None


def has_wildcard(s: str) -> bool:
    return "*" in s or "?" in s


def to_text(value) -> str:
    """The string form of a value, as Kyverno prints it before a string comparison."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
