"""CEL runtime values with cel-go semantics: errors, optionals, Kubernetes Quantity and Semver."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from drawb.api.quantity import Quantity, QuantityError
from drawb.cel.ast import UInt
from drawb.api.semver import Semver

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class CelError(Exception):
    """A CEL evaluation error value, carrying cel-go's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


NO_SUCH_OVERLOAD = "no such overload"


def no_such_overload(*args: Any) -> CelError:
    """cel-go `MaybeNoSuchOverloadErr`: the generic message."""
    return CelError(NO_SUCH_OVERLOAD)


def dispatch_error(function: str, *args: Any) -> CelError:
    """cel-go's dynamic dispatch failure: `no such overload: f(type, ...)`."""
    return CelError(f"no such overload: {function}({', '.join(type_name(a) for a in args)})")


@dataclass(frozen=True, slots=True)
class QuantityValue:
    """`kubernetes.Quantity`; `pointer` marks results of add/sub (Go `*Quantity`, see spec §10.5)."""

    q: Quantity
    pointer: bool = False


@dataclass(frozen=True, slots=True)
class SemverValue:
    """`kubernetes.Semver`."""

    v: Semver


@dataclass(frozen=True, slots=True)
class Optional:
    """`optional_type(T)`; `value is _NONE` for `optional.none()`."""

    value: Any

    @property
    def has_value(self) -> bool:
        return self.value is not _NONE


class _NoneMarker:
    __slots__ = ()


_NONE = _NoneMarker()
OPTIONAL_NONE = Optional(_NONE)


@dataclass(frozen=True, slots=True)
class CelType:
    """A type value (result of `type(x)`)."""

    name: str


class DefaultMap(dict):
    """The outer `device.attributes` / `device.capacity` map: an unknown domain reads as `{}`."""

    __slots__ = ()


EMPTY: dict = {}


def quantity_of(text: str) -> QuantityValue:
    """Parse like `resource.ParseQuantity`, raising CelError with its message."""
    try:
        return QuantityValue(Quantity.parse(text))
    except QuantityError as err:
        raise CelError(str(err)) from None


# --- type names -----------------------------------------------------------------------------


def type_name(v: Any) -> str:
    """cel-go `Type().TypeName()`."""
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, UInt):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if isinstance(v, (list, tuple)):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, QuantityValue):
        return "kubernetes.Quantity"
    if isinstance(v, SemverValue):
        return "kubernetes.Semver"
    if isinstance(v, Optional):
        return "optional_type"
    if isinstance(v, CelType):
        return "type"
    if isinstance(v, Duration):
        return "google.protobuf.Duration"
    if isinstance(v, Timestamp):
        return "google.protobuf.Timestamp"
    return getattr(v, "cel_type_name", type(v).__name__)


_GO_NAMES = {"google.protobuf.Duration": "types.Duration", "google.protobuf.Timestamp": "types.Timestamp",
             "bool": "types.Bool", "int": "types.Int", "uint": "types.Uint", "double": "types.Double",
             "string": "types.String", "bytes": "types.Bytes", "null_type": "types.Null",
             "optional_type": "*types.Optional", "type": "*types.Type"}  # fmt: skip


def go_type_name(v: Any) -> str:
    """What Go's `%T` prints for the cel-go value (used in some error messages)."""
    if isinstance(v, QuantityValue):
        return "*cel.Quantity" if v.pointer else "cel.Quantity"
    if isinstance(v, SemverValue):
        return "cel.Semver"
    return _GO_NAMES.get(type_name(v), type_name(v))


def type_value(v: Any) -> CelType:
    """`type(x)`."""
    name = type_name(v)
    return CelType({"null_type": "null_type"}.get(name, name))


# --- equality and ordering ------------------------------------------------------------------


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _num_eq(a: Any, b: Any) -> bool:
    fa, fb = isinstance(a, float), isinstance(b, float)
    if fa and fb:
        return a == b
    if fa or fb:
        i, f = (b, a) if fa else (a, b)
        return math.isfinite(f) and f.is_integer() and int(f) == int(i)
    return int(a) == int(b)


def equals(a: Any, b: Any) -> bool:
    """cel-go `types.Equal` (heterogeneous numeric equality; raises CelError where cel-go errors)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_num(a):
        return _is_num(b) and _num_eq(a, b)
    if isinstance(a, str):
        return isinstance(b, str) and a == b
    if isinstance(a, bytes):
        return isinstance(b, bytes) and a == b
    if isinstance(a, QuantityValue):
        if not isinstance(b, QuantityValue) or b.pointer:
            raise no_such_overload(b)
        return a.q.compare_to(b.q) == 0
    if isinstance(a, SemverValue):
        if not isinstance(b, SemverValue):
            raise no_such_overload(b)
        return a.v.compare_to(b.v) == 0
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if not equals(x, y):
                return False
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for k, v in a.items():
            found, other = map_find(b, k)
            if not found or not equals(v, other):
                return False
        return True
    if isinstance(a, Optional):
        if not isinstance(b, Optional):
            return False
        if not a.has_value or not b.has_value:
            return a.has_value == b.has_value
        return equals(a.value, b.value)
    if isinstance(a, CelType):
        return isinstance(b, CelType) and a.name == b.name
    if isinstance(a, (Duration, Timestamp)):
        return type(a) is type(b) and a.ns == b.ns
    return a == b


_COMPARABLE = (int, float, str, bytes)


def compare(a: Any, b: Any, function: str) -> int:
    """cel-go `Comparer.Compare` (cross-type numeric ordering); CelError if not comparable."""
    if isinstance(a, bool):
        if not isinstance(b, bool):
            raise no_such_overload(b)
        return (a > b) - (a < b)
    if _is_num(a):
        if not _is_num(b):
            raise no_such_overload(b)
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return 2  # unordered: every comparison is false
        if isinstance(a, float) or isinstance(b, float):
            if isinstance(a, float) and isinstance(b, float):
                return (a > b) - (a < b)
            i, f, sign = (a, b, 1) if isinstance(b, float) else (b, a, -1)
            if math.isinf(f):
                c = -1 if f > 0 else 1
            else:
                fi = math.floor(f)
                c = (i > fi) - (i < fi) if i != fi else (0 if f == fi else -1)
            return c * sign
        return (a > b) - (a < b)
    if isinstance(a, (str, bytes)):
        if type(a) is not type(b):
            raise no_such_overload(b)
        if isinstance(a, str):
            a, b = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
        return (a > b) - (a < b)
    if isinstance(a, (Duration, Timestamp)):
        if type(a) is not type(b):
            raise no_such_overload(b)
        return (a.ns > b.ns) - (a.ns < b.ns)
    raise CelError(f"no such overload: {function}")


def map_find(m: dict, key: Any) -> tuple[bool, Any]:
    """cel-go `Mapper.Find`: numeric keys match across int/uint/double; bool keys only bools."""
    if isinstance(m, DefaultMap):
        if isinstance(key, str):
            return True, m.get(key, EMPTY)
    if isinstance(key, bool):
        for k, v in m.items():
            if isinstance(k, bool) and k == key:
                return True, v
        return False, None
    if isinstance(key, str):
        if key in m:
            return True, m[key]
        return False, None
    if _is_num(key):
        if isinstance(key, float):
            if key != math.floor(key) or math.isinf(key):
                return False, None
            key = int(key)
        for k, v in m.items():
            if _is_num(k) and not isinstance(k, bool) and int(k) == int(key):
                return True, v
        return False, None
    if key in m:
        return True, m[key]
    return False, None


def key_text(key: Any) -> str:
    """How Go's `%v` prints a CEL map key or index."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return format_double(key)
    return str(key)


def format_double(f: float) -> str:
    """Go's `strconv.FormatFloat(f, 'g', -1, 64)`-like text used by `%v` and string(double)."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    # the shortest digits that round-trip, then Go's %g rule: exponent form when exp < -4 or >= 6
    sign = "-" if f < 0 else ""
    digits = repr(abs(f))
    if "e" in digits:
        shortest, _, exp_text = digits.partition("e")
        exp = int(exp_text)
    else:
        whole, _, frac = digits.partition(".")
        frac = frac.rstrip("0")
        if whole != "0":
            exp = len(whole) - 1
            shortest = whole + frac
        else:
            stripped = frac.lstrip("0")
            exp = -(len(frac) - len(stripped)) - 1
            shortest = stripped
        shortest = shortest[0] + ("." + shortest[1:] if len(shortest) > 1 else "")
    digs = shortest.replace(".", "").rstrip("0") or "0"
    if exp < -4 or exp >= 6:
        mant = digs[0] + ("." + digs[1:] if len(digs) > 1 else "")
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp >= 0:
        whole = digs[: exp + 1].ljust(exp + 1, "0")
        frac = digs[exp + 1 :]
        return f"{sign}{whole}" + (f".{frac}" if frac else "")
    return f"{sign}0.{'0' * (-exp - 1)}{digs}"


@dataclass(frozen=True, slots=True)
class Duration:
    """`google.protobuf.Duration`, in nanoseconds."""

    ns: int


@dataclass(frozen=True, slots=True)
class Timestamp:
    """`google.protobuf.Timestamp`, in nanoseconds since the Unix epoch (UTC)."""

    ns: int
