"""Kubernetes resource quantities, parsed, printed and compared exactly as the API server does.

Mirrors ``k8s.io/apimachinery/pkg/api/resource.Quantity`` and the CEL quantity library of
``k8s.io/apiserver/pkg/cel/library``. Values are kept as ``unscaled * 10**exponent`` with Python
ints, never floats. Like Go, a quantity remembers whether it is held as a small scaled int64
("int form") or as an arbitrary-precision decimal ("dec form"); that difference is invisible to
comparison and printing but decides ``is_integer()``/``as_integer()`` and ``as_approximate_float()``,
exactly as it does in Kubernetes CEL.
"""

from __future__ import annotations

import enum
import functools
import re
from fractions import Fraction
from typing import Final

from drawb.errors import DrawbError

__all__ = ["Format", "Quantity", "QuantityError", "is_quantity"]

# The regular expression quoted in the API server's parse error (not used for matching).
SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"
ERR_NOT_INTEGER: Final = "cannot convert value to integer"
ERR_TOO_LARGE: Final = "quantity exponent is too large to represent exactly"

_INT64_MAX: Final = (1 << 63) - 1
_INT64_MIN: Final = -(1 << 63)
_NANO: Final = -9
# Materialising 10**n beyond this many digits is refused instead of exhausting memory.
_MAX_PAD_DIGITS: Final = 100_000


class QuantityError(DrawbError, ValueError):
    """A string is not a valid Kubernetes quantity, or a conversion is impossible."""


class Format(enum.StrEnum):
    """How a quantity is printed: the suffix family it was written with."""

    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


_DEC_SUFFIXES: Final = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_SUFFIX_FOR_EXP: Final = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_SUFFIX_FOR_POWER: Final = {e // 10: s for s, e in _BIN_SUFFIXES.items()}

# Same grammar as apimachinery's hand-written scanner parseQuantityString.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:(\.)([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)\Z")
_EXP_DIGITS = re.compile(r"[+-]?[0-9]+\Z")

# Go's math.Pow10 tables; AsApproximateFloat64 multiplies by Pow10, so we must round alike.
_POW10 = tuple(float(f"1e{i}") for i in range(32))
_POW10_POS32 = tuple(float(f"1e{32 * i}") for i in range(10))
_POW10_NEG32 = tuple(float(f"1e-{32 * i}") for i in range(11))


def _go_pow10(n: int) -> float:
    """Go's ``math.Pow10``."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10[n % 32]
    if -323 <= n <= 0:
        return _POW10_NEG32[-n // 32] / _POW10[-n % 32]
    return float("inf") if n > 0 else 0.0


def _int_to_float(v: int) -> float:
    """Round an int to the nearest float64 (ties to even), infinite on overflow, like Go's big.Float."""
    try:
        return float(v)
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


def _fits_int64(v: int) -> bool:
    return _INT64_MIN <= v <= _INT64_MAX


def _pow10(n: int) -> int:
    if n > _MAX_PAD_DIGITS:
        raise QuantityError(ERR_TOO_LARGE)
    return 10**n


def _scale_up_int64(v: int, n: int) -> int | None:
    """``v * 10**n`` if it fits int64 (apimachinery's positiveScaleInt64), else None."""
    if v == 0:
        return 0
    if n > 19 or v == _INT64_MIN:
        return None
    r = v * 10**n
    return r if _fits_int64(r) else None


_E18: Final = 10**18


def _ndigits(v: int) -> int:
    """Number of decimal digits of ``|v|`` (0 for 0), without str() (which refuses huge ints)."""
    v = abs(v)
    if v < _E18:
        return len(str(v)) if v else 0
    d = (v.bit_length() - 1) * 30103 // 100000
    while 10 ** (d + 1) <= v:
        d += 1
    return d + 1


def _int_from_digits(s: str) -> int:
    """int(s) for a string of ASCII digits of any length (int() refuses > 4300 digits)."""
    if len(s) <= 4000:
        return int(s)
    half = len(s) // 2
    return _int_from_digits(s[:half]) * 10 ** (len(s) - half) + _int_from_digits(s[half:])


_STR_SAFE: Final = 10**4000


def _digits(n: int) -> str:
    """str(n) for an int of any size."""
    if -_STR_SAFE < n < _STR_SAFE:
        return str(n)
    if n < 0:
        return "-" + _digits(-n)
    k = _ndigits(n) // 2
    hi, lo = divmod(n, 10**k)
    return _digits(hi) + _digits(lo).rjust(k, "0")


def _strip10(v: int, e: int) -> tuple[int, int]:
    """Move factors of ten from ``v`` into the exponent ``e``."""
    if v == 0:
        return 0, e
    while v % 10 == 0:
        v //= 10
        e += 1
    return v, e


def _cmp_parts(av: int, ae: int, bv: int, be: int) -> int:
    """Compare ``av*10**ae`` with ``bv*10**be`` without materialising huge powers."""
    if ae == be:
        return (av > bv) - (av < bv)
    sa = (av > 0) - (av < 0)
    sb = (bv > 0) - (bv < 0)
    if sa != sb or sa == 0:
        return (sa > sb) - (sa < sb)
    # Same non-zero sign: compare magnitudes by order of magnitude first.
    ma = _ndigits(av) + ae
    mb = _ndigits(bv) + be
    if ma != mb:
        return sa if ma > mb else -sa
    e = min(ae, be)
    x = av * 10 ** (ae - e)
    y = bv * 10 ** (be - e)
    return (x > y) - (x < y)


def _parse_exponent(text: str) -> int | None:
    """Parse a decimal-exponent suffix body as Go's strconv.ParseInt(…, 64) then int32() would."""
    if not _EXP_DIGITS.match(text):
        return None
    n = int(text)
    if not _fits_int64(n):
        return None
    return ((n + (1 << 31)) % (1 << 32)) - (1 << 31)


def _interpret_suffix(suffix: str) -> tuple[int, int, Format] | None:
    """Return (base, exponent, format) for a suffix, or None when it is not a valid suffix."""
    e = _DEC_SUFFIXES.get(suffix)
    if e is not None:
        return 10, e, Format.DECIMAL_SI
    e = _BIN_SUFFIXES.get(suffix)
    if e is not None:
        return 2, e, Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        e = _parse_exponent(suffix[1:])
        if e is not None:
            return 10, e, Format.DECIMAL_EXPONENT
    return None


_set = object.__setattr__


class Quantity:
    """An exact, immutable Kubernetes quantity such as ``80Gi``, ``1500m`` or ``2e9``."""

    __slots__ = ("_v", "_e", "_dec", "_format", "_s", "_hash")

    _v: int
    _e: int
    _dec: bool
    _format: Format
    _s: str | None
    _hash: int | None

    def __init__(self, text: str) -> None:
        """Parse ``text``; see :meth:`parse`."""
        q = _parse(text)
        for slot in Quantity.__slots__:
            _set(self, slot, getattr(q, slot))

    @classmethod
    def _make(cls, v: int, e: int, dec: bool, fmt: Format, s: str | None = None) -> Quantity:
        q = object.__new__(cls)
        _set(q, "_v", v)
        _set(q, "_e", e)
        _set(q, "_dec", dec)
        _set(q, "_format", fmt)
        _set(q, "_s", s)
        _set(q, "_hash", None)
        return q

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse a quantity string as ``resource.ParseQuantity`` does, raising QuantityError."""
        return _parse(text)

    @classmethod
    def from_int(cls, value: int, format: Format | str = Format.DECIMAL_SI) -> Quantity:
        """An integer quantity (``resource.NewQuantity``); CEL's ``q.add(int)`` uses DecimalExponent."""
        return cls.from_scaled(value, 0, format)

    @classmethod
    def from_scaled(cls, value: int, scale: int, format: Format | str = Format.DECIMAL_SI) -> Quantity:
        """``value * 10**scale`` held in int form, as ``resource.NewScaledQuantity`` builds it."""
        if not _fits_int64(value):
            raise QuantityError(f"value {value} does not fit in int64; use from_decimal")
        return cls._make(value, scale, False, Format(format))

    @classmethod
    def from_decimal(cls, unscaled: int, exponent: int, format: Format | str = Format.DECIMAL_SI) -> Quantity:
        """``unscaled * 10**exponent`` held in dec form, as ``resource.NewDecimalQuantity`` builds it."""
        return cls._make(unscaled, exponent, True, Format(format))

    # --- accessors -------------------------------------------------------------------------

    @property
    def format(self) -> Format:
        """The suffix family used when printing."""
        return self._format

    @property
    def value(self) -> int | Fraction:
        """The exact value in base units: an int when integral, else a Fraction."""
        v, e = self._v, self._e
        if e >= 0:
            return v * _pow10(e)
        q = Fraction(v, _pow10(-e))
        return q.numerator if q.denominator == 1 else q

    @property
    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self._v > 0) - (self._v < 0)

    def is_zero(self) -> bool:
        """True when the value is zero."""
        return self._v == 0

    def _as_int64(self) -> int | None:
        if self._dec:
            return None
        if self._e == 0:
            return self._v
        if self._e < 0:
            return None
        return _scale_up_int64(self._v, self._e)

    def is_integer(self) -> bool:
        """CEL ``isInteger()``: whether ``as_integer()`` succeeds (Go's ``AsInt64``).

        Like Kubernetes this depends on how the quantity is held, not only on its value:
        ``1000m`` and anything beyond 18 significant digits are not "integers" here.
        """
        return self._as_int64() is not None

    def as_integer(self) -> int:
        """CEL ``asInteger()``: the int64 value, or QuantityError('cannot convert value to integer')."""
        i = self._as_int64()
        if i is None:
            raise QuantityError(ERR_NOT_INTEGER)
        return i

    def as_approximate_float(self) -> float:
        """CEL ``asApproximateFloat()``, rounded bit for bit as Go's ``AsApproximateFloat64``."""
        base = _int_to_float(self._v)
        if self._e == 0:
            return base
        return base * _go_pow10(self._e)

    def milli_value(self) -> int:
        """``ceil(q * 1000)`` rounded away from zero, as ``Quantity.MilliValue`` (no int64 wrap)."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """``q / 10**scale`` rounded away from zero, as ``Quantity.ScaledValue`` (no int64 wrap)."""
        shift = self._e - scale
        if shift >= 0:
            return self._v * _pow10(shift)
        q, r = divmod(abs(self._v), _pow10(-shift))
        q += 1 if r else 0
        return q if self._v >= 0 else -q

    # --- arithmetic and comparison --------------------------------------------------------------

    def compare_to(self, other: Quantity) -> int:
        """-1, 0 or 1 (CEL ``compareTo``, Go ``Cmp``)."""
        return _cmp_parts(self._v, self._e, other._v, other._e)

    def is_greater_than(self, other: Quantity) -> bool:
        """CEL ``isGreaterThan``."""
        return self.compare_to(other) == 1

    def is_less_than(self, other: Quantity) -> bool:
        """CEL ``isLessThan``."""
        return self.compare_to(other) == -1

    def add(self, other: Quantity | int) -> Quantity:
        """``self + other`` (CEL ``add``); an int is taken as a DecimalExponent quantity."""
        return _sum(self, _coerce(other), False)

    def sub(self, other: Quantity | int) -> Quantity:
        """``self - other`` (CEL ``sub``); an int is taken as a DecimalExponent quantity."""
        return _sum(self, _coerce(other), True)

    def neg(self) -> Quantity:
        """The negated quantity, same format."""
        return Quantity._make(-self._v, self._e, self._dec, self._format)

    def __add__(self, other: object) -> Quantity:
        if isinstance(other, (Quantity, int)) and not isinstance(other, bool):
            return self.add(other)
        return NotImplemented

    def __sub__(self, other: object) -> Quantity:
        if isinstance(other, (Quantity, int)) and not isinstance(other, bool):
            return self.sub(other)
        return NotImplemented

    def __neg__(self) -> Quantity:
        return self.neg()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.compare_to(other) == 0
        return NotImplemented

    def __lt__(self, other: Quantity) -> bool:
        if isinstance(other, Quantity):
            return self.compare_to(other) < 0
        return NotImplemented

    def __le__(self, other: Quantity) -> bool:
        if isinstance(other, Quantity):
            return self.compare_to(other) <= 0
        return NotImplemented

    def __gt__(self, other: Quantity) -> bool:
        if isinstance(other, Quantity):
            return self.compare_to(other) > 0
        return NotImplemented

    def __ge__(self, other: Quantity) -> bool:
        if isinstance(other, Quantity):
            return self.compare_to(other) >= 0
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            _set(self, "_hash", hash(_strip10(self._v, self._e) if self._v else (0, 0)))
        return self._hash

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Quantity is immutable")

    def __bool__(self) -> bool:
        return self._v != 0

    # --- printing -----------------------------------------------------------------------------

    def canonical(self) -> str:
        """The canonical form, always recomputed (``str()`` may echo a canonical-looking input)."""
        return _canonical(self._v, self._e, self._format)

    def __str__(self) -> str:
        if self._s is None:
            _set(self, "_s", _canonical(self._v, self._e, self._format))
        return self._s

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __reduce__(self) -> tuple:
        return (Quantity._make, (self._v, self._e, self._dec, self._format, self._s))


def _coerce(other: Quantity | int) -> Quantity:
    if isinstance(other, Quantity):
        return other
    if isinstance(other, int) and not isinstance(other, bool):
        return Quantity.from_int(other, Format.DECIMAL_EXPONENT)
    raise TypeError(f"cannot combine a Quantity with {type(other).__name__}")


def _sum(q: Quantity, y: Quantity, negate: bool) -> Quantity:
    """Go's ``Quantity.Add``/``Sub``: int form while int64 suffices, else dec form."""
    fmt = y._format if q._v == 0 else q._format
    av, ae, ye = q._v, q._e, y._e
    if not q._dec and not y._dec:
        yv = y._v
        if negate:
            yv = _INT64_MIN if yv == _INT64_MIN else -yv  # Go negates int64 with wrap-around
        if yv == 0:
            return Quantity._make(av, ae, False, fmt)
        if av == 0:
            return Quantity._make(yv, ye, False, fmt)
        if ae == ye:
            c: int | None = av + yv
            e = ae
        elif ae > ye:
            c = _scale_up_int64(av, ae - ye)
            c = None if c is None else c + yv
            e = ye
        else:
            c = _scale_up_int64(yv, ye - ae)
            c = None if c is None else av + c
            e = ae
        if c is not None and _fits_int64(c):
            return Quantity._make(c, e, False, fmt)
    yv = -y._v if negate else y._v
    e = min(ae, ye)
    return Quantity._make(av * _pow10(ae - e) + yv * _pow10(ye - e), e, True, fmt)


def _canonical(v: int, e: int, fmt: Format) -> str:
    """``Quantity.CanonicalizeBytes``: mantissa and suffix, exponent as large as possible."""
    if v == 0:
        return "0"
    if fmt == Format.BINARY_SI:
        if _cmp_parts(v, e, -1024, 0) > 0 and _cmp_parts(v, e, 1024, 0) < 0:
            fmt = Format.DECIMAL_SI
        else:
            m, x = _strip10(v, e)
            if x < 0:
                fmt = Format.DECIMAL_SI  # not an integer: do not round, print in decimal
            else:
                n = m * _pow10(x)
                times = 0
                while n % 1024 == 0:
                    n //= 1024
                    times += 1
                return _digits(n) + _BIN_SUFFIX_FOR_POWER.get(times, "")
    m, x = _strip10(v, e)
    r = x % 3
    if r:
        m *= 10**r
        x -= r
    if fmt == Format.DECIMAL_SI:
        return _digits(m) + _DEC_SUFFIX_FOR_EXP.get(x, "")
    return f"{_digits(m)}e{x}" if x else _digits(m)


def _parse(text: str) -> Quantity:
    """``resource.ParseQuantity``, memoised: quantities repeat across devices and are immutable."""
    if not isinstance(text, str):
        raise TypeError(f"quantity must be a string, not {type(text).__name__}")
    return _parse_cached(text)


@functools.lru_cache(maxsize=16384)
def _parse_cached(text: str) -> Quantity:
    if text == "0":
        return _ZERO_TEXT
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    m = _SCAN.match(text)
    if m is None:
        raise QuantityError(ERR_FORMAT_WRONG)
    sign, whole, dot, frac, suffix = m.groups()
    frac = frac or ""
    interp = _interpret_suffix(suffix)
    if interp is None:
        raise QuantityError(ERR_SUFFIX)
    base, exponent, fmt = interp
    negative = sign == "-"
    num = whole.lstrip("0") or "0"

    # Fast path: at most 18 significant digits and a scale of nano or coarser fit an int64.
    mantissa = 1
    if base == 10:
        scale = exponent
        precision = 18 - len(num) - len(frac)
    elif exponent >= 0 and not frac:
        scale = 0
        mantissa = 1 << exponent
        precision = 15 - len(num) - exponent * 3 // 10 - 1
    else:
        scale = 0
        precision = -1
    if precision >= 0:
        scale -= len(frac)
        if scale >= _NANO:
            shifted = num + frac
            digits = int(shifted)
            result = digits * mantissa
            if _fits_int64(result):
                if negative:
                    result = -result
                keep = None
                if fmt == Format.BINARY_SI:
                    if digits & 7:
                        keep = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    keep = text
                return Quantity._make(result, scale, False, fmt, keep)

    # Slow path: arbitrary precision, rounded up (away from zero) to nano.
    if not whole and not frac:
        raise QuantityError(ERR_NUMERIC)
    unscaled = _int_from_digits(whole + frac)
    e = -len(frac) if dot else 0
    if base == 10:
        e += exponent
    else:
        unscaled <<= exponent
    if unscaled:
        if e < _NANO:
            k = _NANO - e
            if k > _ndigits(unscaled) + 1:
                unscaled = 1
            else:
                qt, rem = divmod(unscaled, 10**k)
                unscaled = qt + (1 if rem else 0)
        else:
            unscaled *= _pow10(e - _NANO)
        e = _NANO
    if fmt == Format.BINARY_SI:
        if _cmp_parts(unscaled, e, _INT64_MAX, 0) > 0:
            unscaled, e = _INT64_MAX, 0
        if unscaled and _cmp_parts(unscaled, e, 1, 0) < 0:
            fmt = Format.DECIMAL_SI
    if negative:
        unscaled = -unscaled
    return Quantity._make(unscaled, e, True, fmt)


_ZERO_TEXT: Final = Quantity._make(0, 0, False, Format.DECIMAL_SI, "0")


def is_quantity(text: str) -> bool:
    """CEL ``isQuantity``: whether ``text`` parses as a quantity."""
    try:
        _parse(text)
    except QuantityError:
        return False
    return True
