"""CronJob schedules as robfig/cron's standard parser reads them (the parser kube-apiserver and the CronJob
controller share).

Five fields (minute hour day-of-month month day-of-week), a descriptor such as
``@hourly``, or ``@every <duration>``, optionally after ``TZ=<zone>`` or
``CRON_TZ=<zone>``. :func:`parse` gives the expanded fields for the
controller; :func:`schedule_error` gives the parser's message for a schedule
it refuses, for validation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MONTHS = {name: i for i, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                             "nov", "dec"), start=1)}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (min, max, names) per field, in order.
_BOUNDS = ((0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))
# Descriptors are shorthands for five-field schedules.
_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
                "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_DURATION = re.compile(r"([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+")
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class ScheduleError(ValueError):
    """A schedule the parser refuses; the text is the parser's message."""


@dataclass(frozen=True)
class Field:
    values: frozenset[int]
    star: bool  # written as * or ? (without a step above 1): day-of-month and day-of-week then combine with AND


@dataclass(frozen=True)
class Schedule:
    minute: Field | None = None
    hour: Field | None = None
    day_of_month: Field | None = None
    month: Field | None = None
    day_of_week: Field | None = None
    every: int | None = None  # seconds, for @every
    time_zone: str | None = None  # from a TZ= or CRON_TZ= prefix


def parse(spec: str) -> Schedule:
    """The schedule ``spec`` describes; raises :class:`ScheduleError` with the parser's message."""
    if not spec:
        raise ScheduleError("empty spec string")
    time_zone = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        prefix, _, spec = spec.partition(" ")
        time_zone = prefix.partition("=")[2]
        spec = spec.strip()
    if spec.startswith("@"):
        if spec.startswith("@every "):
            return Schedule(every=_every_seconds(spec), time_zone=time_zone)
        if spec not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    parsed = [_field(text, low, high, names) for text, (low, high, names) in zip(fields, _BOUNDS)]
    return Schedule(*parsed, time_zone=time_zone)


def schedule_error(spec: str) -> str | None:
    """Why ``spec`` is not a valid schedule, or None."""
    try:
        parse(spec)
    except ScheduleError as exc:
        return str(exc)
    return None


def _every_seconds(spec: str) -> int:
    duration = spec[len("@every "):]
    if not _DURATION.fullmatch(duration) or duration in ("", "."):
        raise ScheduleError(f'failed to parse duration {spec}: time: invalid duration "{duration}"')
    seconds = sum(float(number or 0) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(duration))
    return max(int(seconds), 1)  # robfig keeps whole seconds, at least one


def _field(text: str, low: int, high: int, names: dict | None) -> Field:
    values: set[int] = set()
    star = False
    for expr in (part for part in text.split(",") if part):
        expanded, expr_star = _range(expr, low, high, names)
        values |= expanded
        star = star or expr_star
    return Field(frozenset(values), star)


def _range(expr: str, low: int, high: int, names: dict | None) -> tuple[set[int], bool]:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    star = low_and_high[0] in ("*", "?")
    if star:
        start, end = low, high
    else:
        try:
            start = _int_or_name(low_and_high[0], names)
            if len(low_and_high) == 1:
                end = start
            elif len(low_and_high) == 2:
                end = _int_or_name(low_and_high[1], names)
            else:
                raise ScheduleError(f"too many hyphens: {expr}")
        except ValueError as exc:
            raise ScheduleError(str(exc)) from None
    if len(range_and_step) == 2:
        try:
            step = _int(range_and_step[1])
        except ValueError as exc:
            raise ScheduleError(str(exc)) from None
        if len(low_and_high) == 1 and not star:
            end = high  # "N/step" means "N-max/step"
        if step > 1:
            star = False
    elif len(range_and_step) > 2:
        raise ScheduleError(f"too many slashes: {expr}")
    else:
        step = 1
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _int_or_name(text: str, names: dict | None) -> int:
    if names and text.lower() in names:
        return names[text.lower()]
    return _int(text)


def _int(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    number = int(text)
    if number < 0:
        raise ValueError(f"negative number ({number}) not allowed: {text}")
    return number
