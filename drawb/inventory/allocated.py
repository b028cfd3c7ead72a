"""Allocations kept per device under claim events, and the device frame they are joined onto."""

from __future__ import annotations

from typing import Any

import pandas as pd

from drawb.inventory._frame import Allocations
from drawb.inventory._read import list_items
from drawb.inventory.claims import allocations
from drawb.inventory.live import DeviceInventory

ClaimId = tuple[str, str]  # (namespace, name): the order claims are joined in
DeviceKey = tuple[str, str, str]  # (driver, pool, device)


def claim_id(obj: dict) -> ClaimId:
    """(namespace, name) of a claim, as ``claim_key`` spells them."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return (str(meta.get("namespace") or "default"), str(meta.get("name") or "?"))


class AllocationTable:
    """``table`` equals ``allocations(claims)`` of the claims held now in (namespace, name) order;
    an event recomputes only the devices of the claim it is about."""

    def __init__(self, claims: Any = ()) -> None:
        self.table: Allocations = {}
        self._own: dict[ClaimId, Allocations] = {}  # each claim's allocations on its own
        self._problems: dict[ClaimId, list[str]] = {}
        self._holders: dict[DeviceKey, set[ClaimId]] = {}
        for obj in list_items(claims):
            self.apply("ADDED", obj)

    def problems(self) -> list[str]:
        """Problems of the claims held now (results left out), in claim order."""
        return [p for key in sorted(self._problems) for p in self._problems[key]]

    def apply(self, event_type: str, obj: dict) -> set[DeviceKey]:
        """Apply one watch event (ADDED or MODIFIED upserts, DELETED deletes, others are ignored);
        the devices whose allocation changed."""
        if event_type not in ("ADDED", "MODIFIED", "DELETED") or not isinstance(obj, dict):
            return set()
        key = claim_id(obj)
        old = self._own.pop(key, {})
        self._problems.pop(key, None)
        new: Allocations = {}
        if event_type != "DELETED":
            problems: list[str] = []
            new = allocations([obj], problems)
            if new:
                self._own[key] = new
            if problems:
                self._problems[key] = problems
        for device in old.keys() - new.keys():
            holders = self._holders[device]
            holders.discard(key)
            if not holders:
                del self._holders[device]
        for device in new.keys() - old.keys():
            self._holders.setdefault(device, set()).add(key)
        changed = set()
        for device in old.keys() | new.keys():
            entry = self._merged(device)
            if entry != self.table.get(device):
                changed.add(device)
            if entry is None:
                self.table.pop(device, None)
            else:
                self.table[device] = entry
        return changed

    def _merged(self, device: DeviceKey) -> tuple[list[str], list[str], list[str]] | None:
        """The device's entry as ``allocations`` builds it from its holders in claim order."""
        holders = self._holders.get(device)
        if not holders:
            return None
        claims: list[str] = []
        requests: list[str] = []
        pods: list[str] = []
        for key in sorted(holders):
            names, reqs, reserved = self._own[key][device]
            claims += names
            requests += reqs
            pods += [p for p in reserved if p not in pods]
        return claims, requests, pods


class JoinedInventory:
    """The device frame with allocations joined, kept current under ResourceSlice and ResourceClaim
    events: ``frame`` equals ``join_allocations(device_frame(slices), allocations(claims))`` (claims in
    (namespace, name) order) with the claims' problems added, and no event re-joins the whole frame.

    A slice event re-reads that slice's rows, allocations included, and splices them in
    (``DeviceInventory``); a claim event updates the table for that claim's devices, and the next
    ``frame`` re-joins only those devices' rows.
    """

    def __init__(self, slices: Any = (), claims: Any = ()) -> None:
        self.claims = AllocationTable(claims)
        self.devices = DeviceInventory(slices, self.claims.table)
        self._stale: set[DeviceKey] = set()  # devices whose allocation changed since the last frame

    def apply(self, kind: str, event_type: str, obj: dict) -> None:
        """Apply one watch event of a ``ResourceSlice`` or a ``ResourceClaim``."""
        if kind == "ResourceSlice":
            self.devices.apply(event_type, obj)  # rows read now take their allocations from the table
        elif kind == "ResourceClaim":
            self._stale |= self.claims.apply(event_type, obj)
        else:
            raise ValueError(f"JoinedInventory follows ResourceSlice and ResourceClaim events, not {kind!r}")

    @property
    def frame(self) -> pd.DataFrame:
        """The current frame (a shallow copy: changing it leaves the inventory alone)."""
        if self._stale:
            self.devices.reallocate(self._stale)
            self._stale = set()
        frame = self.devices.frame
        problems = self.claims.problems()
        if problems:
            info = frame.attrs["drawb"]
            frame.attrs = {**frame.attrs, "drawb": {**info, "problems": [*info["problems"], *problems]}}
        return frame
