"""Pool status: per resource pool, its devices total, allocated, available and unavailable, in the shape
of the answer to a ``ResourcePoolStatusRequest`` (KEP-5677, ``resource.k8s.io/v1alpha3``), counted as the
allocator counts them; and where a cluster's own answer differs, why.

A pool is its slices of the newest generation; fewer than ``resourceSliceCount`` of them make it
incomplete (a ``validationError``, no counts, as the server says). A device is allocated when a claim's
allocation result holds it (admin access only observes); an unallocated device is unavailable when the
allocator would not give it to a request without tolerations: a taint that blocks allocation (its own,
or a DeviceTaintRule's while the rules' gate is on; NoSchedule and NoExecute, every effect in 1.34), or
shared counters the allocated devices have used up (``drawb.alloc.counters``, in the version's scope).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from drawb.alloc.counters import CounterBook
from drawb.alloc.pools import Pool
from drawb.alloc.rules import rules_for
from drawb.alloc.taintrules import with_rule_taints
from drawb.alloc.taints import BLOCKING
from drawb.alloc.versions import flavor as resolve_flavor

Obj = Mapping[str, Any]
PoolID = tuple[str, str]
DeviceID = tuple[str, str, str]


@dataclass
class PoolCount:
    """One pool's counts (None where the pool is incomplete)."""

    driver: str
    pool: str
    generation: int
    node: str | None
    slices: int
    total: int | None = None
    allocated: int | None = None
    available: int | None = None
    unavailable: int | None = None
    tainted: int = 0  # unavailable: a blocking taint
    counters: int = 0  # unavailable: shared counters used up
    results: int = 0  # allocation results on the pool's devices (a shared device once per claim; admin access too)
    tainted_allocated: int = 0  # allocated devices with a blocking taint
    validation_error: str | None = None

    def to_api(self) -> dict[str, Any]:
        """This pool as a ``PoolStatus`` of the server's answer."""
        out: dict[str, Any] = {"driver": self.driver, "poolName": self.pool, "generation": self.generation}
        if self.node:
            out["nodeName"] = self.node
        if self.validation_error:
            out["validationError"] = self.validation_error
            return out
        out.update(resourceSliceCount=self.slices, totalDevices=self.total, allocatedDevices=self.allocated,
                   availableDevices=self.available, unavailableDevices=self.unavailable)
        return out


@dataclass
class PoolStatus:
    """Every pool, sorted by driver then pool name (the server's order)."""

    pools: list[PoolCount] = field(default_factory=list)

    def to_api(self) -> dict[str, Any]:
        """The status of a ``ResourcePoolStatusRequest`` answered by drawb, with drawb's reasons per pool."""
        return {"poolCount": len(self.pools), "pools": [
            {**p.to_api(), "drawb": {"tainted": p.tainted, "sharedCountersUsedUp": p.counters}} for p in self.pools]}


def pool_status(slices: Sequence[Obj], claims: Sequence[Obj], taint_rules: Sequence[Obj], kubernetes_version: str,
                feature_gates: Mapping[str, bool] | None, driver: str | None = None) -> PoolStatus:
    """The status of every pool (of ``driver`` alone when given)."""
    return _pool_status(slices, claims, taint_rules, kubernetes_version, feature_gates, driver)


def _pool_status(slices, claims, taint_rules, kubernetes_version, feature_gates, driver) -> PoolStatus:
    flavor = resolve_flavor(kubernetes_version, feature_gates)
    rules = rules_for(flavor)
    newest: dict[PoolID, int] = {}
    for rs in slices:
        spec = rs["spec"]
        if driver is None or spec.get("driver") == driver:
            key = (spec.get("driver", ""), spec["pool"].get("name", ""))
            newest[key] = max(newest.get(key, 0), int(spec["pool"].get("generation") or 0))
    grouped: dict[PoolID, list[Obj]] = {}
    for rs in slices:
        spec = rs["spec"]
        key = (spec.get("driver", ""), spec["pool"].get("name", ""))
        if key in newest and int(spec["pool"].get("generation") or 0) == newest[key]:
            grouped.setdefault(key, []).append(rs)
    held: dict[PoolID, set[str]] = {}  # the devices allocation results hold, per pool
    results: dict[PoolID, int] = {}
    for claim in claims:
        for r in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ():
            pool = (r.get("driver", ""), r.get("pool", ""))
            if pool not in grouped:
                continue
            results[pool] = results.get(pool, 0) + 1
            if not r.get("adminAccess"):
                held.setdefault(pool, set()).add(r.get("device", ""))
    status = PoolStatus()
    empty: set[str] = set()
    for key in sorted(grouped):
        status.pools.append(_count(key, grouped[key], held.get(key, empty), results.get(key, 0), taint_rules, rules))
    return status


def _blocking(taints, rules) -> bool:
    return any(rules.taint_effects_all or (t.get("effect") or "") in BLOCKING for t in taints)


def _count(key: PoolID, slices: list[Obj], held: set[str], results: int, taint_rules: Sequence[Obj], rules) -> PoolCount:
    first = slices[0]["spec"]
    nodes = {rs["spec"].get("nodeName") for rs in slices}
    node = next(iter(nodes)) if len(nodes) == 1 else None
    count = PoolCount(key[0], key[1], int(first["pool"].get("generation") or 0), node, len(slices), results=results)
    expected = int(first["pool"].get("resourceSliceCount") or 0)
    if len(slices) < expected:
        count.validation_error = (f"pool {key[0]}/{key[1]} is incomplete: observed {len(slices)}/{expected} slices at "
                                  f"generation {count.generation}")
        return count
    if taint_rules and rules.taints:
        slices = with_rule_taints(slices, taint_rules)
    book = pool = None
    total = allocated = 0
    for rs in slices:
        for device in rs["spec"].get("devices") or ():
            total += 1
            taints = device.get("taints") if rules.taints else None
            blocked = bool(taints) and _blocking(taints, rules)
            if device.get("name", "") in held:
                allocated += 1
                count.tainted_allocated += blocked
            elif blocked:
                count.tainted += 1
            elif rules.partitionable and device.get("consumesCounters"):
                if book is None:  # the allocator's counter book, over the devices held
                    book = CounterBook(lambda d: d[0] == key[0] and d[1] == key[1] and d[2] in held, rules.counter_scope)
                    pool = _pool_of(key, slices)
                candidate = SimpleNamespace(slice=rs)
                if book.take(device, candidate, pool):
                    book.release(device, candidate, pool)
                else:
                    count.counters += 1
    count.total, count.allocated = total, allocated
    count.unavailable = count.tainted + count.counters
    count.available = total - allocated - count.unavailable
    return count


def _pool_of(key: PoolID, slices: list[Obj]) -> Pool:
    """The pool as the allocator's counter book reads it: its slices and its counter sets by name."""
    counter_sets = {c.get("name", ""): c for rs in slices for c in rs["spec"].get("sharedCounters") or ()}
    return Pool(key[0], key[1], 0, slices=list(slices), counter_sets=counter_sets)


@dataclass
class Difference:
    """Where the cluster's answer for a pool differs from drawb's, and why."""

    driver: str
    pool: str
    field: str
    drawb: Any
    server: Any
    why: str


def differences(ours: PoolStatus, server: Mapping[str, Any], counts_taints: bool) -> list[Difference]:
    """Each field of the server's ``status`` that differs from drawb's, with the reason (``counts_taints``:
    the server's version counts tainted devices as unavailable and a shared device once, 1.37's controller)."""
    theirs = {(p.get("driver"), p.get("poolName")): p for p in server.get("pools") or ()}
    found = []
    for count in ours.pools:
        api = count.to_api()
        other = theirs.get((count.driver, count.pool))
        if other is None:
            if (server.get("poolCount") or 0) > len(server.get("pools") or ()):
                continue  # beyond the server's limit
            found.append(Difference(count.driver, count.pool, "pool", "present", "absent",
                                    "the server's answer leaves the pool out"))
            continue
        for name in ("totalDevices", "allocatedDevices", "unavailableDevices", "availableDevices", "validationError"):
            if api.get(name) != other.get(name):
                found.append(Difference(count.driver, count.pool, name, api.get(name), other.get(name),
                                        _why(name, count, other, counts_taints)))
    for key in theirs.keys() - {(c.driver, c.pool) for c in ours.pools}:
        found.append(Difference(key[0], key[1], "pool", "absent", "present", "drawb sees no slice of this pool"))
    return found


def _why(name: str, count: PoolCount, other: Mapping[str, Any], counts_taints: bool) -> str:
    if name == "allocatedDevices":
        if not counts_taints and other.get(name) == count.results:
            return (f"the server counts allocation results ({count.results}), drawb devices ({count.allocated}): "
                    "a shared device or an admin-access result counts once per claim there")
        return "the claims changed between the two reads"
    if name == "unavailableDevices":
        parts = []
        if not counts_taints and count.tainted:
            parts.append(f"{count.tainted} tainted device(s): the server's alpha controller does not look at taints")
        if counts_taints and count.tainted_allocated:
            parts.append(f"{count.tainted_allocated} allocated device(s) are tainted: the server counts them unavailable "
                         "too, drawb as allocated")
        if count.counters:
            parts.append(f"{count.counters} device(s) whose shared counters are used up: the server does not count "
                         "shared counters")
        return "; ".join(parts) or "the slices or rules changed between the two reads"
    if name == "availableDevices":
        return "follows from allocated and unavailable"
    return "the slices changed between the two reads"
