"""Resource quantities exactly as kube-apiserver decodes, compares and prints them.

A quantity (``500m``, ``1.5``, ``64Mi``, ``1e3``) keeps the *format* it was
written in: decimal SI suffixes, binary SI suffixes or a decimal exponent.
The server stores the value and prints it back in canonical form for that
format, so ``0.5`` reads back as ``500m``, ``1024Mi`` as ``1Gi`` and
``1000m`` as ``1`` (k8s.io/apimachinery/pkg/api/resource). Parse errors carry
the upstream messages, which the API server returns verbatim.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_ERROR = "unable to parse quantity's suffix"
NUMERIC_ERROR = "unable to parse numeric part of quantity"

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {0: "", **{power // 10: suffix for suffix, power in _BINARY_SUFFIXES.items()}}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = Fraction(1, 10 ** 9)
_MILLI = Fraction(1, 1000)
# The largest value a BinarySI quantity may hold; bigger ones are capped (as upstream's maxAllowed).
_MAX_BINARY = Fraction(2 ** 63 - 1)


class QuantityError(ValueError):
    """Text that is not a quantity; ``str()`` is the API server's message."""


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    format: str

    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    def rounded_up_to_milli(self) -> "Quantity":
        """The value rounded away from zero to a thousandth, as resource lists are defaulted."""
        return Quantity(Fraction(_round_away(self.value / _MILLI), 1000), self.format)

    @property
    def milli_value(self) -> int:
        scaled = self.value * 1000
        return -((-scaled.numerator) // scaled.denominator)


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Quantity:
    """Parse quantity text (surrounding blanks allowed, as in a JSON body); raises QuantityError."""
    text = text.strip()
    if not text:
        raise QuantityError(FORMAT_ERROR)
    negative, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    digits = num + denom
    if not digits.isdigit():
        raise QuantityError(NUMERIC_ERROR)
    value = Fraction(int(digits), 10 ** len(denom)) * Fraction(base) ** exponent
    value = _round_away(value / _NANO) * _NANO
    if fmt == BINARY_SI and value > _MAX_BINARY:
        value = _MAX_BINARY
    return Quantity(-value if negative else value, fmt)


def from_json(value) -> Quantity:
    """A quantity from a decoded JSON value: a string, or a bare number as Go reads it."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise QuantityError(FORMAT_ERROR)
    return parse(value if isinstance(value, str) else repr(value))


def canonical(text: str) -> str:
    return str(parse(text))


def printable(text) -> str:
    """Canonical text for display; text that is not a quantity is shown as written."""
    try:
        return canonical(str(text))
    except QuantityError:
        return str(text)


def value(text: str | int | float) -> Fraction:
    """The exact value of a quantity written as text, or of a plain number (cores, bytes)."""
    if isinstance(text, bool):
        raise QuantityError(FORMAT_ERROR)
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    return parse(text).value


def format_decimal(amount: Fraction | int) -> str:
    """DecimalSI text of a computed value (e.g. an average), rounded up to a nanounit as upstream rounds."""
    return _canonical(_up_to_nano(Fraction(amount)), DECIMAL_SI)


def format_binary(amount: Fraction | int) -> str:
    """BinarySI text of a computed value (whole multiples of 1024 get a binary suffix)."""
    return _canonical(_up_to_nano(Fraction(amount)), BINARY_SI)


def _up_to_nano(amount: Fraction) -> Fraction:
    return Fraction(math.ceil(amount * 10 ** 9), 10 ** 9)


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as quantity ``a`` is less than, equal to or more than ``b``."""
    x, y = parse(a).value, parse(b).value
    return (x > y) - (x < y)


# ---- parsing ------------------------------------------------------------------------------------

def _split(text: str) -> tuple[bool, str, str, str]:
    """Sign, integer digits, fraction digits and suffix, scanning as parseQuantityString does."""
    pos, end = 0, len(text)
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return negative, "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_ERROR)
    return negative, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:]), DECIMAL_EXPONENT
        except ValueError:
            pass
    raise QuantityError(SUFFIX_ERROR)


def _round_away(value: Fraction) -> int:
    """Round to an integer away from zero (values finer than a nanounit become one nanounit)."""
    if value.denominator == 1:
        return value.numerator
    magnitude = -((-abs(value.numerator)) // value.denominator)
    return magnitude if value > 0 else -magnitude


# ---- printing ----------------------------------------------------------------------------------

def _canonical(value: Fraction, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        amount, power = abs(value.numerator), 0
        while amount % 1024 == 0:
            amount //= 1024
            power += 1
        sign = "-" if value < 0 else ""
        return f"{sign}{amount}{_BINARY_BY_POWER[power]}"
    mantissa, exponent = _decimal_parts(value)
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    suffix = _DECIMAL_BY_EXPONENT.get(exponent)
    return f"{mantissa}{suffix}" if suffix is not None else f"{mantissa}e{exponent}"


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """Mantissa and a power-of-ten exponent that is a multiple of 3, with no spare factors of ten."""
    exponent = 0
    while value.denominator != 1:
        value *= 10
        exponent -= 1
    mantissa = value.numerator
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    return mantissa * 10 ** shift, exponent - shift
