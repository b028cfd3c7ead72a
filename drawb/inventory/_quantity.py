"""Quantity strings to exact values in base units, cached (the frame's fast path).

A private stand-in for ``drawb.api.quantity`` with the same grammar; ``quantity_value`` is the
only entry point, so the switch to the shared parser is one line.
"""

from __future__ import annotations

import re
from fractions import Fraction

_QUANTITY = re.compile(
    r"([+-]?)([0-9]*)(?:\.([0-9]*))?"
    r"(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?[0-9]+))?\Z"
)
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_MAX_EXPONENT = 10_000
_CACHE_LIMIT = 65_536

_cache: dict[str, int | Fraction] = {}


def _parse(text: str) -> int | Fraction:
    """Parse one quantity; raise ValueError when it is not one."""
    m = _QUANTITY.match(text)
    if m is None:
        raise ValueError(text)
    sign, whole, frac, suffix, exponent = m.groups()
    frac = frac or ""
    if not whole and not frac:
        raise ValueError(text)
    value = Fraction(int(whole + frac or "0"), 10 ** len(frac))
    if suffix in _BINARY:
        value *= 2 ** _BINARY[suffix]
    else:
        power = _DECIMAL[suffix] if suffix else int(exponent or 0)
        if abs(power) > _MAX_EXPONENT:
            raise ValueError(text)
        value *= Fraction(10) ** power
    if sign == "-":
        value = -value
    return int(value) if value.denominator == 1 else value


def quantity_value(text: str) -> int | Fraction | None:
    """The exact value of a quantity string in base units, or None when it is not a quantity."""
    try:
        return _cache[text]
    except KeyError:
        pass
    try:
        value = _parse(text)
    except ValueError:
        return None
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
    _cache[text] = value
    return value

