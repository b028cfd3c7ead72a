"""The one index of a cluster's allocated claims: the claims holding devices of each pool, and the
claims holding each device (with their admin access), in the claims' order.

``preview``, ``capacity`` and the simulated scheduler read it per pool (``PlanState``), ``why`` per
device (``Holders``: who holds it). The last index made is remembered: asked again for the same claims (the same
objects in the same order) it is returned as it is; for other claims it is made from the last one,
indexing again only the claims added or removed (objects of a cluster are replaced whole: an informer's
store replaces them, the simulated store's raise on a change), and it knows which pools changed. An index
is read-only.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Obj = Mapping[str, Any]
PoolID = tuple[str, str]
DeviceID = tuple[str, str, str]


def same_objects(a: Sequence[Obj], b: Sequence[Obj]) -> bool:
    """Whether two lists hold the same objects in the same order (objects of a cluster are replaced
    whole: see the module)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))  # map over a builtin: 5x a generator's speed


def _held(claim: Obj) -> Iterator[tuple[PoolID, DeviceID, bool]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    for r in (allocation.get("devices") or {}).get("results") or ():
        driver, pool = r.get("driver", ""), r.get("pool", "")
        yield (driver, pool), (driver, pool, r.get("device", "")), bool(r.get("adminAccess"))


def _distinct(objects: Sequence[Obj]) -> bool:
    return len({id(o) for o in objects}) == len(objects)


class ClaimIndex:
    """The claims holding devices of each pool (``by_pool``) and each device (``by_device``)."""

    def __init__(self, claims: Sequence[Obj], by_pool: dict[PoolID, list[Obj]],
                 by_device: dict[DeviceID, list[tuple[Obj, bool]]], base: ClaimIndex | None = None,
                 changed: frozenset[PoolID] = frozenset()) -> None:
        self.claims = list(claims)
        self.by_pool = by_pool
        self.by_device = by_device
        self._base = weakref.ref(base) if base is not None else None
        self._changed = changed

    @classmethod
    def of(cls, claims: Sequence[Obj]) -> ClaimIndex:
        """The index of ``claims``, made in full."""
        by_pool: dict[PoolID, list[Obj]] = {}
        by_device: dict[DeviceID, list[tuple[Obj, bool]]] = {}
        for claim in claims:
            for pool, device, admin in _held(claim):
                holders = by_pool.setdefault(pool, [])
                if not holders or holders[-1] is not claim:
                    holders.append(claim)
                by_device.setdefault(device, []).append((claim, admin))
        return cls(claims, by_pool, by_device)

    def updated(self, claims: Sequence[Obj]) -> ClaimIndex:
        """The index of ``claims`` made from this one: the entries of the claims added or removed (by
        identity) are taken out or put in, each changed list in ``claims``' order."""
        old_ids, new_ids = {id(c): c for c in self.claims}, {id(c): c for c in claims}
        removed = old_ids.keys() - new_ids.keys()
        added = [c for i, c in new_ids.items() if i not in old_ids]
        position = {id(c): n for n, c in enumerate(claims)}
        by_pool, by_device = dict(self.by_pool), dict(self.by_device)
        pools: dict[PoolID, list[Obj]] = {}
        devices: dict[DeviceID, list[tuple[Obj, bool]]] = {}
        for claim, is_new in [*((old_ids[i], False) for i in removed), *((c, True) for c in added)]:
            for pool, device, admin in _held(claim):
                kept = pools.setdefault(pool, [c for c in self.by_pool.get(pool, ()) if id(c) not in removed])
                entries = devices.setdefault(device, [e for e in self.by_device.get(device, ()) if id(e[0]) not in removed])
                if is_new:
                    if not kept or kept[-1] is not claim:
                        kept.append(claim)
                    entries.append((claim, admin))
        for pool, kept in pools.items():
            _put(by_pool, pool, sorted(kept, key=lambda c: position[id(c)]))
        for device, entries in devices.items():
            _put(by_device, device, sorted(entries, key=lambda e: position[id(e[0])]))
        return ClaimIndex(claims, by_pool, by_device, base=self, changed=frozenset(pools))

    def changed_since(self, other: ClaimIndex | None) -> frozenset[PoolID] | None:
        """The pools whose claims differ from ``other``'s (None when unknown: treat every pool as changed)."""
        if other is self:
            return frozenset()
        if other is not None and self._base is not None and self._base() is other:
            return self._changed
        return None


@dataclass
class Holder:
    """A claim holding a device, and the pods it is reserved for."""

    claim: str  # namespace/name
    pods: list[str]  # namespace/name of the pods in reservedFor
    admin: bool = False

    def __str__(self) -> str:
        return f"claim {self.claim}" + (f" (pod {', '.join(self.pods)})" if self.pods else " (no pod)")


class Holders(Mapping):
    """Device -> the Holders of it (admin-access results too, marked), read from an index; a device's
    Holders are made when asked for."""

    def __init__(self, index: ClaimIndex) -> None:
        self._by_device = index.by_device
        self._made: dict[DeviceID, list[Holder]] = {}

    def __getitem__(self, device_id: DeviceID) -> list[Holder]:
        made = self._made.get(device_id)
        if made is None:
            made = self._made[device_id] = [_holder(claim, admin) for claim, admin in self._by_device[device_id]]
        return made

    def __iter__(self) -> Iterator[DeviceID]:
        return iter(self._by_device)

    def __len__(self) -> int:
        return len(self._by_device)

    def __contains__(self, device_id: object) -> bool:
        return device_id in self._by_device


def _holder(claim: Obj, admin: bool) -> Holder:
    meta = claim.get("metadata") or {}
    namespace = meta.get("namespace", "")
    reserved = (claim.get("status") or {}).get("reservedFor") or []
    pods = [f"{namespace}/{r.get('name', '')}" for r in reserved if r.get("resource") == "pods"]
    return Holder(f"{namespace}/{meta.get('name', '')}", pods, admin)


def _put(into: dict, key: Any, value: list) -> None:
    if value:
        into[key] = value
    else:
        into.pop(key, None)


_last: list[ClaimIndex] = []


def claim_index(claims: Sequence[Obj]) -> ClaimIndex:
    """The index of ``claims``: the last one when they are the same objects, else made from it."""
    last = _last[0] if _last else None
    if last is not None and same_objects(last.claims, claims):
        return last
    if last is not None and _distinct(claims) and _distinct(last.claims):
        index = last.updated(claims)
    else:
        index = ClaimIndex.of(claims)
    _last[:] = [index]
    return index
