"""Devices already in use, gathered from allocated claims as the scheduler's claim tracker does:
admin-access results never count; with DRAConsumableCapacity on, results with a ``shareID`` are
shared and only add their ``consumedCapacity``; every other result makes its device unavailable."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc import capacity as cap
from drawb.memo import Table

DeviceID = tuple[str, str, str]
PoolID = tuple[str, str]


@dataclass
class AllocatedState:
    """``structured.AllocatedState``."""

    allocated: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[str, str, str, str]] = field(default_factory=set)
    capacity: dict[DeviceID, cap.Consumed] = field(default_factory=dict)


_per_claim: Table[tuple] = Table("a claim's devices in use", 200_000)  # per claim and consumable_capacity


def _contribution(claim: Mapping[str, Any], consumable_capacity: bool) -> tuple:
    """(dedicated ids, shared ids, consumed capacity) of one claim, remembered per claim object stamped
    with its ``status.allocation`` object (a claim whose allocation is replaced is read again)."""
    allocation = (claim.get("status") or {}).get("allocation")
    cached = _per_claim.get(claim, consumable_capacity, allocation)
    if cached is not None:
        return cached
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
    return _per_claim.put(claim, (tuple(dedicated), tuple(shared), tuple(consumed_list)), consumable_capacity,
                          allocation)


_states: Table[AllocatedState] = Table("devices in use", 200_000)  # per list of claims and consumable_capacity
_INCREMENTAL = 256  # claims: from this many on, a state is made from the last one by the claims that changed


@dataclass
class Tally:
    """How a large AllocatedState was counted, so the next one can be made from it by the claims added
    and removed: each claim's contribution, and per pool how many claims hold each device (two claims
    may hold the same device) or each share of it."""

    contributions: dict[int, tuple[Mapping[str, Any], Any, tuple]]  # id(claim) -> (claim, allocation, contribution)
    dedicated: dict[PoolID, dict[str, int]]
    shared: dict[PoolID, dict[tuple[str, str], int]]
    since: tuple[tuple[AllocatedState, frozenset[PoolID]], ...] = ()  # earlier states (the last few), and the
    # pools whose devices in use differ from theirs


_HISTORY = 4


_tallies: dict[bool, tuple[AllocatedState, Tally]] = {}


def tally_of(state: AllocatedState) -> Tally | None:
    """The tally of a state made by ``gather_allocated`` from many claims (None for others)."""
    for made, tally in _tallies.values():
        if made is state:
            return tally
    return None


def changed_since(state: AllocatedState, earlier: AllocatedState) -> frozenset[PoolID] | None:
    """The pools whose devices in use (dedicated or shared) differ between ``earlier`` and ``state``,
    when ``state`` was made from it by ``gather_allocated`` not long ago (None when unknown)."""
    if state is earlier:
        return frozenset()
    tally = tally_of(state)
    for made, changed in tally.since if tally else ():
        if made is earlier:
            return changed
    return None


def gather_allocated(claims: Iterable[Mapping[str, Any]], consumable_capacity: bool) -> AllocatedState:
    """The AllocatedState of these claims' ``status.allocation`` (remembered for the same claims with
    the same allocation objects; callers must not modify it)."""
    claims = list(claims)
    allocations = [(c.get("status") or {}).get("allocation") for c in claims]
    stamp = tuple(allocations)
    cached = _states.get_all(claims, consumable_capacity, stamp)
    if cached is not None:
        return cached
    state = None
    if len(claims) >= _INCREMENTAL and consumable_capacity in _tallies:
        state = _from_last(claims, allocations, consumable_capacity)
    if state is None:
        state = _count(claims, allocations, consumable_capacity)
    return _states.put_all(claims, state, consumable_capacity, stamp)


def _count(claims: list, allocations: list, consumable_capacity: bool) -> AllocatedState:
    """The state of ``claims`` counted from nothing (with its tally, for many claims)."""
    state = AllocatedState()
    contributions = {}
    for claim, allocation in zip(claims, allocations):
        contribution = _contribution(claim, consumable_capacity)
        contributions[id(claim)] = (claim, allocation, contribution)
        dedicated, shared, consumed_list = contribution
        state.allocated.update(dedicated)
        state.shared.update(shared)
        for device_id, consumed in consumed_list:
            cap.add(state.capacity, device_id, dict(consumed))
    if len(claims) >= _INCREMENTAL:
        tally = Tally(contributions, {}, {})
        for _, _, (dedicated, shared, _) in contributions.values():
            _count_in(tally, dedicated, shared, 1)
        _tallies[consumable_capacity] = (state, tally)
    return state


def _count_in(tally: Tally, dedicated: Iterable[DeviceID], shared: Iterable[tuple], step: int) -> None:
    """Count one claim's devices and shares in (``step`` 1) or out (-1)."""
    for driver, pool, name in dedicated:
        counts = tally.dedicated.setdefault((driver, pool), {})
        counts[name] = counts.get(name, 0) + step
        if not counts[name]:
            del counts[name]
    for driver, pool, name, share in shared:
        counts = tally.shared.setdefault((driver, pool), {})
        counts[(name, share)] = counts.get((name, share), 0) + step
        if not counts[(name, share)]:
            del counts[(name, share)]


def _from_last(claims: list, allocations: list, consumable_capacity: bool) -> AllocatedState | None:
    """The state of ``claims`` made from the last large one by the claims added and removed; None when
    that is not cheaper, or when consumed capacity changes (counted from nothing then)."""
    last, old = _tallies[consumable_capacity]
    now = {id(c): (c, a) for c, a in zip(claims, allocations)}
    if len(now) != len(claims):
        return None  # the same claim twice
    gone = [entry for i, entry in old.contributions.items()
            if i not in now or now[i][0] is not entry[0] or now[i][1] is not entry[1]]
    came = [(claim, allocation, _contribution(claim, consumable_capacity)) for i, (claim, allocation) in now.items()
            if i not in old.contributions or old.contributions[i][0] is not claim or old.contributions[i][1] is not allocation]
    if len(gone) + len(came) > len(claims) // 2 or any(entry[2][2] for entry in (*gone, *came)):
        return None
    touched = {(d, p) for entry in (*gone, *came) for d, p, *_ in (*entry[2][0], *entry[2][1])}
    tally = Tally(dict(old.contributions), dict(old.dedicated), dict(old.shared))
    for pool in touched:  # copied before counting: the last tally's counts stay as they were
        tally.dedicated[pool] = dict(tally.dedicated.get(pool) or {})
        tally.shared[pool] = dict(tally.shared.get(pool) or {})
    for claim, _, (dedicated, shared, _) in gone:
        del tally.contributions[id(claim)]
        _count_in(tally, dedicated, shared, -1)
    for claim, allocation, contribution in came:
        tally.contributions[id(claim)] = (claim, allocation, contribution)
        _count_in(tally, contribution[0], contribution[1], 1)
    state = AllocatedState(set(last.allocated), set(last.shared), dict(last.capacity))
    changed = set()
    for driver, pool in touched:
        before, after = (old.dedicated.get((driver, pool)) or {}).keys(), tally.dedicated[(driver, pool)].keys()
        shared_before, shared_after = (old.shared.get((driver, pool)) or {}).keys(), tally.shared[(driver, pool)].keys()
        if before != after or shared_before != shared_after:
            changed.add((driver, pool))
        state.allocated.difference_update((driver, pool, name) for name in before - after)
        state.allocated.update((driver, pool, name) for name in after - before)
        state.shared.difference_update((driver, pool, *share) for share in shared_before - shared_after)
        state.shared.update((driver, pool, *share) for share in shared_after - shared_before)
        for counts in (tally.dedicated, tally.shared):
            if not counts[(driver, pool)]:
                del counts[(driver, pool)]
    tally.since = ((last, frozenset(changed)),
                   *((made, earlier | changed) for made, earlier in old.since[:_HISTORY - 1]))
    _tallies[consumable_capacity] = (state, tally)
    return state
