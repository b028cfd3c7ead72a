"""cel-go's optional types library: optional.of, optional.none, hasValue, value, or, orValue, first, last, unwrap."""

from __future__ import annotations

from typing import Any

from drawb.cel.ast import UInt
from drawb.cel.library._registry import fn
from drawb.cel.values import (
    OPTIONAL_NONE,
    CelError,
    Optional,
    dispatch_error,
)


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


@fn("optional.unwrap", aliases=("unwrapOpt",))
def _unwrap(items: Any) -> list:
    return [o.value for o in items if isinstance(o, Optional) and o.has_value]
