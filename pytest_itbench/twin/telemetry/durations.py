"""Prometheus' duration text (``model.Duration``): ``5m``, ``1h30m``, ``2d``; as rule files write it.

Rule files parse ``for``, ``keep_firing_for``, ``interval`` and
``query_offset`` with it, and expressions print their ranges with it.
"""

from __future__ import annotations

import re

_UNITS = (("y", 365 * 24 * 3600_000), ("w", 7 * 24 * 3600_000), ("d", 24 * 3600_000), ("h", 3600_000),
          ("m", 60_000), ("s", 1000), ("ms", 1))
_DURATION = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
_MAX_MILLIS = (2 ** 63 - 1) // 1_000_000  # model.Duration is int64 nanoseconds


def parse_duration(text: str) -> float:
    """Seconds of a ``model.Duration``; raises ValueError with Prometheus' message."""
    if text == "":
        raise ValueError("empty duration string")
    if text == "0":
        return 0.0
    m = _DURATION.match(text)
    if m is None or not any(m.groups()):
        raise ValueError(f'not a valid duration string: "{text}"')
    millis = 0
    for (_, size), amount in zip(_UNITS, m.groups()):
        if amount:
            millis += int(amount) * size
            if millis > _MAX_MILLIS:
                raise ValueError(f'not a valid duration string: "{text}"')
    return millis / 1000


def format_duration(seconds: float) -> str:
    """``model.Duration.String()``: years and weeks only when exact (``90d``, not ``12w6d``)."""
    millis = round(seconds * 1000)
    if millis == 0:
        return "0s"
    sign = "-" if millis < 0 else ""
    millis = abs(millis)
    out = []
    for unit, size in _UNITS:
        if unit in ("y", "w") and millis % size:
            continue
        amount, millis = divmod(millis, size)
        if amount:
            out.append(f"{amount}{unit}")
    return sign + "".join(out)
