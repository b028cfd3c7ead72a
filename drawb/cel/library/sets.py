"""cel-go's ext.Sets library: sets.contains, sets.equivalent, sets.intersects."""

from __future__ import annotations

from typing import Any

from drawb.cel.library._registry import fn, in_list


@fn("sets.contains")
def _sets_contains(a: Any, b: Any) -> bool:
    return all(in_list(x, a) for x in b)


@fn("sets.equivalent")
def _sets_equivalent(a: Any, b: Any) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


@fn("sets.intersects")
def _sets_intersects(a: Any, b: Any) -> bool:
    return any(in_list(x, b) for x in a)
