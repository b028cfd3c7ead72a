"""The Kubernetes quantity library: quantity(), isQuantity, sign, add, sub, asInteger, ... and the comparisons.

`isGreaterThan`, `isLessThan` and `compareTo` are shared with the semver library; drawb dispatches by
name, so their one implementation (quantities and semvers) is here and `semver` declares its overloads.
"""

from __future__ import annotations

from typing import Any

from drawb.cel.decls import B, D, I, QUANTITY, S
from drawb.cel.library._registry import constant_cost, fn, is_str, string_arg_cost
from drawb.cel.values import (
    CelError,
    QuantityValue,
    SemverValue,
    dispatch_error,
    quantity_of,
)


@fn("quantity", ("string_to_quantity", [S], QUANTITY, False), cost=string_arg_cost)
def _quantity(s: Any) -> QuantityValue:
    if not is_str(s):
        raise dispatch_error("quantity", s)
    return quantity_of(s)


@fn("isQuantity", ("is_quantity_string", [S], B, False), cost=string_arg_cost)
def _is_quantity(s: Any) -> bool:
    if not is_str(s):
        raise dispatch_error("isQuantity", s)
    try:
        quantity_of(s)
    except CelError:
        return False
    return True


@fn("sign", ("quantity_sign", [QUANTITY], I, False), cost=constant_cost)
def _sign(q: Any) -> int:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("sign", q)
    return q.q.sign


@fn("asApproximateFloat", ("quantity_get_float", [QUANTITY], D, True), cost=constant_cost)
def _as_approximate_float(q: Any) -> float:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("asApproximateFloat", q)
    return q.q.as_approximate_float()


@fn("asInteger", ("quantity_get_int", [QUANTITY], I, True), cost=constant_cost)
def _as_integer(q: Any) -> int:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("asInteger", q)
    if not q.q.is_integer():
        raise CelError("cannot convert value to integer")
    return q.q.as_integer()


@fn("isInteger", ("quantity_is_integer", [QUANTITY], B, True), cost=constant_cost)
def _is_integer(q: Any) -> bool:
    if not isinstance(q, QuantityValue):
        raise dispatch_error("isInteger", q)
    return q.q.is_integer()


def _arith(name: str, q: Any, other: Any) -> QuantityValue:
    if not isinstance(q, QuantityValue) or not (isinstance(other, QuantityValue) or type(other) is int):
        raise dispatch_error(name, q, other)
    operand = other.q if isinstance(other, QuantityValue) else other
    return QuantityValue(q.q.add(operand) if name == "add" else q.q.sub(operand), pointer=True)


@fn("add", ("quantity_add", [QUANTITY, QUANTITY], QUANTITY, True), ("quantity_add_int", [QUANTITY, I], QUANTITY, True), cost=constant_cost)
def _q_add(q: Any, other: Any) -> QuantityValue:
    return _arith("add", q, other)


@fn("sub", ("quantity_sub", [QUANTITY, QUANTITY], QUANTITY, True), ("quantity_sub_int", [QUANTITY, I], QUANTITY, True), cost=constant_cost)
def _q_sub(q: Any, other: Any) -> QuantityValue:
    return _arith("sub", q, other)


def _cmp_pair(name: str, a: Any, b: Any) -> int:
    if isinstance(a, QuantityValue) and isinstance(b, QuantityValue):
        return a.q.compare_to(b.q)
    if isinstance(a, SemverValue) and isinstance(b, SemverValue):
        return a.v.compare_to(b.v)
    raise dispatch_error(name, a, b)


@fn("isGreaterThan", ("quantity_is_greater_than", [QUANTITY, QUANTITY], B, True), cost=constant_cost)
def _is_greater_than(a: Any, b: Any) -> bool:
    return _cmp_pair("isGreaterThan", a, b) == 1


@fn("isLessThan", ("quantity_is_less_than", [QUANTITY, QUANTITY], B, True), cost=constant_cost)
def _is_less_than(a: Any, b: Any) -> bool:
    return _cmp_pair("isLessThan", a, b) == -1


@fn("compareTo", ("quantity_compare_to", [QUANTITY, QUANTITY], I, True), cost=constant_cost)
def _compare_to(a: Any, b: Any) -> int:
    return _cmp_pair("compareTo", a, b)
