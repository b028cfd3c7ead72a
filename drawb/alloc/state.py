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


_LIMIT = 200_000
_per_claim: dict[tuple[int, bool], tuple[Mapping[str, Any], Any, tuple]] = {}


def _contribution(claim: Mapping[str, Any], consumable_capacity: bool) -> tuple:
    """(dedicated ids, shared ids, consumed capacity) of one claim, remembered per claim object and
    its ``status.allocation`` object (a claim whose allocation is replaced is read again)."""
    key = (id(claim), consumable_capacity)
    allocation = (claim.get("status") or {}).get("allocation")
    cached = _per_claim.get(key)
    if cached is not None and cached[0] is claim and cached[1] is allocation:
        return cached[2]
    dedicated, shared, consumed_list = [], [], []
    for result in ((allocation or {}).get("devices") or {}).get("results") or []:
        if result.get("adminAccess"):
            continue
        device_id = (result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
        if consumable_capacity and result.get("shareID") is not None:
            shared.append((*device_id, result["shareID"]))
            if result.get("consumedCapacity") is not None:
                consumed_list.append((device_id, {k: cap.q(v) for k, v in result["consumedCapacity"].items()}))
            continue
        dedicated.append(device_id)
    contribution = (tuple(dedicated), tuple(shared), tuple(consumed_list))
    if len(_per_claim) > _LIMIT:
        _per_claim.clear()
    _per_claim[key] = (claim, allocation, contribution)
    return contribution


_states: dict[tuple, tuple[list, list, AllocatedState]] = {}


def gather_allocated(claims: Iterable[Mapping[str, Any]], consumable_capacity: bool) -> AllocatedState:
    """The AllocatedState of these claims' ``status.allocation`` (remembered for the same claims with
    the same allocation objects; callers must not modify it)."""
    claims = list(claims)
    allocations = [(c.get("status") or {}).get("allocation") for c in claims]
    key = (consumable_capacity, len(claims), *map(id, claims))
    cached = _states.get(key)
    if (cached is not None and all(a is b for a, b in zip(cached[0], claims))
            and all(a is b for a, b in zip(cached[1], allocations))):  # fmt: skip
        return cached[2]
    state = AllocatedState()
    for claim in claims:
        dedicated, shared, consumed_list = _contribution(claim, consumable_capacity)
        state.allocated.update(dedicated)
        state.shared.update(shared)
        for device_id, consumed in consumed_list:
            cap.add(state.capacity, device_id, dict(consumed))
    if len(_states) > 64:
        _states.clear()
    _states[key] = (claims, allocations, state)
    return state
