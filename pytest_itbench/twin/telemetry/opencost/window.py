"""OpenCost's ``window`` and duration parameters, on the twin's clock (UTC, OpenCost's default offset).

``window`` takes what OpenCost's ``parseWindow`` takes:

- ``today``, ``yesterday``, ``week`` (Sunday 00:00 to now), ``lastweek``, ``month`` (the 1st to now),
  ``lastmonth``;
- ``<n>m|h|d|w``: the last n units *aligned to the unit*: ``1h`` at 10:20 is 10:00 to 11:00 (the current hour,
  its end in the future), ``2d`` is yesterday and today; ``<n>w`` ends at the end of today;
- ``<n><unit> offset <n><unit>``: the n units ending that long before now (not aligned);
- a pair of Unix seconds ``1586822400,1586908800`` (or with ``-``), or of RFC 3339 UTC times
  ``2020-04-01T00:00:00Z,2020-04-03T00:00:00Z``.

Anything else is refused with OpenCost's wording, ``illegal window: <text>``. Durations (``step``,
``resolution``) are Go durations with OpenCost's ``d`` and ``w`` units.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timezone

DAY = 86400.0
WEEK = 7 * DAY
_UNITS = {"m": 60.0, "h": 3600.0, "d": DAY, "w": WEEK}

_DURATION = re.compile(r"^(\d+)(m|h|d|w)$")
_DURATION_OFFSET = re.compile(r"^(\d+)(m|h|d|w) offset (\d+)(m|h|d|w)$")
_RFC3339 = r"\d\d\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ"
_RFC_PAIR = re.compile(f"({_RFC3339}),({_RFC3339})")  # unanchored, as OpenCost's
_UNIX_PAIR = re.compile(r"^(\d+)[,|-](\d+)$")


class WindowError(ValueError):
    pass


def parse_window(text: str, now: float) -> tuple[float, float]:
    """(start, end) in Unix seconds."""
    day = _floor(now, DAY)
    if text == "today":
        return day, day + DAY
    if text == "yesterday":
        return day - DAY, day
    weekday = (_utc(day).weekday() + 1) % 7  # Go's Weekday: Sunday is 0
    if text == "week":
        return day - weekday * DAY, now
    if text == "lastweek":
        start = day - (weekday + 7) * DAY
        return start, start + WEEK
    first = day - (_utc(day).day - 1) * DAY
    if text == "month":
        return first, now
    if text == "lastmonth":
        previous = first - DAY
        return previous - (_utc(previous).day - 1) * DAY, first
    match = _DURATION.match(text)
    if match:
        count, unit = int(match.group(1)), _UNITS[match.group(2)]
        if match.group(2) == "w":  # a week ends at the end of today
            return _floor(now - count * unit, DAY) + DAY, day + DAY
        end = _floor(now, unit) + unit
        return end - count * unit, end
    match = _DURATION_OFFSET.match(text)
    if match:
        end = now - int(match.group(3)) * _UNITS[match.group(4)]
        return end - int(match.group(1)) * _UNITS[match.group(2)], end
    match = _UNIX_PAIR.match(text)
    if match:
        return float(int(match.group(1))), float(int(match.group(2)))
    match = _RFC_PAIR.search(text)
    if match:
        return _rfc3339(match.group(1)), _rfc3339(match.group(2))
    raise WindowError(f"illegal window: {text}")


def _floor(t: float, unit: float) -> float:
    # Go's Time.Truncate counts from year 1, which is a whole number of days (and so of hours and minutes)
    # before the Unix epoch: truncating is flooring Unix seconds.
    return (t // unit) * unit


def _utc(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=timezone.utc)


def _rfc3339(text: str) -> float:
    return float(calendar.timegm(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").timetuple()))


_GO_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h|d|w)")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
             "d": DAY, "w": WEEK}


def parse_duration(text: str) -> float:
    """A Go duration with OpenCost's extra units (``90m``, ``1h30m``, ``1d``); raises ValueError."""
    body = text.strip()
    sign = -1.0 if body.startswith("-") else 1.0
    body = body.lstrip("+-")
    if body == "0":
        return 0.0
    if not body:
        raise ValueError(f"invalid duration {text!r}")
    total, pos = 0.0, 0
    for match in _GO_DURATION.finditer(body):
        if match.start() != pos or match.group(1) in ("", "."):
            raise ValueError(f"invalid duration {text!r}")
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    if pos != len(body):
        raise ValueError(f"invalid duration {text!r}")
    return sign * total


def format_rfc3339(t: float) -> str:
    """Go's ``time.RFC3339`` of a UTC time: whole seconds (a fraction is cut off), ``Z``."""
    return _utc(t // 1).strftime("%Y-%m-%dT%H:%M:%SZ")
