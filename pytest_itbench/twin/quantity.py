"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource): parsing and canonical text.

Values are kept as exact fractions so that ``250m`` CPU or ``64Mi`` of memory
round-trip without float error; :func:`format_decimal` and
:func:`format_binary` write a value the way ``Quantity.String()`` does for
the DecimalSI and BinarySI formats.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_SUFFIX = {power: suffix for suffix, power in _BINARY.items()}
_SYNTAX = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?")


def parse(text: str | int | float) -> Fraction:
    """The exact value of a quantity such as ``500m``, ``1.5``, ``64Mi`` or ``1e3``."""
    if isinstance(text, bool):
        raise ValueError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    match = _SYNTAX.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}")
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return number * 1024 ** _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * Fraction(10) ** _DECIMAL[suffix]


def format_decimal(value: Fraction | int) -> str:
    """DecimalSI text: the mantissa stripped of trailing zeros, with an exponent that is a multiple of 3.

    Values finer than a nanounit are rounded up to one, as Kubernetes does.
    """
    value = Fraction(value)
    if value == 0:
        return "0"
    nanos = math.ceil(value * 10 ** 9)
    mantissa, exponent = nanos, -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10 ** shift
    exponent -= shift
    suffix = _DECIMAL_SUFFIX.get(exponent)
    return f"{mantissa}{suffix}" if suffix is not None else f"{mantissa}e{exponent}"


def format_binary(value: Fraction | int) -> str:
    """BinarySI text: powers of 1024 when the value is a whole multiple of them, else DecimalSI."""
    value = Fraction(value)
    if -1024 < value < 1024 or value.denominator != 1:
        return format_decimal(value)
    amount, power = int(value), 0
    while amount % 1024 == 0 and power < 6:
        amount //= 1024
        power += 1
    return f"{amount}{_BINARY_SUFFIX.get(power, '')}"


def format_go_duration(seconds: float) -> str:
    """A duration as Go's ``time.Duration.String()`` writes it: ``15s``, ``1m0s``, ``1.5s``, ``250ms``."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 10 ** 9:
        for unit, size in (("ms", 10 ** 6), ("µs", 10 ** 3), ("ns", 1)):
            if nanos >= size:
                return sign + _trim(nanos, size) + unit
    hours, rest = divmod(nanos, 3600 * 10 ** 9)
    minutes, rest = divmod(rest, 60 * 10 ** 9)
    text = _trim(rest, 10 ** 9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(amount: int, unit: int) -> str:
    whole, fraction = divmod(amount, unit)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
