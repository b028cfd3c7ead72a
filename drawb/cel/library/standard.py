"""CEL's standard library as cel-go evaluates it: size, contains, startsWith, endsWith, matches, the
type conversions, duration and timestamp with their getters, and the ordering operators' declarations.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

from drawb.cel.ast import UInt
from drawb.cel.decls import B, CIDR, D, I, IP, S, T, U
from drawb.cel.library._registry import declare, fn, implement, is_str
from drawb.cel.library.ip import CIDRValue, IPValue
from drawb.cel.library.regex import search
from drawb.cel.operators import timestamp_from_ns
from drawb.cel.values import (
    INT64_MAX,
    INT64_MIN,
    UINT64_MAX,
    CelError,
    CelType,
    Duration,
    Timestamp,
    dispatch_error,
    format_double,
    type_value,
)


@fn("size")
def _size(v: Any) -> int:
    if isinstance(v, str):
        return len(v)
    if isinstance(v, (bytes, list, tuple, dict)):
        return len(v)
    raise dispatch_error("size", v)


@fn("contains")
def _str_contains(s: Any, sub: Any) -> bool:
    if is_str(s) and is_str(sub):
        return sub in s
    raise dispatch_error("contains", s, sub)


@fn("startsWith")
def _starts_with(s: Any, prefix: Any) -> bool:
    if is_str(s) and is_str(prefix):
        return s.startswith(prefix)
    raise dispatch_error("startsWith", s, prefix)


@fn("endsWith")
def _ends_with(s: Any, suffix: Any) -> bool:
    if is_str(s) and is_str(suffix):
        return s.endswith(suffix)
    raise dispatch_error("endsWith", s, suffix)


@fn("matches")
def _matches(s: Any, pattern: Any) -> bool:
    if is_str(s) and is_str(pattern):
        return search(pattern, s) is not None
    raise dispatch_error("matches", s, pattern)


@fn("dyn")
def _dyn(v: Any) -> Any:
    return v


@fn("type")
def _type_of(v: Any) -> CelType:
    return type_value(v)


@fn("bool")
def _to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if is_str(v):
        if v in ("1", "t", "T", "TRUE", "true", "True"):
            return True
        if v in ("0", "f", "F", "FALSE", "false", "False"):
            return False
        raise CelError("type conversion error from 'string' to 'bool'")
    raise dispatch_error("bool", v)


_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def _format_seconds(ns: int) -> str:
    """Go's `strconv.FormatFloat(d.Seconds(), 'f', -1, 64)`."""
    from decimal import Decimal

    text = format(Decimal(repr(ns / 1e9)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _format_timestamp(ts: Timestamp) -> str:
    """RFC 3339 with nanoseconds, trailing zeros trimmed (Go's RFC3339Nano)."""
    when, nanos = _datetime(ts)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


@fn("int")
def _to_int(v: Any) -> int:
    if type(v) is int:
        return v
    if isinstance(v, Timestamp):
        return v.ns // 1_000_000_000
    if isinstance(v, Duration):
        return v.ns
    if type(v) is UInt:
        if v > INT64_MAX:
            raise CelError("integer overflow")
        return int(v)
    if type(v) is float:
        if math.isnan(v) or v <= -9.223372036854776e18 or v >= 9.223372036854776e18:
            raise CelError("integer overflow")
        return int(v)
    if is_str(v):
        if not _GO_INT.match(v):
            raise CelError(f'strconv.ParseInt: parsing "{v}": invalid syntax')
        i = int(v)
        if i < INT64_MIN or i > INT64_MAX:
            raise CelError(f'strconv.ParseInt: parsing "{v}": value out of range')
        return i
    raise dispatch_error("int", v)


@fn("uint")
def _to_uint(v: Any) -> UInt:
    if type(v) is UInt:
        return v
    if type(v) is int:
        if v < 0:
            raise CelError("unsigned integer overflow")
        return UInt(v)
    if type(v) is float:
        if math.isnan(v) or v < 0 or v >= 1.8446744073709552e19:
            raise CelError("unsigned integer overflow")
        return UInt(int(v))
    if is_str(v):
        if not re.fullmatch(r"\+?[0-9]+", v):
            raise CelError(f'strconv.ParseUint: parsing "{v}": invalid syntax')
        i = int(v)
        if i > UINT64_MAX:
            raise CelError(f'strconv.ParseUint: parsing "{v}": value out of range')
        return UInt(i)
    raise dispatch_error("uint", v)


@fn("double")
def _to_double(v: Any) -> float:
    if type(v) is float:
        return v
    if type(v) in (int, UInt):
        return float(v)
    if is_str(v):
        try:
            return float(v)
        except ValueError:
            raise CelError(f'strconv.ParseFloat: parsing "{v}": invalid syntax') from None
    raise dispatch_error("double", v)


@fn("string", ("int64_to_string", [I], S, False), ("uint64_to_string", [U], S, False), ("double_to_string", [D], S, False), ("bytes_to_string", [T.BYTES], S, False), ("string_to_string", [S], S, False), ("bool_to_string", [B], S, False), ("timestamp_to_string", [T.TIMESTAMP], S, False), ("duration_to_string", [T.DURATION], S, False), ("ip_to_string", [IP], S, False), ("cidr_to_string", [CIDR], S, False))
def to_string(v: Any) -> str:
    if is_str(v):
        return v
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) in (int, UInt):
        return str(int(v))
    if type(v) is float:
        return format_double(v)
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelError("invalid UTF-8 in bytes, cannot convert to string") from None
    if isinstance(v, Duration):
        return _format_seconds(v.ns) + "s"
    if isinstance(v, Timestamp):
        return _format_timestamp(v)
    if isinstance(v, IPValue):
        return str(v.addr)
    if isinstance(v, CIDRValue):
        return v.text
    raise dispatch_error("string", v)


@fn("bytes")
def _to_bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if is_str(v):
        return v.encode("utf-8")
    raise dispatch_error("bytes", v)


# --- durations and timestamps ---------------------------------------------------------------

_DURATION_UNITS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
                   "m": 60_000_000_000, "h": 3_600_000_000_000}  # fmt: skip
_DURATION_PART = re.compile(r"(\d*)(?:\.(\d*))?([a-z\u00b5\u03bc]+)")
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})\Z")


def _parse_duration(text: str) -> Duration | None:
    """Go's `time.ParseDuration`; None if it does not parse."""
    s = text
    sign = -1 if s.startswith("-") else 1
    s = s[1:] if s[:1] in "+-" else s
    if s == "0":
        return Duration(0)
    if not s:
        return None
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None or (not m.group(1) and not m.group(2)) or m.group(3) not in _DURATION_UNITS:
            return None
        unit = _DURATION_UNITS[m.group(3)]
        whole = int(m.group(1) or 0) * unit
        frac = m.group(2) or ""
        if frac:
            whole += int(frac) * unit // 10 ** len(frac)
        total += whole
        pos = m.end()
    total *= sign
    if total < -(1 << 63) or total > (1 << 63) - 1:
        return None
    return Duration(total)


def _parse_timestamp(text: str) -> Timestamp | None:
    import datetime as dt

    m = _RFC3339.match(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    try:
        base = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    ns = int(base.timestamp()) * 1_000_000_000 + int(((m.group(7) or "") + "000000000")[:9])
    zone = m.group(8)
    if zone != "Z":
        offset = (int(zone[1:3]) * 60 + int(zone[4:6])) * 60 * 1_000_000_000
        ns -= offset if zone[0] == "+" else -offset
    return Timestamp(ns)


@fn("duration")
def _duration_of(v: Any) -> Duration:
    if isinstance(v, Duration):
        return v
    if is_str(v):
        parsed = _parse_duration(v)
        if parsed is None:
            raise CelError("type conversion error from 'string' to 'google.protobuf.Duration'")
        return parsed
    raise dispatch_error("duration", v)


@fn("timestamp")
def _timestamp_of(v: Any) -> Timestamp:
    if isinstance(v, Timestamp):
        return v
    if type(v) is int:
        return timestamp_from_ns(v * 1_000_000_000)
    if is_str(v):
        parsed = _parse_timestamp(v)
        if parsed is None:
            raise CelError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
        return timestamp_from_ns(parsed.ns)
    raise dispatch_error("timestamp", v)


def _datetime(ts: Timestamp, tz: Any = None) -> Any:
    import datetime as dt
    import zoneinfo

    zone: Any = dt.timezone.utc
    if tz is not None:
        if not is_str(tz):
            raise dispatch_error("timezone", tz)
        m = re.fullmatch(r"([+-]?)(\d{2}):(\d{2})", tz)
        if m:
            delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
            zone = dt.timezone(-delta if m.group(1) == "-" else delta)
        else:
            try:
                zone = zoneinfo.ZoneInfo(tz)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise CelError(f"unknown time zone {tz}") from None
    seconds, nanos = divmod(ts.ns, 1_000_000_000)
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).astimezone(zone), nanos


def _time_getter(name: str, on_timestamp: Callable[[Any, int], int], on_duration: Callable[[int], int] | None) -> None:
    def getter(v: Any, *tz: Any) -> int:
        if isinstance(v, Timestamp):
            when, nanos = _datetime(v, *tz)
            return on_timestamp(when, nanos)
        if isinstance(v, Duration) and on_duration is not None and not tz:
            return on_duration(v.ns)
        raise dispatch_error(name, v, *tz)

    implement(name, getter)


def _trunc(ns: int, unit: int) -> int:
    q = abs(ns) // unit
    return q if ns >= 0 else -q


_time_getter("getFullYear", lambda t, n: t.year, None)
_time_getter("getMonth", lambda t, n: t.month - 1, None)
_time_getter("getDayOfYear", lambda t, n: t.timetuple().tm_yday - 1, None)
_time_getter("getDayOfMonth", lambda t, n: t.day - 1, None)
_time_getter("getDate", lambda t, n: t.day, None)
_time_getter("getDayOfWeek", lambda t, n: (t.weekday() + 1) % 7, None)
_time_getter("getHours", lambda t, n: t.hour, lambda ns: _trunc(ns, 3_600_000_000_000))
_time_getter("getMinutes", lambda t, n: t.minute, lambda ns: _trunc(ns, 60_000_000_000))
_time_getter("getSeconds", lambda t, n: t.second, lambda ns: _trunc(ns, 1_000_000_000))
_time_getter("getMilliseconds", lambda t, n: n // 1_000_000, lambda ns: _trunc(ns, 1_000_000) % 1000 if ns >= 0 else -(_trunc(-ns, 1_000_000) % 1000))


# Ordering with cel.CrossTypeNumericComparisons(true), which the C++ checker's standard library lacks
# (its own `_<_`, `_<=_`, `_>_`, `_>=_` are excluded); the operators themselves are in drawb.cel.operators.
_SCALAR = [("bool", B), ("int64", I), ("uint64", U), ("double", D), ("string", S), ("bytes", T.BYTES),
           ("timestamp", T.TIMESTAMP), ("duration", T.DURATION)]  # fmt: skip
_NUMERIC = [("int64", I), ("uint64", U), ("double", D)]
for _op, _prefix in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
    declare(_op, *[(f"{_prefix}_{n}", [t, t], B, False) for n, t in _SCALAR],
            *[(f"{_prefix}_{a}_{b}", [ta, tb], B, False) for a, ta in _NUMERIC for b, tb in _NUMERIC if a != b])
