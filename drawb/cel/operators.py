"""CEL's operators with cel-go's semantics, as functions of evaluated operands.

Arithmetic, indexing, membership, ordering and the logical operators: the per-device interpreter
(`interp`), the vectorized evaluator (`vector`) and the library functions that need them share these.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from drawb.cel.ast import UInt
from drawb.cel.values import (
    INT64_MAX,
    INT64_MIN,
    OPTIONAL_NONE,
    UINT64_MAX,
    CelError,
    DefaultMap,
    Duration,
    Optional,
    Timestamp,
    compare,
    equals,
    key_text,
    map_find,
    no_such_overload,
    type_name,
)


# --- arithmetic -----------------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return type(v) is int


def _check_int(v: int) -> int:
    if v < INT64_MIN or v > INT64_MAX:
        raise CelError("integer overflow")
    return v


def _check_uint(v: int) -> UInt:
    if v < 0 or v > UINT64_MAX:
        raise CelError("unsigned integer overflow")
    return UInt(v)


def _same_kind(a: Any, b: Any) -> bool:
    return type(a) is type(b) or (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)))


_NS_MIN, _NS_MAX = -(1 << 63), (1 << 63) - 1
# timestamps between 0001-01-01 and 9999-12-31T23:59:59 (cel-go's range), in Unix seconds
_TS_MIN_S, _TS_MAX_S = -62135596800, 253402300799


def _duration(ns: int) -> Duration:
    if ns < _NS_MIN or ns > _NS_MAX:
        raise CelError("duration overflow")
    return Duration(ns)


def timestamp_from_ns(ns: int) -> Timestamp:
    if ns // 1_000_000_000 < _TS_MIN_S or ns // 1_000_000_000 > _TS_MAX_S:
        raise CelError("timestamp overflow")
    return Timestamp(ns)


def _time_arith(a: Any, b: Any, subtract: bool) -> Any:
    if isinstance(a, Duration) and isinstance(b, Duration):
        return _duration(a.ns - b.ns if subtract else a.ns + b.ns)
    if isinstance(a, Timestamp) and isinstance(b, Duration):
        return timestamp_from_ns(a.ns - b.ns if subtract else a.ns + b.ns)
    if not subtract and isinstance(a, Duration) and isinstance(b, Timestamp):
        return timestamp_from_ns(a.ns + b.ns)
    if subtract and isinstance(a, Timestamp) and isinstance(b, Timestamp):
        return _duration(a.ns - b.ns)
    raise no_such_overload(b)


def op_add(a: Any, b: Any) -> Any:
    """`_+_` with cel-go's overflow and type errors."""
    if isinstance(a, (Duration, Timestamp)):
        return _time_arith(a, b, False)
    if type(a) is int:
        if type(b) is not int:
            raise no_such_overload(b)
        return _check_int(a + b)
    if type(a) is UInt:
        if type(b) is not UInt:
            raise no_such_overload(b)
        return _check_uint(a + b)
    if isinstance(a, (float, str, bytes, list, tuple)) and not isinstance(a, bool):
        if not _same_kind(a, b):
            raise no_such_overload(b)
        if isinstance(a, (list, tuple)):
            return list(a) + list(b)
        return a + b
    raise CelError("no such overload: _+_")


def op_sub(a: Any, b: Any) -> Any:
    """`_-_` with cel-go's overflow and type errors."""
    if isinstance(a, (Duration, Timestamp)):
        return _time_arith(a, b, True)
    if type(a) is int:
        if type(b) is not int:
            raise no_such_overload(b)
        return _check_int(a - b)
    if type(a) is UInt:
        if type(b) is not UInt:
            raise no_such_overload(b)
        return _check_uint(a - b)
    if type(a) is float:
        if type(b) is not float:
            raise no_such_overload(b)
        return a - b
    raise CelError("no such overload: _-_")


def op_mul(a: Any, b: Any) -> Any:
    """`_*_` with cel-go's overflow and type errors."""
    if type(a) is int:
        if type(b) is not int:
            raise no_such_overload(b)
        return _check_int(a * b)
    if type(a) is UInt:
        if type(b) is not UInt:
            raise no_such_overload(b)
        return _check_uint(a * b)
    if type(a) is float:
        if type(b) is not float:
            raise no_such_overload(b)
        return a * b
    raise CelError("no such overload: _*_")


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def op_div(a: Any, b: Any) -> Any:
    """`_/_` (integer division truncates) with cel-go's overflow and type errors."""
    if type(a) is int:
        if type(b) is not int:
            raise no_such_overload(b)
        if b == 0:
            raise CelError("division by zero")
        return _check_int(_trunc_div(a, b))
    if type(a) is UInt:
        if type(b) is not UInt:
            raise no_such_overload(b)
        if b == 0:
            raise CelError("division by zero")
        return UInt(a // b)
    if type(a) is float:
        if type(b) is not float:
            raise no_such_overload(b)
        if b == 0:
            if a == 0 or math.isnan(a):
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    raise CelError("no such overload: _/_")


def op_mod(a: Any, b: Any) -> Any:
    """`_%_` with cel-go's overflow and type errors."""
    if type(a) is int:
        if type(b) is not int:
            raise no_such_overload(b)
        if b == 0:
            raise CelError("modulus by zero")
        return a - _trunc_div(a, b) * b
    if type(a) is UInt:
        if type(b) is not UInt:
            raise no_such_overload(b)
        if b == 0:
            raise CelError("modulus by zero")
        return UInt(a % b)
    raise CelError("no such overload: _%_")


def op_neg(a: Any) -> Any:
    """`-_` with cel-go's overflow and type errors."""
    if isinstance(a, Duration):
        return _duration(-a.ns)
    if type(a) is int:
        return _check_int(-a)
    if type(a) is float:
        return -a
    raise CelError("no such overload: -_")


def op_not(a: Any) -> Any:
    """`!_` with cel-go's overflow and type errors."""
    if type(a) is bool:
        return not a
    raise CelError("no such overload: !_")


def _index_of_list(lst: Any, idx: Any) -> Any:
    if type(idx) is int or type(idx) is UInt:
        i = int(idx)
    elif type(idx) is float:
        if not idx.is_integer() or not math.isfinite(idx):
            raise CelError(f"unsupported index value {key_text(idx)} in list")
        i = int(idx)
    else:
        raise CelError(f"unsupported index type '{type_label(idx)}' in list")
    if 0 <= i < len(lst):
        return lst[i]
    raise CelError(f"index out of bounds: {key_text(idx)}")


def type_label(v: Any) -> str:
    from drawb.cel.values import type_name

    return type_name(v)


def index(container: Any, key: Any) -> Any:
    """`container[key]` / `container.key` with cel-go's attribute resolution errors."""
    if isinstance(container, dict):
        found, value = map_find(container, key)
        if found:
            return value
        raise CelError(f"no such key: {key_text(key)}")
    if isinstance(container, (list, tuple)):
        return _index_of_list(container, key)
    raise CelError(f"no such key: {key_text(key)}")


def has_field(container: Any, key: str) -> bool:
    """`has(container.key)`: true on the outer device maps for any domain (a missing domain is `{}`)."""
    if isinstance(container, DefaultMap):
        return True
    if isinstance(container, dict):
        return map_find(container, key)[0]
    raise CelError(f"no such key: {key}")


def contains(container: Any, item: Any) -> bool:
    """`item in container`."""
    if isinstance(container, (list, tuple)):
        err = None
        for elem in container:
            try:
                if equals(elem, item):
                    return True
            except CelError as e:
                err = err or e
        if err:
            raise err
        return False
    if isinstance(container, dict):
        if isinstance(container, DefaultMap):
            return isinstance(item, str) and item in container
        return map_find(container, item)[0]
    raise CelError(f"no such overload: @in({type_name(item)}, {type_name(container)})")


# --- logical operators over evaluated operands (values or CelError) ---------------------------


def _logical(left: Any, right: Any, absorbing: bool, operator: str) -> bool:
    """`_&&_` (absorbing False) or `_||_` (absorbing True) over evaluated operands, cel-go's semantics."""
    if left is absorbing or right is absorbing:
        return absorbing
    if left is (not absorbing) and right is (not absorbing):
        return not absorbing
    if isinstance(left, CelError):
        raise left
    if isinstance(right, CelError):
        raise right
    raise CelError(f"no such overload: {operator}")


def logical_and(left: Any, right: Any) -> bool:
    """`_&&_` over evaluated operands (values or CelError), cel-go's absorbing semantics."""
    return _logical(left, right, False, "_&&_")


def logical_or(left: Any, right: Any) -> bool:
    """`_||_` over evaluated operands (values or CelError)."""
    return _logical(left, right, True, "_||_")


def conditional(cond: Any, then: Any, other: Any) -> Any:
    """`_?_:_` over evaluated operands; only the chosen branch's error matters."""
    if isinstance(cond, CelError):
        raise cond
    if cond is True:
        chosen = then
    elif cond is False:
        chosen = other
    else:
        raise no_such_overload(cond)
    if isinstance(chosen, CelError):
        raise chosen
    return chosen


def not_strictly_false(value: Any) -> bool:
    """`@not_strictly_false`: the loop condition of `all`/`exists` (errors count as true)."""
    return value is not False


def _ordered(function: str, test: Callable[[int], bool]) -> Callable[[Any, Any], bool]:
    def order(a: Any, b: Any) -> bool:
        r = compare(a, b, function)
        return r != 2 and test(r)

    return order


def _opt_index(v: Any, key: Any) -> Any:
    if isinstance(v, Optional):
        if not v.has_value:
            return OPTIONAL_NONE
        v = v.value
    if isinstance(v, dict):
        found, value = map_find(v, key)
        return Optional(value) if found else OPTIONAL_NONE
    if isinstance(v, (list, tuple)):
        try:
            return Optional(_index_of_list(v, key))
        except CelError:
            return OPTIONAL_NONE
    raise CelError(f"no such key: {key_text(key)}")


# Strict operators as functions of evaluated operands: shared by the closures and the vectorized path.
STRICT_OPERATORS: dict[str, Callable[..., Any]] = {
    "_==_": equals,
    "_!=_": lambda a, b: not equals(a, b),
    "_<_": _ordered("_<_", lambda r: r < 0),
    "_<=_": _ordered("_<=_", lambda r: r <= 0),
    "_>_": _ordered("_>_", lambda r: r > 0),
    "_>=_": _ordered("_>=_", lambda r: r >= 0),
    "_[_]": index,
    "_?._": _opt_index,
    "_[?_]": _opt_index,
    "@in": lambda item, container: contains(container, item),
    "_+_": op_add,
    "_-_": op_sub,
    "_*_": op_mul,
    "_/_": op_div,
    "_%_": op_mod,
    "-_": op_neg,
    "!_": op_not,
}
