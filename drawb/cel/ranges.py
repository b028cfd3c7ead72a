"""Cost and size estimates as cel-go's checker keeps them: [min, max] ranges with saturating arithmetic."""

from __future__ import annotations

import math
from dataclasses import dataclass

U64 = (1 << 64) - 1
STRING_TRAVERSAL = 0.1  # cel-go's cost of reading one character
REGEX_LENGTH = 0.25  # cel-go's cost factor of one character of a regular expression


def saturating_add(x: int, y: int) -> int:
    return U64 if y > 0 and x > U64 - y else x + y


def saturating_mul(x: int, y: int) -> int:
    return U64 if y != 0 and x > U64 // y else x * y


def _factor(x: int, f: float) -> int:
    xf = float(x)
    if xf > 0 and f > 0 and xf > U64 / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= 2.0**64 else int(c)


@dataclass(frozen=True)
class Est:
    """A [min, max] estimate (used for both sizes and costs)."""

    lo: int
    hi: int

    def add(self, o: Est) -> Est:
        return Est(saturating_add(self.lo, o.lo), saturating_add(self.hi, o.hi))

    def mul(self, o: Est) -> Est:
        return Est(saturating_mul(self.lo, o.lo), saturating_mul(self.hi, o.hi))

    def factor(self, f: float) -> Est:
        return Est(_factor(self.lo, f), _factor(self.hi, f))

    def union(self, o: Est) -> Est:
        return Est(min(self.lo, o.lo), max(self.hi, o.hi))


def fixed(n: int) -> Est:
    """The estimate [n, n]."""
    return Est(n, n)


ZERO = fixed(0)
ONE = fixed(1)
UNKNOWN = Est(0, U64)
