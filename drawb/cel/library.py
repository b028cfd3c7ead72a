"""CEL function implementations: standard, cel-go extensions and the Kubernetes libraries."""

from __future__ import annotations

import base64
import ipaddress
import math
import re
import urllib.parse
from typing import Any, Callable

import re2

from drawb.api.semver import Semver, SemverError
from drawb.cel.ast import Node, UInt
from drawb.cel.values import (
    INT64_MAX,
    INT64_MIN,
    OPTIONAL_NONE,
    UINT64_MAX,
    CelError,
    CelType,
    Duration,
    Optional,
    QuantityValue,
    SemverValue,
    Timestamp,
    compare,
    dispatch_error,
    equals,
    format_double,
    map_find,
    no_such_overload,
    quantity_of,
    type_name,
    type_value,
)

Impl = Callable[..., Any]
_FUNCS: dict[str, Impl] = {}


def fn(*names: str) -> Callable[[Impl], Impl]:
    """Register the decorated function as the implementation of the CEL functions `names`."""
    def register(impl: Impl) -> Impl:
        for name in names:
            _FUNCS[name] = impl
        return impl

    return register


def lookup(name: str, node: Node, spec: Any) -> Impl:
    """The implementation for a call node (receiver first for member calls)."""
    impl = _FUNCS.get(name)
    if impl is None:
        message = f"drawb does not evaluate the CEL function '{name}'"

        def unsupported(*_args: Any) -> Any:
            raise CelError(message)

        return unsupported
    return impl


def _str(v: Any) -> bool:
    return type(v) is str


def _int(v: Any) -> bool:
    return type(v) is int


# --- regular expressions (RE2, as cel-go) ---------------------------------------------------

_RE_CACHE: dict[str, Any] = {}
_RE_OPTIONS = re2.Options()
_RE_OPTIONS.log_errors = False


# RE2's error texts as Go's regexp/syntax words them (cel-go compiles patterns with Go's regexp).
_GO_REGEXP_ERRORS = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "missing (": "unexpected )",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "trailing \\": "trailing backslash at end of expression",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid repetition size": "invalid repeat count",
    "invalid UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
}


def _go_regexp_error(err: Exception) -> str:
    text = err.args[0] if err.args else str(err)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    code, _, arg = str(text).partition(": ")
    return f"error parsing regexp: {_GO_REGEXP_ERRORS.get(code, code)}: `{arg}`"


def compile_re(pattern: str) -> Any:
    """An RE2 pattern, compiled once; CelError with Go's regexp wording if it does not parse."""
    compiled = _RE_CACHE.get(pattern)
    if compiled is None:
        try:
            compiled = re2.compile(pattern, _RE_OPTIONS)
        except re2.error as err:
            raise CelError(_go_regexp_error(err)) from None
        if len(_RE_CACHE) > 4096:
            _RE_CACHE.clear()
        _RE_CACHE[pattern] = compiled
    return compiled


# --- standard library -----------------------------------------------------------------------


@fn("size")
def _size(v: Any) -> int:
    if isinstance(v, str):
        return len(v)
    if isinstance(v, (bytes, list, tuple, dict)):
        return len(v)
    raise dispatch_error("size", v)


@fn("contains")
def _str_contains(s: Any, sub: Any) -> bool:
    if _str(s) and _str(sub):
        return sub in s
    raise dispatch_error("contains", s, sub)


@fn("startsWith")
def _starts_with(s: Any, prefix: Any) -> bool:
    if _str(s) and _str(prefix):
        return s.startswith(prefix)
    raise dispatch_error("startsWith", s, prefix)


@fn("endsWith")
def _ends_with(s: Any, suffix: Any) -> bool:
    if _str(s) and _str(suffix):
        return s.endswith(suffix)
    raise dispatch_error("endsWith", s, suffix)


_SEARCH_CACHE: dict[tuple[str, str], Any] = {}


def _search(pattern: str, text: str) -> str | None:
    """The first match of an RE2 pattern in text (memoized: selectors repeat the same searches)."""
    key = (pattern, text)
    if key in _SEARCH_CACHE:
        return _SEARCH_CACHE[key]
    m = compile_re(pattern).search(text)
    found = m.group(0) if m else None
    if len(_SEARCH_CACHE) > 65536:
        _SEARCH_CACHE.clear()
    _SEARCH_CACHE[key] = found
    return found


@fn("matches")
def _matches(s: Any, pattern: Any) -> bool:
    if _str(s) and _str(pattern):
        return _search(pattern, s) is not None
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
    if _str(v):
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
    if _str(v):
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
    if _str(v):
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
    if _str(v):
        try:
            return float(v)
        except ValueError:
            raise CelError(f'strconv.ParseFloat: parsing "{v}": invalid syntax') from None
    raise dispatch_error("double", v)


@fn("string")
def _to_string(v: Any) -> str:
    if _str(v):
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
    if isinstance(v, _IP):
        return str(v.addr)
    if isinstance(v, _CIDR):
        return v.text
    raise dispatch_error("string", v)


@fn("bytes")
def _to_bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if _str(v):
        return v.encode("utf-8")
    raise dispatch_error("bytes", v)


# --- cel-go ext.Strings (version 2) ---------------------------------------------------------


@fn("charAt")
def _char_at(s: Any, i: Any) -> str:
    if not (_str(s) and _int(i)):
        raise dispatch_error("charAt", s, i)
    if i < 0 or i > len(s):
        raise CelError(f"index out of range: {i}")
    return s[i : i + 1]


@fn("indexOf")
def _index_of(s: Any, sub: Any, offset: Any = 0) -> int:
    if isinstance(s, (list, tuple)):
        for i, item in enumerate(s):
            if equals(item, sub):
                return i
        return -1
    if not (_str(s) and _str(sub) and _int(offset)):
        raise dispatch_error("indexOf", s, sub)
    if offset < 0 or offset > len(s):
        raise CelError(f"index out of range: {offset}")
    return s.find(sub, offset)


@fn("lastIndexOf")
def _last_index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if isinstance(s, (list, tuple)):
        for i in range(len(s) - 1, -1, -1):
            if equals(s[i], sub):
                return i
        return -1
    if not (_str(s) and _str(sub)):
        raise dispatch_error("lastIndexOf", s, sub)
    if offset is None:
        return s.rfind(sub)
    if offset < 0 or offset >= len(s) and len(s) > 0 or (len(s) == 0 and offset != 0):
        raise CelError(f"index out of range: {offset}")
    return s.rfind(sub, 0, offset + len(sub))


@fn("lowerAscii")
def _lower_ascii(s: Any) -> str:
    if not _str(s):
        raise dispatch_error("lowerAscii", s)
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in s)


@fn("upperAscii")
def _upper_ascii(s: Any) -> str:
    if not _str(s):
        raise dispatch_error("upperAscii", s)
    return "".join(c.upper() if "a" <= c <= "z" else c for c in s)


@fn("replace")
def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    if not (_str(s) and _str(old) and _str(new) and _int(n)):
        raise dispatch_error("replace", s, old, new)
    return s.replace(old, new, n if n >= 0 else -1)


@fn("split")
def _split(s: Any, sep: Any, n: Any = -1) -> list:
    if not (_str(s) and _str(sep) and _int(n)):
        raise dispatch_error("split", s, sep)
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = chars[: n - 1] + ["".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1) if n > 0 else s.split(sep)


@fn("substring")
def _substring(s: Any, start: Any, end: Any = None) -> str:
    if not (_str(s) and _int(start)):
        raise dispatch_error("substring", s, start)
    if end is None:
        end = len(s)
    if start < 0 or start > len(s):
        raise CelError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CelError(f"index out of range: {end}")
    if start > end:
        raise CelError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


_UNICODE_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


@fn("trim")
def _trim(s: Any) -> str:
    if not _str(s):
        raise dispatch_error("trim", s)
    return s.strip(_UNICODE_SPACE)


@fn("join")
def _join(items: Any, sep: Any = "") -> str:
    if not isinstance(items, (list, tuple)) or not _str(sep):
        raise dispatch_error("join", items, sep)
    for item in items:
        if not _str(item):
            raise no_such_overload(item)
    return sep.join(items)


@fn("strings.quote")
def _quote(s: Any) -> str:
    if not _str(s):
        raise dispatch_error("strings.quote", s)
    out = ['"']
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}  # fmt: skip
    for c in s:
        out.append(escapes.get(c, c))
    out.append('"')
    return "".join(out)


@fn("format")
def _string_format(s: Any, args: Any) -> str:
    if not (_str(s) and isinstance(args, (list, tuple))):
        raise dispatch_error("format", s, args)
    out, i, argi = [], 0, 0
    while i < len(s):
        c = s[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(s):
            raise CelError("unexpected end of string")
        if s[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if s[i] == ".":
            j = i + 1
            while j < len(s) and s[j].isdigit():
                j += 1
            precision = int(s[i + 1 : j] or 0)
            i = j
        verb = s[i]
        i += 1
        if argi >= len(args):
            raise CelError(f"index {argi} out of range")
        arg = args[argi]
        argi += 1
        out.append(_format_verb(verb, arg, precision))
    return "".join(out)


def _format_verb(verb: str, arg: Any, precision: int | None) -> str:
    if verb == "s":
        return _format_s(arg)
    if verb == "d":
        if type(arg) in (int, UInt):
            return str(int(arg))
        raise CelError(f"error during formatting: decimal clause can only be used on integers, was given {type_name(arg)}")
    if verb == "f":
        if type(arg) in (int, UInt, float):
            return f"{float(arg):.{6 if precision is None else precision}f}"
        raise CelError(f"error during formatting: fixed-point clause can only be used on doubles, was given {type_name(arg)}")
    if verb == "e":
        return f"{float(arg):.{6 if precision is None else precision}e}"
    if verb == "x":
        if type(arg) in (int, UInt):
            return format(int(arg), "x") if arg >= 0 else "-" + format(-int(arg), "x")
        if _str(arg):
            return arg.encode().hex()
        if isinstance(arg, bytes):
            return arg.hex()
    if verb == "X":
        return _format_verb("x", arg, precision).upper()
    if verb == "o" and type(arg) in (int, UInt):
        return format(int(arg), "o")
    if verb == "b":
        if type(arg) in (int, UInt):
            return format(int(arg), "b")
        if type(arg) is bool:
            return "1" if arg else "0"
    raise CelError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')


def _format_s(arg: Any) -> str:
    if isinstance(arg, (list, tuple)):
        return "[" + ", ".join(_format_s(a) for a in arg) + "]"
    if isinstance(arg, dict):
        items = sorted(((_format_s(k), _format_s(v)) for k, v in arg.items()))
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if arg is None:
        return "null"
    if isinstance(arg, CelType):
        return arg.name
    return _to_string(arg)


# --- sets, lists ----------------------------------------------------------------------------


def _in_list(item: Any, items: Any) -> bool:
    return any(equals(item, x) for x in items)


@fn("sets.contains")
def _sets_contains(a: Any, b: Any) -> bool:
    return all(_in_list(x, a) for x in b)


@fn("sets.equivalent")
def _sets_equivalent(a: Any, b: Any) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


@fn("sets.intersects")
def _sets_intersects(a: Any, b: Any) -> bool:
    return any(_in_list(x, b) for x in a)


@fn("lists.range")
def _lists_range(n: Any) -> list:
    return list(range(n))


@fn("slice")
def _list_slice(items: Any, start: Any, end: Any) -> list:
    if start < 0 or end < 0:
        raise CelError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CelError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


@fn("flatten")
def _flatten(items: Any, depth: Any = 1) -> list:
    if depth < 0:
        raise CelError("level must be non-negative")
    out: list = []
    for item in items:
        if isinstance(item, (list, tuple)) and depth > 0:
            out.extend(_flatten(item, depth - 1))
        else:
            out.append(item)
    return out


@fn("reverse")
def _reverse(items: Any) -> Any:
    if isinstance(items, (list, tuple)):
        return list(reversed(items))
    raise dispatch_error("reverse", items)


@fn("distinct")
def _distinct(items: Any) -> list:
    out: list = []
    for item in items:
        if not _in_list(item, out):
            out.append(item)
    return out


def _sort_key(items: list) -> Callable[[Any], Any]:
    import functools

    return functools.cmp_to_key(lambda a, b: compare(a, b, "sort"))


@fn("sort")
def _sort(items: Any) -> list:
    return sorted(items, key=_sort_key(items))


@fn("@sortByAssociatedKeys", "lists.@sortByAssociatedKeys")
def _sort_by_keys(items: Any, keys: Any) -> list:
    if len(items) != len(keys):
        raise CelError(f"@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {len(items)} and {len(keys)} elements respectively.")
    order = sorted(range(len(keys)), key=lambda i: _sort_key(keys)(keys[i]))
    return [items[i] for i in order]


@fn("cel.@mapInsert")
def _map_insert(m: Any, key: Any, value: Any = None) -> dict:
    out = dict(m)
    if isinstance(key, dict) and value is None:
        for k, v in key.items():
            if map_find(out, k)[0]:
                raise CelError(f"insert failed: key {k} already exists")
            out[k] = v
        return out
    if map_find(out, key)[0]:
        raise CelError(f"insert failed: key {key} already exists")
    out[key] = value
    return out


# Kubernetes lists library (version 0)


def _check_list(items: Any, name: str) -> None:
    if not isinstance(items, (list, tuple)):
        raise dispatch_error(name, items)


@fn("isSorted")
def _is_sorted(items: Any) -> bool:
    _check_list(items, "isSorted")
    for a, b in zip(items, items[1:]):
        if compare(a, b, "isSorted") > 0:
            return False
    return True


@fn("sum")
def _list_sum(items: Any) -> Any:
    from drawb.cel.operators import op_add

    _check_list(items, "sum")
    if not items:
        return 0
    total = items[0]
    for item in items[1:]:
        total = op_add(total, item)
    return total


@fn("min")
def _list_min(items: Any) -> Any:
    _check_list(items, "min")
    if not items:
        raise CelError("min called on empty list")
    best = items[0]
    for item in items[1:]:
        if compare(item, best, "min") < 0:
            best = item
    return best


@fn("max")
def _list_max(items: Any) -> Any:
    _check_list(items, "max")
    if not items:
        raise CelError("max called on empty list")
    best = items[0]
    for item in items[1:]:
        if compare(item, best, "max") > 0:
            best = item
    return best


# DRA `includes` (1.36+)

MAX_INCLUDES = 48


@fn("includes")
def _includes(receiver: Any, item: Any) -> bool:
    if isinstance(receiver, (list, tuple)):
        for i, elem in enumerate(receiver):
            if i >= MAX_INCLUDES:
                raise CelError(f"'includes' function cannot be applied to lists longer than {MAX_INCLUDES} values")
            if _equal_or_false(elem, item):
                return True
        return False
    return _equal_or_false(receiver, item)


def _equal_or_false(a: Any, b: Any) -> bool:
    try:
        return equals(a, b)
    except CelError:
        return False


# --- optional -------------------------------------------------------------------------------


@fn("optional.of")
def _optional_of(v: Any) -> Optional:
    return Optional(v)


@fn("optional.ofNonZeroValue")
def _optional_of_non_zero(v: Any) -> Optional:
    zero = v is None or v is False or (type(v) in (int, UInt, float) and v == 0) or (
        isinstance(v, (str, bytes, list, tuple, dict)) and len(v) == 0
    )
    return OPTIONAL_NONE if zero else Optional(v)


@fn("optional.none")
def _optional_none() -> Optional:
    return OPTIONAL_NONE


def _opt(v: Any, name: str) -> Optional:
    if not isinstance(v, Optional):
        raise dispatch_error(name, v)
    return v


@fn("hasValue")
def _has_value(v: Any) -> bool:
    return _opt(v, "hasValue").has_value


@fn("value")
def _opt_value(v: Any) -> Any:
    o = _opt(v, "value")
    if not o.has_value:
        raise CelError("optional.none() dereference")
    return o.value


@fn("or")
def _opt_or(v: Any, other: Any) -> Any:
    o = _opt(v, "or")
    return o if o.has_value else other


@fn("orValue")
def _opt_or_value(v: Any, other: Any) -> Any:
    o = _opt(v, "orValue")
    return o.value if o.has_value else other


@fn("first")
def _list_first(items: Any) -> Optional:
    return Optional(items[0]) if items else OPTIONAL_NONE


@fn("last")
def _list_last(items: Any) -> Optional:
    return Optional(items[-1]) if items else OPTIONAL_NONE


@fn("optional.unwrap", "unwrapOpt")
def _unwrap(items: Any) -> list:
    return [o.value for o in items if isinstance(o, Optional) and o.has_value]


# --- Kubernetes quantity and semver ---------------------------------------------------------


@fn("quantity")
def _quantity(s: Any) -> QuantityValue:
    if not _str(s):
        raise dispatch_error("quantity", s)
    return quantity_of(s)


@fn("isQuantity")
def _is_quantity(s: Any) -> bool:
    if not _str(s):
        raise dispatch_error("isQuantity", s)
    try:
        quantity_of(s)
    except CelError:
        return False
    return True


@fn("sign")
def _sign(q: Any) -> int:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("sign", q)
    return q.q.sign


@fn("asApproximateFloat")
def _as_approximate_float(q: Any) -> float:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("asApproximateFloat", q)
    return q.q.as_approximate_float()


@fn("asInteger")
def _as_integer(q: Any) -> int:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("asInteger", q)
    if not q.q.is_integer():
        raise CelError("cannot convert value to integer")
    return q.q.as_integer()


@fn("isInteger")
def _is_integer(q: Any) -> bool:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("isInteger", q)
    return q.q.is_integer()


def _arith(name: str, q: Any, other: Any) -> QuantityValue:
    if not isinstance(q, QuantityValue) or not (isinstance(other, QuantityValue) or type(other) is int):
        raise dispatch_error(name, q, other)
    operand = other.q if isinstance(other, QuantityValue) else other
    return QuantityValue(q.q.add(operand) if name == "add" else q.q.sub(operand), pointer=True)


@fn("add")
def _q_add(q: Any, other: Any) -> QuantityValue:
    return _arith("add", q, other)


@fn("sub")
def _q_sub(q: Any, other: Any) -> QuantityValue:
    return _arith("sub", q, other)


def _cmp_pair(name: str, a: Any, b: Any) -> int:
    if isinstance(a, QuantityValue) and isinstance(b, QuantityValue):
        return a.q.compare_to(b.q)
    if isinstance(a, SemverValue) and isinstance(b, SemverValue):
        return a.v.compare_to(b.v)
    raise dispatch_error(name, a, b)


@fn("isGreaterThan")
def _is_greater_than(a: Any, b: Any) -> bool:
    return _cmp_pair("isGreaterThan", a, b) == 1


@fn("isLessThan")
def _is_less_than(a: Any, b: Any) -> bool:
    return _cmp_pair("isLessThan", a, b) == -1


@fn("compareTo")
def _compare_to(a: Any, b: Any) -> int:
    return _cmp_pair("compareTo", a, b)


class _BadArguments(CelError):
    """A runtime argument no overload accepts (cel-go's type guard)."""


def _parse_semver(s: Any, normalize: Any, function: str, args: tuple) -> SemverValue:
    if not _str(s) or type(normalize) is not bool:
        raise _BadArguments(dispatch_error(function, *args).message)
    try:
        return SemverValue(Semver.parse(s, normalize))
    except SemverError as err:
        raise CelError(str(err)) from None


@fn("semver")
def _semver(s: Any, *normalize: Any) -> SemverValue:
    return _parse_semver(s, normalize[0] if normalize else False, "semver", (s, *normalize))


@fn("isSemver")
def _is_semver(s: Any, *normalize: Any) -> bool:
    try:
        _parse_semver(s, normalize[0] if normalize else False, "isSemver", (s, *normalize))
    except _BadArguments:
        raise
    except CelError:
        return False
    return True


def _semver_part(name: str) -> Impl:
    def part(v: Any) -> int:
        if not isinstance(v, SemverValue):
            raise dispatch_error(name, v)
        return getattr(v.v, name)

    return part


for _name in ("major", "minor", "patch"):
    _FUNCS[_name] = _semver_part(_name)


# --- Kubernetes regex -----------------------------------------------------------------------


@fn("find")
def _find(s: Any, pattern: Any) -> str:
    if not (_str(s) and _str(pattern)):
        raise dispatch_error("find", s, pattern)
    found = _search(pattern, s)
    return found if found is not None else ""


@fn("findAll")
def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list:
    if not (_str(s) and _str(pattern) and _int(limit)):
        raise dispatch_error("findAll", s, pattern)
    if limit == 0:
        return []
    out = [m.group(0) for m in compile_re(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


# --- Kubernetes URL, IP, CIDR ---------------------------------------------------------------


class _URL:
    cel_type_name = "kubernetes.URL"

    def __init__(self, parsed: urllib.parse.SplitResult) -> None:
        self.parsed = parsed


def _parse_url(s: str) -> _URL:
    parsed = urllib.parse.urlsplit(s)
    if not parsed.scheme and not s.startswith("/"):
        raise CelError(f"URL parse error during conversion from string: parse \"{s}\": invalid URI for request")
    return _URL(parsed)


@fn("url")
def _url(s: Any) -> _URL:
    return _parse_url(s)


@fn("isURL")
def _is_url(s: Any) -> bool:
    try:
        _parse_url(s)
    except (CelError, ValueError):
        return False
    return True


@fn("getScheme")
def _get_scheme(u: Any) -> str:
    return u.parsed.scheme


@fn("getHost")
def _get_host(u: Any) -> str:
    return u.parsed.netloc.rpartition("@")[2]


@fn("getHostname")
def _get_hostname(u: Any) -> str:
    host = _get_host(u)
    if host.startswith("["):
        return host[1 : host.index("]")]
    return host.rsplit(":", 1)[0] if ":" in host else host


@fn("getPort")
def _get_port(u: Any) -> str:
    host = _get_host(u)
    if host.startswith("["):
        rest = host[host.index("]") + 1 :]
        return rest[1:] if rest.startswith(":") else ""
    return host.rsplit(":", 1)[1] if ":" in host else ""


@fn("getEscapedPath")
def _get_escaped_path(u: Any) -> str:
    return u.parsed.path


@fn("getQuery")
def _get_query(u: Any) -> dict:
    return {k: v for k, v in urllib.parse.parse_qs(u.parsed.query, keep_blank_values=True).items()}


class _IP:
    cel_type_name = "net.IP"

    def __init__(self, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        self.addr = addr


class _CIDR:
    cel_type_name = "net.CIDR"

    def __init__(self, ip: Any, net: Any, text: str) -> None:
        self.ip, self.net, self.text = ip, net, text


def _parse_ip(s: str) -> _IP:
    if "%" in s:
        raise CelError(f"IP address with zone value is not allowed: {s}")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CelError(f"IP Address {s!r} parse error during conversion from string: ParseAddr({s!r}): unable to parse IP") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CelError("IPv4-mapped IPv6 address is not allowed")
    return _IP(addr)


@fn("ip")
def _ip(v: Any) -> _IP:
    if isinstance(v, _CIDR):
        return _IP(v.ip)
    return _parse_ip(v)


@fn("isIP")
def _is_ip(s: Any) -> bool:
    try:
        _parse_ip(s)
    except CelError:
        return False
    return True


@fn("ip.isCanonical")
def _ip_is_canonical(s: Any) -> bool:
    return str(_parse_ip(s).addr) == s


@fn("family")
def _family(v: Any) -> int:
    return v.addr.version


@fn("isUnspecified")
def _is_unspecified(v: Any) -> bool:
    return v.addr.is_unspecified


@fn("isLoopback")
def _is_loopback(v: Any) -> bool:
    return v.addr.is_loopback


@fn("isLinkLocalMulticast")
def _is_link_local_multicast(v: Any) -> bool:
    a = v.addr
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a.is_multicast and (a.packed[1] & 0x0F) == 2


@fn("isLinkLocalUnicast")
def _is_link_local_unicast(v: Any) -> bool:
    a = v.addr
    if a.version == 4:
        return a in ipaddress.ip_network("169.254.0.0/16")
    return a in ipaddress.ip_network("fe80::/10")


@fn("isGlobalUnicast")
def _is_global_unicast(v: Any) -> bool:
    a = v.addr
    if a.version == 4 and a == ipaddress.ip_address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or _is_link_local_unicast(v))


def _parse_cidr(s: str) -> _CIDR:
    try:
        addr_text, _, _ = s.partition("/")
        net = ipaddress.ip_network(s, strict=False)
        addr = ipaddress.ip_address(addr_text)
    except ValueError:
        raise CelError(f"network address parse error during conversion from string: netip.ParsePrefix({s!r}): bad prefix") from None
    return _CIDR(addr, net, s)


@fn("cidr")
def _cidr(s: Any) -> _CIDR:
    return _parse_cidr(s)


@fn("isCIDR")
def _is_cidr(s: Any) -> bool:
    try:
        _parse_cidr(s)
    except CelError:
        return False
    return True


@fn("containsIP")
def _contains_ip(c: Any, other: Any) -> bool:
    addr = _parse_ip(other).addr if _str(other) else other.addr
    return addr.version == c.net.version and addr in c.net


@fn("containsCIDR")
def _contains_cidr(c: Any, other: Any) -> bool:
    net = _parse_cidr(other).net if _str(other) else other.net
    return net.version == c.net.version and net.subnet_of(c.net)


@fn("prefixLength")
def _prefix_length(c: Any) -> int:
    return c.net.prefixlen


@fn("masked")
def _masked(c: Any) -> _CIDR:
    return _CIDR(c.net.network_address, c.net, str(c.net))


# --- Kubernetes format ----------------------------------------------------------------------

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


class _Format:
    cel_type_name = "kubernetes.NamedFormat"

    def __init__(self, name: str, check: Callable[[str], list[str]]) -> None:
        self.name, self.check = name, check


def _regex_check(pattern: re.Pattern, max_len: int | None, message: str) -> Callable[[str], list[str]]:
    def check(s: str) -> list[str]:
        errs = []
        if max_len is not None and len(s) > max_len:
            errs.append(f"must be no more than {max_len} characters")
        if not pattern.match(s):
            errs.append(message)
        return errs

    return check


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda s: check(s[:-1] if s.endswith("-") else s)


def _byte_check(s: str) -> list[str]:
    try:
        base64.b64decode(s, validate=True)
    except ValueError:
        return ["invalid base64"]
    return []


_LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
_FORMATS = {
    "dns1123Label": _regex_check(_DNS1123_LABEL, 63, _LABEL_MSG),
    "dns1123Subdomain": _regex_check(_DNS1123_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
    "dns1035Label": _regex_check(_DNS1035_LABEL, 63, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"),
    "qualifiedName": _regex_check(_QUALIFIED, 63, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "labelValue": _regex_check(_LABEL_VALUE, 63, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "uuid": _regex_check(_UUID, None, "does not match the UUID format"),
    "byte": _byte_check,
}  # fmt: skip
_FORMATS["dns1123LabelPrefix"] = _prefix(_FORMATS["dns1123Label"])
_FORMATS["dns1123SubdomainPrefix"] = _prefix(_FORMATS["dns1123Subdomain"])
_FORMATS["dns1035LabelPrefix"] = _prefix(_FORMATS["dns1035Label"])
_FORMATS["uri"] = lambda s: [] if _is_url(s) else ["invalid URI"]
_FORMATS["date"] = _regex_check(re.compile(r"\d{4}-\d{2}-\d{2}\Z"), None, "invalid date")
_FORMATS["datetime"] = _regex_check(
    re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"), None, "invalid datetime"
)

for _fname, _check in _FORMATS.items():
    _FUNCS[f"format.{_fname}"] = (lambda f: lambda: f)(_Format(_fname, _check))


@fn("format.named")
def _format_named(name: Any) -> Optional:
    check = _FORMATS.get(name)
    return Optional(_Format(name, check)) if check else OPTIONAL_NONE


@fn("validate")
def _validate(f: Any, s: Any) -> Optional:
    errs = f.check(s)
    return Optional(errs) if errs else OPTIONAL_NONE


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
    if _str(v):
        parsed = _parse_duration(v)
        if parsed is None:
            raise CelError("type conversion error from 'string' to 'google.protobuf.Duration'")
        return parsed
    raise dispatch_error("duration", v)


@fn("timestamp")
def _timestamp_of(v: Any) -> Timestamp:
    from drawb.cel.operators import timestamp_from_ns as _timestamp

    if isinstance(v, Timestamp):
        return v
    if type(v) is int:
        return _timestamp(v * 1_000_000_000)
    if _str(v):
        parsed = _parse_timestamp(v)
        if parsed is None:
            raise CelError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
        return _timestamp(parsed.ns)
    raise dispatch_error("timestamp", v)


def _datetime(ts: Timestamp, tz: Any = None) -> Any:
    import datetime as dt
    import zoneinfo

    zone: Any = dt.timezone.utc
    if tz is not None:
        if not _str(tz):
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

    _FUNCS[name] = getter


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
