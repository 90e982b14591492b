"""Quantities as the behaviour sheets and Chaos Mesh write them: Go durations, byte sizes, CPU cores."""

from __future__ import annotations

import re

from .. import quantity

# Go's time.ParseDuration units, in seconds.
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration (``55s``, ``20000ms``, ``1h30m``, ``1.5s``); raises ValueError as Go words it."""
    if not isinstance(text, str):
        if text == 0 and not isinstance(text, bool):
            return 0.0
        raise ValueError(f'time: missing unit in duration "{text}"')
    original = text
    text = text.strip()
    sign = 1.0
    if text[:1] in "+-":
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ValueError(f'time: invalid duration "{original}"')
    total, position = 0.0, 0
    while position < len(text):
        match = _GO_PART.match(text, position)
        if match is None:
            if re.match(r"\d+(?:\.\d*)?$", text[position:]):
                raise ValueError(f'time: missing unit in duration "{original}"')
            raise ValueError(f'time: invalid duration "{original}"')
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        position = match.end()
    return sign * total


def parse_bytes(text: str | int | float) -> int:
    """A byte size as a Kubernetes quantity (``64Mi``, ``1G``) or a plain number."""
    return int(quantity.value(text))


def parse_cores(text: str | int | float) -> float:
    """CPU cores as a Kubernetes quantity (``200m``, ``1.5``)."""
    return float(quantity.value(text))


_STRESS_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(%|[KMGTP]i?B?|B)?$", re.IGNORECASE)
_STRESS_UNITS = {"": 1, "b": 1, "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12, "pb": 10 ** 15,
                 "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4, "p": 1024 ** 5,
                 "kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3, "tib": 1024 ** 4, "pib": 1024 ** 5,
                 "ki": 1024, "mi": 1024 ** 2, "gi": 1024 ** 3, "ti": 1024 ** 4, "pi": 1024 ** 5}


def parse_stress_size(text: str, total: int) -> int:
    """A Chaos Mesh memory stressor's ``size`` (``256MB``, ``1GB``, ``85%`` of ``total``) in bytes."""
    match = _STRESS_SIZE.match(text.strip())
    if match is None:
        raise ValueError(f"invalid memory size {text!r}")
    amount, unit = float(match.group(1)), (match.group(2) or "").lower()
    if unit == "%":
        return int(total * amount / 100)
    return int(amount * _STRESS_UNITS[unit])
