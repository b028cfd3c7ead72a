"""Durations and timestamps: parsing as Go's time package, arithmetic, comparison, getters, strings."""

from __future__ import annotations

import pytest

from drawb.cel.selector import evaluate_expression
from drawb.cel.values import CelError

TS = 'timestamp("2024-03-01T00:00:00Z")'


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ('duration("1h") > duration("59m")', True),
        ('duration("1.5s") == duration("1500ms")', True),
        ('duration("1h30m") == duration("90m")', True),
        ('string(duration("90m"))', "5400s"),
        ('string(duration("1ns"))', "0.000000001s"),
        ('string(timestamp("2024-01-02T03:04:05.120Z"))', "2024-01-02T03:04:05.12Z"),
        ('timestamp("2024-01-01T00:00:00+01:00") < timestamp("2024-01-01T00:00:00Z")', True),
        (f'{TS} + duration("24h") == timestamp("2024-03-02T00:00:00Z")', True),
        (f'{TS} - timestamp("2024-02-28T00:00:00Z") == duration("48h")', True),
        (f"{TS}.getFullYear()", 2024),
        (f"{TS}.getMonth()", 2),
        (f"{TS}.getDayOfYear()", 60),
        (f"{TS}.getDayOfMonth()", 0),
        (f"{TS}.getDate()", 1),
        (f"{TS}.getDayOfWeek()", 5),
        (f'{TS}.getHours("+05:30")', 5),
        (f'{TS}.getFullYear("America/New_York")', 2024),
        ('timestamp("2024-01-01T00:00:00Z").getFullYear("America/New_York")', 2023),
        ('duration("-1.5h").getMinutes()', -90),
        ('int(timestamp("1970-01-01T00:01:00Z"))', 60),
        ("timestamp(60) == timestamp(\"1970-01-01T00:01:00Z\")", True),
    ],
)
def test_values(expression, value):
    got = evaluate_expression(expression, stored=True)
    assert type(got) is type(value) and got == value


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('duration(dyn("1x"))', "type conversion error from 'string' to 'google.protobuf.Duration'"),
        ('timestamp(dyn("2024"))', "type conversion error from 'string' to 'google.protobuf.Timestamp'"),
        ('timestamp("9999-12-31T23:59:59Z") + duration("1s")', "timestamp overflow"),
        ('duration("2562047h") + duration("2562047h")', "duration overflow"),
    ],
)
def test_errors(expression, message):
    with pytest.raises(CelError) as info:
        evaluate_expression(expression, stored=True)
    assert info.value.message == message
