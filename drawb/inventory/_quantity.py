"""Quantity strings to exact values in base units, cached: the frame's fast path over `drawb.api.quantity`."""

from __future__ import annotations

from fractions import Fraction

from drawb.api.quantity import Quantity, QuantityError

_CACHE_LIMIT = 65_536

_cache: dict[str, int | Fraction | None] = {}


def quantity_value(text: str) -> int | Fraction | None:
    """The exact value of a quantity string in base units, or None when it is not a quantity."""
    try:
        return _cache[text]
    except KeyError:
        pass
    try:
        value: int | Fraction | None = Quantity.parse(text).value
    except QuantityError:
        value = None
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[text] = value
    return value


def whole_count(value: object) -> int | None:
    """A resource amount such as ``nvidia.com/gpu: 2`` as a whole number, or None when absent or not a quantity."""
    if value is None:
        return None
    exact = quantity_value(str(value))
    return None if exact is None else int(exact)
