"""DRA's own CEL function: `includes` on list-valued attributes (Kubernetes 1.36 and later, DRAListTypeAttributes)."""

from __future__ import annotations

from typing import Any

from drawb.cel.decls import B, T
from drawb.cel.library._registry import fn
from drawb.cel.library.k8s_lists import list_cost
from drawb.cel.ranges import ONE, Est
from drawb.cel.values import CelError, equals


def _includes_cost(c, overload, target, args):
    if target is None:
        return None
    if overload == "dra_includes_dyn_dyn":
        return Est(0, MAX_INCLUDES).mul(ONE), None
    element = c.list_element(target)
    if element is not None:
        return list_cost(c, overload, target, args)
    return c.size_of(target).mul(ONE), None


# DRA `includes` (1.36+)

MAX_INCLUDES = 48


@fn("includes", ("dra_includes_dyn_dyn", [T.DYN, T.DYN], B, True), when=lambda spec: spec.list_attributes, cost=_includes_cost)
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
