"""Quantities as a printer shows them: Quantity.String(), which keeps the kind of suffix the value was
written with (binary ``Ki``..``Ei``, decimal ``n``..``E``, or an ``e`` exponent) in canonical form."""

from __future__ import annotations

import re

from ... import quantity

_EXPONENT_SUFFIX = re.compile(r"[eE][+-]?\d+$")

_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_EXPONENTS = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def canonical(text: str | int | float) -> str:
    """``1.5`` is ``1500m``, ``2048Ki`` is ``2Mi``, ``1.5e3`` is ``1500``; text that does not parse stays as it is."""
    try:
        value = quantity.parse(text)
    except ValueError:
        return str(text)
    written = str(text).strip()
    if written.endswith(_BINARY_SUFFIXES):
        return quantity.format_binary(value)
    decimal = quantity.format_decimal(value)
    if not _EXPONENT_SUFFIX.search(written):
        return decimal
    # Written with an exponent: the same mantissa, with e3 (e6, e-3...) in place of k (M, m...).
    suffix = decimal.lstrip("-0123456789")
    return decimal[:len(decimal) - len(suffix)] + (f"e{_EXPONENTS[suffix]}" if suffix in _EXPONENTS else suffix)
