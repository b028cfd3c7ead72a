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


def _round_up_range(requested: Quantity, valid_range: Mapping[str, Any]) -> Quantity:
    minimum = q(valid_range["min"])
    if requested.compare_to(minimum) < 0:
        return minimum
    if valid_range.get("step") is None:
        return requested
    step, low = _ceil_int(q(valid_range["step"])), _ceil_int(minimum)
    added = _ceil_int(requested) - low
    n = _go_div(added, step)
    if _go_mod(added, step) != 0:
        n += 1
    return Quantity.from_int(low + step * n, Format.BINARY_SI)


def _go_div(a: int, b: int) -> int:
    """Go's truncating integer division."""
    result = abs(a) // abs(b)
    return result if (a >= 0) == (b >= 0) else -result


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def consumed_for(requested: Quantity | None, capacity: Mapping[str, Any]) -> Quantity:
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
        return _round_up_range(requested, valid_range)
    if policy.get("validValues") is not None:
        for value in policy["validValues"]:
            if requested.compare_to(q(value)) <= 0:
                return q(value)
    return requested


def _violates(value: Quantity, policy: Mapping[str, Any] | None) -> bool:
    if policy is None:
        return False
    if policy.get("default") is not None and value.compare_to(q(policy["default"])) == 0:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        if valid_range.get("max") is not None and value.compare_to(q(valid_range["max"])) > 0:
            return True
        if valid_range.get("step") is not None:
            step = _ceil_int(q(valid_range["step"]))
            low = _ceil_int(q(valid_range["min"])) if valid_range.get("min") is not None else 0
            if _go_mod(_ceil_int(value) - low, step) != 0:
                return True
        return False
    values = policy.get("validValues") or []
    if values:
        return not any(value.compare_to(q(v)) == 0 for v in values)
    return False


def requests_of(capacity_requirements: Mapping[str, Any] | None) -> dict[str, Quantity]:
    """``capacity.requests`` of a request as Quantities."""
    return {k: q(v) for k, v in ((capacity_requirements or {}).get("requests") or {}).items()}


class UnknownCapacity(Exception):
    """The request names a capacity the device does not have."""


def fits(allocated: Consumed | None, requested: dict[str, Quantity], device: Mapping[str, Any], allocating: Consumed | None) -> bool:
    """Whether the request fits in what is left of the device's capacity (``CmpRequestOverCapacity``)."""
    capacities = device.get("capacity") or {}
    if any(name not in capacities for name in requested):
        raise UnknownCapacity
    for name, capacity in capacities.items():
        use = consumed_for(requested.get(name), capacity)
        if _violates(use, capacity.get("requestPolicy")):
            return False
        total = use
        if allocated and name in allocated:
            total = allocated[name] + use
        if allocating and name in allocating:
            total = total + allocating[name]
        if total.compare_to(q(capacity.get("value", "0"))) > 0:
            return False
    return True


def consumption(requested: dict[str, Quantity], device: Mapping[str, Any]) -> Consumed:
    """What an allocation of the device consumes of each of its capacities."""
    return {name: consumed_for(requested.get(name), cap) for name, cap in (device.get("capacity") or {}).items()}


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
