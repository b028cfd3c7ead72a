"""Devices already in use, gathered from allocated claims as the scheduler's claim tracker does:
admin-access results never count; with DRAConsumableCapacity on, results with a ``shareID`` are
shared and only add their ``consumedCapacity``; every other result makes its device unavailable."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc import capacity as cap

DeviceID = tuple[str, str, str]


@dataclass
class AllocatedState:
    """``structured.AllocatedState``."""

    allocated: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[str, str, str, str]] = field(default_factory=set)
    capacity: dict[DeviceID, cap.Consumed] = field(default_factory=dict)


def gather_allocated(claims: Iterable[Mapping[str, Any]], consumable_capacity: bool) -> AllocatedState:
    """The AllocatedState of these claims' ``status.allocation``."""
    state = AllocatedState()
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        for result in (allocation.get("devices") or {}).get("results") or []:
            if result.get("adminAccess"):
                continue
            device_id = (result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
            if consumable_capacity and result.get("shareID") is not None:
                state.shared.add((*device_id, result["shareID"]))
                if result.get("consumedCapacity") is not None:
                    consumed = {k: cap.q(v) for k, v in result["consumedCapacity"].items()}
                    cap.add(state.capacity, device_id, consumed)
                continue
            state.allocated.add(device_id)
    return state
