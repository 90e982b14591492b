"""CronJob schedules, checked as the API server checks them (robfig/cron's standard parser).

Five fields (minute hour day-of-month month day-of-week) or a descriptor
such as ``@hourly``; :func:`schedule_error` returns the parser's message for
a schedule it refuses.
"""

from __future__ import annotations

import re

_MONTHS = {name: i for i, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                             "nov", "dec"), start=1)}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (min, max, names) per field, in order.
_BOUNDS = ((0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_DURATION = re.compile(r"([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+")


def schedule_error(spec: str) -> str | None:
    """Why ``spec`` is not a valid schedule, or None."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        _, _, spec = spec.partition(" ")
        spec = spec.strip()
    if spec.startswith("@"):
        return _descriptor_error(spec)
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, (low, high, names) in zip(fields, _BOUNDS):
        for expr in (part for part in text.split(",") if part):
            problem = _range_error(expr, low, high, names)
            if problem:
                return problem
    return None


def _descriptor_error(spec: str) -> str | None:
    if spec in _DESCRIPTORS:
        return None
    if spec.startswith("@every "):
        duration = spec[len("@every "):]
        if not _DURATION.fullmatch(duration) or duration in ("", "."):
            return f'failed to parse duration {spec}: time: invalid duration "{duration}"'
        return None
    return f"unrecognized descriptor: {spec}"


def _range_error(expr: str, low: int, high: int, names: dict | None) -> str | None:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = low, high
    else:
        try:
            start = _int_or_name(low_and_high[0], names)
            if len(low_and_high) == 1:
                end = start
            elif len(low_and_high) == 2:
                end = _int_or_name(low_and_high[1], names)
            else:
                return f"too many hyphens: {expr}"
        except ValueError as exc:
            return str(exc)
    if len(range_and_step) == 2:
        try:
            step = _int(range_and_step[1])
        except ValueError as exc:
            return str(exc)
        if len(low_and_high) == 1 and low_and_high[0] not in ("*", "?"):
            end = high  # "N/step" means "N-max/step"
    elif len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    else:
        step = 1
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    if step == 0:
        return f"step of range should be a positive number: {expr}"
    return None


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
