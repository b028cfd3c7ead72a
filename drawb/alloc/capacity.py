"""Consumable capacity (DRAConsumableCapacity): devices with ``allowMultipleAllocations`` are
shared, each allocation consuming part of their capacity, rounded up to the capacity's
``requestPolicy`` (``validRange`` min + k*step, or the next of ``validValues``); an allocation
without a request for a capacity consumes its ``default``, else all of it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.api.quantity import Format, Quantity

Consumed = dict[str, Quantity]


def q(value: Any) -> Quantity:
    """A Quantity from its JSON form."""
    return value if isinstance(value, Quantity) else Quantity.parse(str(value))


def _ceil_int(value: Quantity) -> int:
    """``Quantity.Value()``: the value rounded up to an integer."""
    v = value.value
    if isinstance(v, int):
        return v
    return -((-v.numerator) // v.denominator)


class NotRepresentable(Exception):
    """1.37: a capacity request the range arithmetic cannot represent (aborts the allocation)."""


INT64_MAX = 2**63 - 1


def _milli(value: Quantity) -> int | None:
    """``safeMilliValue``: the milli value when it is exact and fits in int64, else None."""
    milli = value.milli_value()
    if not -(2**63) <= milli <= INT64_MAX:
        return None
    return milli if Quantity.from_scaled(milli, -3, value.format).compare_to(value) == 0 else None


def use_milli(valid_range: Mapping[str, Any], fractional: bool) -> bool:
    """1.37 DRAFractionalCapacityRange: range arithmetic in milli units when min, max and step allow it."""
    if not fractional:
        return False
    for key in ("min", "max", "step"):
        if valid_range.get(key) is None:
            continue
        milli = _milli(q(valid_range[key]))
        if milli is None or (key == "step" and milli < 1):
            return False
    return True


def _round_up_range(requested: Quantity, valid_range: Mapping[str, Any], checked: bool, fractional: bool) -> Quantity:
    minimum = q(valid_range["min"])
    if requested.compare_to(minimum) < 0:
        return minimum
    if valid_range.get("step") is None:
        return requested
    step_q = q(valid_range["step"])
    fmt = step_q.format if checked else Format.BINARY_SI
    if use_milli(valid_range, fractional):
        wanted = _milli(requested)
        if wanted is None:
            raise NotRepresentable(f"request {requested} is not a representable milli value")
        step, low = step_q.milli_value(), minimum.milli_value()
        added = wanted - low
        n = _go_div(added, step) + (1 if _go_mod(added, step) else 0)
        if n > _go_div(INT64_MAX - low, step):
            raise NotRepresentable(f"rounding request {requested} up to the next step passes the milli-value range")
        value = low + step * n
        if value % 1000 == 0:
            return Quantity.from_int(value // 1000, fmt)
        return Quantity.from_scaled(value, -3, fmt)
    if checked and requested.compare_to(Quantity.from_int(INT64_MAX)) > 0:
        raise NotRepresentable(f"request {requested} exceeds MaxInt64")
    step, low = _ceil_int(step_q), _ceil_int(minimum)
    added = _ceil_int(requested) - low
    n = _go_div(added, step)
    if _go_mod(added, step) != 0:
        n += 1
    if checked and low >= 0 and n > _go_div(INT64_MAX - low, step):
        raise NotRepresentable(f"rounding request {requested} up to the next step passes MaxInt64")
    return Quantity.from_int(low + step * n, fmt)


def _go_div(a: int, b: int) -> int:
    """Go's truncating integer division."""
    result = abs(a) // abs(b)
    return result if (a >= 0) == (b >= 0) else -result


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def consumed_for(requested: Quantity | None, capacity: Mapping[str, Any], checked: bool = False, fractional: bool = False) -> Quantity:
    """What one allocation consumes of one capacity (``calculateConsumedCapacity``)."""
    policy = capacity.get("requestPolicy")
    if requested is None:
        if policy is not None and policy.get("default") is not None:
            return q(policy["default"])
        return q(capacity.get("value", "0"))
    if policy is None:
        return requested
    valid_range = policy.get("validRange")
    if valid_range is not None and valid_range.get("min") is not None:
        return _round_up_range(requested, valid_range, checked, fractional)
    if policy.get("validValues") is not None:
        for value in policy["validValues"]:
            if requested.compare_to(q(value)) <= 0:
                return q(value)
    return requested


def _violates(value: Quantity, policy: Mapping[str, Any] | None, fractional: bool) -> bool:
    if policy is None:
        return False
    if policy.get("default") is not None and value.compare_to(q(policy["default"])) == 0:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        if valid_range.get("max") is not None and value.compare_to(q(valid_range["max"])) > 0:
            return True
        if valid_range.get("step") is not None:
            low_q = q(valid_range["min"]) if valid_range.get("min") is not None else Quantity.from_int(0)
            if use_milli(valid_range, fractional):
                wanted = _milli(value)
                if wanted is None:
                    return True
                step, low = q(valid_range["step"]).milli_value(), low_q.milli_value()
            else:
                wanted, step, low = _ceil_int(value), _ceil_int(q(valid_range["step"])), _ceil_int(low_q)
            if _go_mod(wanted - low, step) != 0:
                return True
        return False
    values = policy.get("validValues") or []
    if values:
        return not any(value.compare_to(q(v)) == 0 for v in values)
    return False


def requests_of(capacity_requirements: Mapping[str, Any] | None) -> dict[str, Quantity]:
    """``capacity.requests`` of a request as Quantities."""
    return {k: q(v) for k, v in ((capacity_requirements or {}).get("requests") or {}).items()}


CANNOT_REPRESENT = "capacity request cannot be represented in the device's range arithmetic"


class UnknownCapacity(Exception):
    """The request names a capacity the device does not have."""


def fits(allocated: Consumed | None, requested: dict[str, Quantity], device: Mapping[str, Any], allocating: Consumed | None,
         checked: bool = False, fractional: bool = False) -> bool:  # fmt: skip
    """Whether the request fits in what is left of the device's capacity (``CmpRequestOverCapacity``);
    UnknownCapacity when it names a capacity the device lacks, NotRepresentable (1.37) when the
    rounding cannot be computed."""
    capacities = device.get("capacity") or {}
    if any(name not in capacities for name in requested):
        raise UnknownCapacity
    uses = {}
    for name, capacity in capacities.items():
        try:
            use = consumed_for(requested.get(name), capacity, checked, fractional)
        except NotRepresentable as err:
            raise NotRepresentable(f'capacity "{name}": {CANNOT_REPRESENT}: {err}') from None
        if checked and use.sign < 0:
            raise NotRepresentable(f'capacity "{name}": capacity value is negative')
        uses[name] = use
    for name, capacity in capacities.items():
        use = uses[name]
        if _violates(use, capacity.get("requestPolicy"), fractional):
            return False
        total = use
        if allocated and name in allocated:
            total = allocated[name] + use
        if allocating and name in allocating:
            total = total + allocating[name]
        if total.compare_to(q(capacity.get("value", "0"))) > 0:
            return False
    return True


def consumption(requested: dict[str, Quantity], device: Mapping[str, Any], checked: bool = False, fractional: bool = False) -> Consumed:
    """What an allocation of the device consumes of each of its capacities."""
    return {name: consumed_for(requested.get(name), cap, checked, fractional) for name, cap in (device.get("capacity") or {}).items()}


def add(into: dict[tuple, Consumed], device_id: tuple, consumed: Consumed) -> None:
    """Aggregate consumption per device."""
    current = into.setdefault(device_id, {})
    for name, value in consumed.items():
        current[name] = current[name] + value if name in current else value


def subtract(into: dict[tuple, Consumed], device_id: tuple, consumed: Consumed) -> None:
    """Undo ``add``; a device whose consumption is all zero again is forgotten (``Remove``)."""
    current = into.get(device_id)
    if current is None:
        return
    for name, value in consumed.items():
        if name in current:
            current[name] = current[name] - value
    if all(v.is_zero() for v in current.values()):
        del into[device_id]
