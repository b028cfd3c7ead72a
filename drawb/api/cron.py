"""A CronJob's ``schedule``, read as kube-controller-manager reads it (``robfig/cron`` v3's standard parser).

Five fields (minute, hour, day of month, month, day of week), each a comma-separated list of ``*`` (or
``?``), a number, a range ``a-b``, any of them with a ``/step``; months and weekdays also by their
three-letter English names (``JAN``, ``SUN``); weekdays 0-6, Sunday 0. The descriptors ``@yearly``
(``@annually``), ``@monthly``, ``@weekly``, ``@daily`` (``@midnight``), ``@hourly`` and ``@every <duration>``
stand for what robfig/cron makes of them. As there, when the day of month or the day of week is a plain ``*``
or ``?`` a day must match both; when both are restricted, either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 6))
_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                            "nov", "dec"))}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
                "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_MAX_YEARS = 5  # robfig/cron gives up looking for a matching time five years ahead


class ScheduleError(ValueError):
    """A schedule robfig/cron's standard parser refuses."""


@dataclass(frozen=True)
class Schedule:
    """When a schedule fires: the matching minutes, hours, days, months and weekdays (or a fixed period)."""

    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    any_day: bool = False  # day of month or day of week is a plain * or ?: a day matches both
    every: float = 0.0  # @every: seconds between runs

    def next_after(self, moment: datetime) -> datetime | None:
        """The first time after ``moment`` (whole seconds) the schedule fires; None within five years."""
        if self.every:
            return moment.replace(microsecond=0) + timedelta(seconds=self.every)
        t = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = t.year + _MAX_YEARS
        while t.year <= limit:
            if t.month not in self.months:
                t = (t.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
            elif not self._day_matches(t):
                t = t.replace(hour=0, minute=0) + timedelta(days=1)
            elif t.hour not in self.hours:
                t = t.replace(minute=0) + timedelta(hours=1)
            elif t.minute not in self.minutes:
                t += timedelta(minutes=1)
            else:
                return t
        return None

    def _day_matches(self, t: datetime) -> bool:
        in_month = t.day in self.days
        in_week = (t.weekday() + 1) % 7 in self.weekdays
        return in_month and in_week if self.any_day else in_month or in_week


@lru_cache(maxsize=256)
def parse(schedule: str) -> Schedule:
    """The schedule ``schedule`` stands for; ScheduleError (worded as robfig/cron words it) if it is not one."""
    text = schedule.strip()
    if text.startswith("@every "):
        return Schedule(every=_go_seconds(text[len("@every "):].strip(), text))
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {text}")
        text = _DESCRIPTORS[text]
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {text}")
    sets, stars = [], []
    for value, (_, low, high) in zip(fields, _FIELDS, strict=True):
        names = _MONTHS if high == 12 else _DAYS if high == 6 else {}
        parsed, star = _field(value, low, high, names)
        sets.append(frozenset(parsed))
        stars.append(star)
    return Schedule(*sets, any_day=stars[2] or stars[4])


def _field(value: str, low: int, high: int, names: dict[str, int]) -> tuple[set[int], bool]:
    found: set[int] = set()
    star = False
    for part in value.split(","):
        values, part_star = _range(part, low, high, names)
        found |= values
        star = star or part_star
    return found, star


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> tuple[set[int], bool]:
    range_part, _, step_part = expr.partition("/")
    bounds = range_part.split("-")
    star = bounds[0] in ("*", "?")
    if star:
        if len(bounds) > 1:
            raise ScheduleError(f"too many hyphens: {expr}")
        start, end = low, high
    else:
        start = _number(bounds[0], names, expr)
        if len(bounds) == 1:
            end = start
        elif len(bounds) == 2:
            end = _number(bounds[1], names, expr)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    step = 1
    if "/" in expr:
        step = _number(step_part, {}, expr)
        if len(bounds) == 1 and not star:
            end = high  # "N/step" means "N-max/step"
        if step > 1:
            star = False
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step)), star


def _number(text: str, names: dict[str, int], expr: str) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise ScheduleError(f"failed to parse int from {text}: {expr}" if text else f"empty value in {expr}")
    return int(text)


def _go_seconds(text: str, schedule: str) -> float:
    """A Go duration (``1h30m``, ``90s``) in whole seconds, cut as robfig/cron cuts it (at least 1)."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ScheduleError(f"failed to parse duration {schedule}: time: invalid duration {text!r}")
    seconds = sum(float(n) * _GO_UNITS[u] for n, u in parts)
    return max(1.0, float(int(seconds)))
