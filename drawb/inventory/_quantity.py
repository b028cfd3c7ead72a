"""Quantity strings to exact values in base units, cached: the frame's fast path over `drawb.api.quantity`."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from drawb.api.quantity import Quantity, QuantityError


@lru_cache(maxsize=65_536)
def quantity_value(text: str) -> int | Fraction | None:
    """The exact value of a quantity string in base units, or None when it is not a quantity."""
    try:
        return Quantity.parse(text).value
    except QuantityError:
        return None


def whole_count(value: object) -> int | None:
    """A resource amount such as ``nvidia.com/gpu: 2`` as a whole number, or None when absent or not a quantity."""
    if value is None:
        return None
    exact = quantity_value(str(value))
    return None if exact is None else int(exact)
