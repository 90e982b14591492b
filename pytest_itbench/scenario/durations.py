"""Durations in scenario files: a number of seconds, or text like ``90s``, ``15m``, ``1h30m``."""

from __future__ import annotations

import re
from typing import Any

_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_SECONDS = re.compile(r"^\d+(?:\.\d+)?$")


def parse_duration(value: Any) -> float:
    """Seconds from ``90``, ``"90"`` (a command line gives text), ``"90s"``, ``"15m"``, ``"1h30m"``."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or text like 90s, 15m or 1h30m")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ValueError("a duration must be positive")
        return float(value)
    if isinstance(value, str) and _SECONDS.match(value.strip()) and float(value) > 0:
        return float(value)
    if isinstance(value, str):
        match = _DURATION.match(value.strip())
        if match and any(match.groups()):
            hours, minutes, seconds = (int(g or 0) for g in match.groups())
            total = hours * 3600 + minutes * 60 + seconds
            if total > 0:
                return float(total)
    raise ValueError(f"{value!r} is not a duration: write a number of seconds or text like 90s, 15m or 1h30m")




