"""When a CronJob's schedule fires, on the twin's clock.

The fields come from the API server's parser (``validation/cron_schedule``);
this module walks time forward as robfig/cron's ``SpecSchedule.Next`` does:
month, then day, then hour, then minute, in the schedule's time zone, with
days stepped on the calendar and hours and minutes on the absolute clock (so a
daylight-saving change skips or repeats wall-clock hours as it does upstream).
A schedule that never fires within five years has no next time.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..apiserver.validation.cron_schedule import Schedule, parse

UTC = timezone.utc
SEARCH_YEARS = 5  # robfig gives up (and returns the zero time) after this many years


class UnknownTimeZone(ValueError):
    """A time zone Go's time.LoadLocation does not know; the text is its message."""


def load_zone(name: str | None) -> tzinfo:
    """The zone for a CronJob's ``timeZone`` (none, "" and "UTC" are UTC; kube-controller-manager runs in UTC)."""
    if not name or name in ("UTC", "Local"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UnknownTimeZone(f"unknown time zone {name}") from None


class CronSchedule:
    def __init__(self, spec: str, zone: tzinfo = UTC):
        """``spec`` as in a CronJob (a ``TZ=`` prefix wins over ``zone``); raises ScheduleError or UnknownTimeZone."""
        self.schedule: Schedule = parse(spec)
        self.zone = load_zone(self.schedule.time_zone) if self.schedule.time_zone else zone

    def next(self, t: float) -> float | None:
        """The first firing strictly after ``t`` (whole seconds), or None if there is none within five years."""
        if self.schedule.every is not None:
            return math.floor(t) + self.schedule.every
        moment = datetime.fromtimestamp(math.floor(t) + 1, self.zone)
        year_limit = moment.year + SEARCH_YEARS
        spec = self.schedule
        # Until the first step, the moment keeps its finer fields; after it, each loop starts at the unit's beginning.
        stepped = False
        while moment.year <= year_limit:
            if moment.month not in spec.month.values:
                moment = self._local(moment.year + moment.month // 12, moment.month % 12 + 1, 1)
                stepped = True
                continue
            if not self._day_matches(moment):
                if not stepped:
                    moment = self._local(moment.year, moment.month, moment.day)
                    stepped = True
                moment = self._next_day(moment)
                continue
            if moment.hour not in spec.hour.values:
                if not stepped:
                    moment = self._local(moment.year, moment.month, moment.day, moment.hour)
                    stepped = True
                moment = _add(moment, 3600, self.zone)
                continue
            if moment.minute not in spec.minute.values:
                if not stepped:
                    moment = moment.replace(second=0)
                    stepped = True
                moment = _add(moment, 60, self.zone)
                continue
            if moment.second != 0:  # five-field schedules fire on second 0
                moment = _add(moment, 60 - moment.second, self.zone)
                stepped = True
                continue
            return moment.timestamp()
        return None

    def _day_matches(self, moment: datetime) -> bool:
        dom, dow = self.schedule.day_of_month, self.schedule.day_of_week
        in_month = moment.day in dom.values
        in_week = moment.isoweekday() % 7 in dow.values
        if dom.star or dow.star:
            return in_month and in_week
        return in_month or in_week

    def _local(self, year: int, month: int, day: int, hour: int = 0) -> datetime:
        # Round trip through UTC, so a wall-clock time a DST change skips is normalised as Go's time.Date does.
        return datetime(year, month, day, hour, tzinfo=self.zone).astimezone(UTC).astimezone(self.zone)

    def _next_day(self, moment: datetime) -> datetime:
        day = moment.date() + timedelta(days=1)
        moment = self._local(day.year, day.month, day.day, moment.hour)
        # A DST change at midnight moves the hour: back to midnight, as robfig does.
        if moment.hour != 0:
            moment = _add(moment, (24 - moment.hour if moment.hour > 12 else -moment.hour) * 3600, self.zone)
        return moment


def _add(moment: datetime, seconds: float, zone: tzinfo) -> datetime:
    """``moment`` plus ``seconds`` of elapsed time (Python's aware arithmetic would add wall-clock time)."""
    return (moment.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(zone)
