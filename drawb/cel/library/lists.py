"""cel-go's ext.Lists library, version 3 (lists.range, slice, flatten, reverse, distinct, sort, sortBy)."""

from __future__ import annotations

from typing import Any, Callable

from drawb.cel.library._registry import fn, in_list
from drawb.cel.values import CelError, compare, dispatch_error


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
        if not in_list(item, out):
            out.append(item)
    return out


def _sort_key(items: list) -> Callable[[Any], Any]:
    import functools

    return functools.cmp_to_key(lambda a, b: compare(a, b, "sort"))


@fn("sort")
def _sort(items: Any) -> list:
    return sorted(items, key=_sort_key(items))


@fn("@sortByAssociatedKeys", aliases=("lists.@sortByAssociatedKeys",))
def _sort_by_keys(items: Any, keys: Any) -> list:
    if len(items) != len(keys):
        raise CelError(f"@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {len(items)} and {len(keys)} elements respectively.")
    order = sorted(range(len(keys)), key=lambda i: _sort_key(keys)(keys[i]))
    return [items[i] for i in order]
