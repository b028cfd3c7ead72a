"""The Kubernetes lists library, version 0: isSorted, sum, min, max (indexOf and lastIndexOf are in `strings`)."""

from __future__ import annotations

from typing import Any

from drawb.cel.decls import B, D, I, S, T, U
from drawb.cel.library._registry import fn
from drawb.cel.operators import op_add
from drawb.cel.ranges import ONE, STRING_TRAVERSAL
from drawb.cel.values import CelError, compare, dispatch_error


def list_cost(c, overload, target, args):
    """Traversing the receiver list once, comparing each element (strings and bytes by their characters)."""
    if target is None:
        return None
    element_cost = ONE
    element = c.list_element(target)
    if element is not None:
        if element.type.kind in ("string", "bytes"):
            element_cost = element_cost.add(c.size_of(element).factor(STRING_TRAVERSAL))
        return c.size_of(target).mul(element_cost), None
    return c.size_of(target).factor(STRING_TRAVERSAL), None


_COMPARABLE = [("bool", B), ("int", I), ("uint", U), ("double", D), ("bytes", T.BYTES), ("string", S),
               ("duration", T.DURATION), ("timestamp", T.TIMESTAMP)]  # fmt: skip
_SUMMABLE = [("int", I), ("uint", U), ("double", D), ("duration", T.DURATION)]


def _check_list(items: Any, name: str) -> None:
    if not isinstance(items, (list, tuple)):
        raise dispatch_error(name, items)


@fn("isSorted", *[(f"list_{n}_is_sorted_bool", [T.List(t)], B, True) for n, t in _COMPARABLE], cost=list_cost)
def _is_sorted(items: Any) -> bool:
    _check_list(items, "isSorted")
    for a, b in zip(items, items[1:]):
        if compare(a, b, "isSorted") > 0:
            return False
    return True


@fn("sum", *[(f"list_{n}_sum_{n}", [T.List(t)], t, True) for n, t in _SUMMABLE], cost=list_cost)
def _list_sum(items: Any) -> Any:
    _check_list(items, "sum")
    if not items:
        return 0
    total = items[0]
    for item in items[1:]:
        total = op_add(total, item)
    return total


@fn("min", *[(f"list_{n}_min_{n}", [T.List(t)], t, True) for n, t in _COMPARABLE], cost=list_cost)
def _list_min(items: Any) -> Any:
    _check_list(items, "min")
    if not items:
        raise CelError("min called on empty list")
    best = items[0]
    for item in items[1:]:
        if compare(item, best, "min") < 0:
            best = item
    return best


@fn("max", *[(f"list_{n}_max_{n}", [T.List(t)], t, True) for n, t in _COMPARABLE], cost=list_cost)
def _list_max(items: Any) -> Any:
    _check_list(items, "max")
    if not items:
        raise CelError("max called on empty list")
    best = items[0]
    for item in items[1:]:
        if compare(item, best, "max") > 0:
            best = item
    return best
