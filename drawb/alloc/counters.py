"""Shared counters of partitionable devices (DRAPartitionableDevices): a device that consumes
counters fits only while every counter of its counter sets stays within what is available.

Kubernetes 1.34 keeps counter sets in the device's own slice: available = the slice's
``sharedCounters`` minus what already-allocated devices of that slice consume (cached by slice
*name* for the whole allocation), checked against everything consumed in the current attempt.
From 1.35 counter sets live in their own slices and count for the whole pool (keyed by pool name
in 1.35, by driver and pool from 1.36).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from drawb.api.quantity import Quantity

Counters = dict[str, dict[str, Quantity]]  # counter set -> counter -> value
DeviceID = tuple[str, str, str]


@lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity:
    return Quantity.parse(text)


def _quantity(counter: Mapping[str, Any]) -> Quantity:
    value = counter.get("value", "0") if isinstance(counter, Mapping) else counter
    return value if isinstance(value, Quantity) else _parse(str(value))


class CounterBook:
    """Counter bookkeeping for one allocation attempt."""

    def __init__(self, is_allocated: Callable[[DeviceID], bool], scope: str) -> None:
        self.is_allocated = is_allocated
        self.scope = scope  # the allocator rules' counter_scope: "slice", "pool" or "driver-pool"
        self.available: dict[Any, Counters] = {}
        self.consumed: dict[Any, Counters] = {}

    def _scope(self, candidate: Any, pool: Any) -> Any:
        if self.scope == "slice":
            return (candidate.slice.get("metadata") or {}).get("name", "")
        if self.scope == "pool":
            return pool.name
        return (pool.driver, pool.name)

    def _available(self, candidate: Any, pool: Any, scope: Any) -> Counters:
        cached = self.available.get(scope)
        if cached is not None:
            return cached
        if self.scope == "slice":
            counter_sets = (candidate.slice.get("spec") or {}).get("sharedCounters") or []
            slices = [candidate.slice]
        else:
            counter_sets = list((pool.counter_sets or {}).values())
            slices = [*pool.slices, *pool.other_slices]
        available: Counters = {}
        for counter_set in counter_sets:
            available[counter_set.get("name", "")] = {
                n: _quantity(c) for n, c in (counter_set.get("counters") or {}).items()
            }
        for slice_ in slices:
            spec = slice_.get("spec") or {}
            driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
            for device in spec.get("devices") or []:
                if not self.is_allocated((driver, pool, device.get("name", ""))):
                    continue
                for consumption in device.get("consumesCounters") or []:
                    counters = available.get(consumption.get("counterSet", ""))
                    if counters is None:
                        continue
                    for n, c in (consumption.get("counters") or {}).items():
                        if n in counters:
                            counters[n] = counters[n] - _quantity(c)
        self.available[scope] = available
        return available

    def take(self, device: Mapping[str, Any], candidate: Any, pool: Any) -> bool:
        """Consume the device's counters; False (and nothing consumed) when some counter runs out."""
        scope = self._scope(candidate, pool)
        available = self._available(candidate, pool, scope)
        consumed = self.consumed.setdefault(scope, {})
        for consumption in device.get("consumesCounters") or []:
            into = consumed.setdefault(consumption.get("counterSet", ""), {})
            for n, c in (consumption.get("counters") or {}).items():
                q = _quantity(c)
                into[n] = into[n] + q if n in into else q
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for n, value in counters.items():
                if n in used and value.compare_to(used[n]) < 0:
                    self.release(device, candidate, pool)
                    return False
                if n not in used and value.sign < 0:
                    self.release(device, candidate, pool)
                    return False
        return True

    def release(self, device: Mapping[str, Any], candidate: Any, pool: Any) -> None:
        """Give back what ``take`` consumed for the device."""
        consumed = self.consumed.setdefault(self._scope(candidate, pool), {})
        for consumption in device.get("consumesCounters") or []:
            into = consumed.setdefault(consumption.get("counterSet", ""), {})
            for n, c in (consumption.get("counters") or {}).items():
                q = _quantity(c)
                into[n] = into[n] - q if n in into else -q
