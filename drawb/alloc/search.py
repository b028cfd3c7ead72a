"""The allocator's search (``allocateOne`` / ``allocateDevice``): depth first over claims,
requests and device slots, each slot trying pools, slices and devices in order; the first complete
solution wins, with backtracking into earlier requests and claims."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from drawb.alloc import capacity as cap
from drawb.alloc.compat import CompatibilityBook
from drawb.alloc.counters import CounterBook
from drawb.alloc.derived import DerivedAttributes
from drawb.alloc.errors import AllocationError, SchedulerCrash
from drawb.alloc.nodes import node_matches
from drawb.alloc.pools import Pool
from drawb.alloc.requests import ALL, RequestData
from drawb.alloc.rules import Rules
from drawb.alloc.selectors import SelectorEvaluator
from drawb.alloc.slices import Candidate, info
from drawb.alloc.state import AllocatedState
from drawb.alloc.taints import all_tolerated
from drawb.api.nodeaffinity import NodeSelectorError

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize

DeviceID = tuple[str, str, str]
Key = tuple[int, int, int]  # claim, request, subrequest


class MaxSizeExceeded(Exception):
    """``errAllocationResultMaxSizeExceeded``: this branch cannot stay within 32 results."""


class DeviceResult:
    """One tentatively allocated device."""

    __slots__ = ("request", "parent", "candidate", "share_id", "consumed", "admin_access", "request_obj")

    def __init__(self, request: Any, parent: str, candidate: Candidate, share_id: str | None, consumed: dict | None, admin: bool):
        self.request_obj, self.request, self.parent, self.candidate = request, request.name, parent, candidate
        self.share_id, self.consumed, self.admin_access = share_id, consumed, admin

    @property
    def tolerations(self) -> list:
        return self.request_obj.tolerations

    @property
    def request_name(self) -> str:
        return f"{self.parent}/{self.request}" if self.parent else self.request


class Search:
    """State of one ``Allocate`` call on one node."""

    def __init__(self, claims: list, node: Mapping[str, Any] | None, pools: list[Pool], rules: Rules,
                 state: AllocatedState, evaluator: SelectorEvaluator) -> None:  # fmt: skip
        self.claims, self.node, self.pools, self.rules = claims, node, pools, rules
        self.state, self.evaluator = state, evaluator
        self.request_data: dict[Key, RequestData] = {}
        self.constraints: list[list] = [[] for _ in claims]
        self.results: list[list[DeviceResult]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, cap.Consumed] = {}
        self.counters = CounterBook(self._counts_as_allocated, rules.counter_scope)
        self.compatibility = CompatibilityBook(self._counts_as_allocated)
        self.derived = DerivedAttributes(rules.flavor.minor)
        self.matches: dict[tuple, bool] = {}
        self.invocations = 0
        self.request_counts = [len(((c.get("spec") or {}).get("devices") or {}).get("requests") or []) for c in self.claims]
        self.claim_owners = [f"claim {rules.kobj(claim)}" for claim in self.claims]
        self.pool_of = {(pool.driver, pool.name): pool for pool in pools}
        self.by_pool: dict[int, list[Candidate]] = {
            id(pool): [c for s in pool.slices for c in info(s).candidates] for pool in pools
        }
        self.flat = [c for pool in pools for c in self.by_pool[id(pool)]]
        self.unusable = {key for key, pool in self.pool_of.items() if pool.invalid or pool.incomplete}

    # --- selection --------------------------------------------------------------------------

    def selectable(self, key: Key, data: RequestData, candidate: Candidate) -> bool:
        """Class then request selectors, then per-device node selection (``isSelectable``)."""
        device = candidate.device
        if not self.rules.binding and device.get("bindingConditions"):
            return False
        match_key = (candidate.id, key)
        cached = self.matches.get(match_key)
        if cached is not None:
            return cached
        evaluator = self.evaluator
        result = True
        if data.class_selectors:
            result = evaluator.matches(data.class_selectors, device, candidate.id, data.class_owner)
        if result and data.request.selectors:
            result = evaluator.matches(data.request.selectors, device, candidate.id, self.claim_owners[key[0]])
        if result and (candidate.slice.get("spec") or {}).get("perDeviceNodeSelection"):
            try:
                result = node_matches(self.node, device.get("nodeName") or "", bool(device.get("allNodes")), device.get("nodeSelector"))
            except NodeSelectorError as err:
                raise AllocationError(f"failed to parse node selector: {err}") from None
        self.matches[match_key] = result
        return result

    def capacity_fits(self, data: RequestData, device: Mapping[str, Any], device_id: DeviceID, claim_i: int,
                      verb: str = "checking", state: bool = True) -> bool:  # fmt: skip
        """Whether the request fits the device's remaining capacity (False for an unknown capacity name);
        1.37 aborts with AllocationError when the rounding cannot be computed."""
        rules = self.rules
        try:
            return cap.fits(self.state.capacity.get(device_id) if state else None, cap.requests_of(data.request.capacity),
                            device, self.allocating_capacity.get(device_id) if state else None,
                            rules.checked_range_arithmetic, rules.fractional)  # fmt: skip
        except cap.UnknownCapacity:
            return False
        except cap.NotRepresentable as err:
            claim = self.claims[claim_i]
            raise AllocationError(
                f"claim {rules.kobj(claim)}, request {data.request.name}: {verb} capacity for device "
                f"{'/'.join(device_id) if state else device_id[2]}: {err}"
            ) from None

    def _counts_as_allocated(self, device_id: DeviceID) -> bool:
        """Whether an allocated device's counters are taken (1.36+: shared allocations count too)."""
        if device_id in self.state.allocated:
            return True
        return self.rules.shared_consume_counters and any(s[:3] == device_id for s in self.state.shared)

    def in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.state.allocated or bool(self.allocating.get(device_id))

    def in_use_by_claim(self, device_id: DeviceID, claim_index: int) -> bool:
        return claim_index in self.allocating.get(device_id, ())

    # --- search -----------------------------------------------------------------------------

    def allocate_one(self, claim_i: int, request_i: int, sub_i: int, device_i: int, in_sub: bool, start: int = 0) -> bool:
        """True once everything from this slot on is allocated; MaxSizeExceeded or AllocationError otherwise.

        ``start`` is the first candidate to try (1.36+ try combinations, not permutations, within a request)."""
        self.invocations += 1
        rules = self.rules
        if claim_i >= len(self.claims):
            return True
        if request_i >= self.request_counts[claim_i]:
            try:
                return self.allocate_one(claim_i + 1, 0, 0, 0, False)
            except MaxSizeExceeded:
                return False
        key = (claim_i, request_i, sub_i)
        data = self.request_data[key]

        if not in_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (claim_i, request_i, sub) not in self.request_data:
                    if all_exceeded and rules.max_size_error:
                        raise MaxSizeExceeded
                    return False
                try:
                    success = self.allocate_one(claim_i, request_i, sub, device_i, True)
                except MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    data.selected_sub = sub
                    return True
                sub += 1

        request = data.request
        do_all = request.mode == ALL
        if do_all and not data.all_devices:
            return False
        if device_i >= data.num_devices:
            return self.allocate_one(claim_i, request_i + 1, 0, 0, False)
        if len(self.results[claim_i]) + data.num_devices - device_i > MAX_RESULTS:
            if rules.max_size_error:
                raise MaxSizeExceeded
            return False

        if do_all:
            candidate = data.all_devices[device_i]
            undo = self.allocate_device(claim_i, request_i, sub_i, device_i, candidate, True)
            if undo is None:
                return False
            # 1.34 and 1.35 drop the subrequest index here (quirk: the next slot reads subrequest 0).
            next_sub = sub_i if rules.all_keeps_subrequest else 0
            try:
                done = self.allocate_one(claim_i, request_i, next_sub, device_i + 1, in_sub)
            except MaxSizeExceeded:
                undo()
                raise
            if not done:
                undo()
            return done

        candidates = self.flat
        for position in range(start, len(candidates)):
            candidate = candidates[position]
            if self.unusable and candidate.pool_key in self.unusable:
                pool = self.pool_of[candidate.pool_key]
                if rules.invalid_pool_error and pool.invalid:
                    raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
                if rules.skip_unusable_pools:
                    continue
            device_id = candidate.id
            if request.admin_access:
                if self.in_use_by_claim(device_id, claim_i):
                    continue
            elif self.in_use(device_id):
                continue
            if not self.selectable(key, data, candidate):
                continue
            if rules.consumable_capacity and not self.capacity_fits(data, candidate.device, device_id, claim_i):
                continue
            undo = self.allocate_device(claim_i, request_i, sub_i, device_i, candidate, False)
            if undo is None:
                continue
            following = position + 1 if rules.combinations else 0
            try:
                done = self.allocate_one(claim_i, request_i, sub_i, device_i + 1, in_sub, following)
            except MaxSizeExceeded:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    def pool_candidates(self, pool: Pool) -> list[Candidate]:
        """The pool's devices, slice by slice, in order."""
        return self.by_pool[id(pool)]

    def allocate_device(self, claim_i: int, request_i: int, sub_i: int, device_i: int, candidate: Candidate, must: bool):
        """Tentatively allocate one selectable candidate; returns the undo function, or None if it cannot be used.

        Until 1.35 a rejected candidate keeps whatever it had taken (counters, constraint entries,
        the in-use mark) as the Go code does; 1.36 rolls every step back."""
        rules = self.rules
        data = self.request_data[(claim_i, request_i, sub_i)]
        request = data.request
        device, device_id = candidate.device, candidate.id
        shared = rules.consumable_capacity and bool(device.get("allowMultipleAllocations"))
        if request.admin_access:
            if not shared and self.in_use_by_claim(device_id, claim_i):
                return None
        elif self.in_use(device_id):
            return None
        if rules.node_operations and (candidate.slice.get("spec") or {}).get("skipNodeOperations"):
            if not rules.flavor.has("OptionalNodeOperations"):
                return None
            declared = ((self.node or {}).get("status") or {}).get("declaredFeatures") or []
            if "DRAOptionalNodeOperations" not in declared:
                return None
        consumes = device.get("consumesCounters")
        if consumes and not rules.partitionable:
            return None
        pool = self.pool_of[candidate.pool_key]
        skip_counters = rules.skip_shared_counters and shared and self.capacity_in_use(device_id)
        ungroup = None
        if rules.compatibility_groups and consumes and not skip_counters:
            ungroup = self.compatibility.take(device, pool)
            if ungroup is None:
                return None
        counters_taken = False
        if consumes and not skip_counters and must and rules.all_mode_counters_crash:
            release = rules.flavor.version_rules
            raise SchedulerCrash(
                f"claim {rules.kobj(self.claims[claim_i])}, request {request.name}: kube-scheduler {release.version} "
                f"crashes here (a nil pointer dereference in its allocator: device {device_id[2]} of an allocationMode "
                f"All request consumes shared counters), so the pod gets no verdict; "
                f"{release.fixed_in('alloc.all_mode_devices_know_their_pool')} and later allocate it")
        if consumes and not skip_counters:
            if not self.counters.take(device, candidate, pool):
                if ungroup is not None:
                    ungroup()
                return None
            counters_taken = True
        rollback = rules.rollback
        constraints = self.constraints[claim_i]
        added = 0
        holders = self.allocating.setdefault(device_id, set())
        marked = False
        capacity_before = device_id in self.allocating_capacity

        if data.parent is None:
            base, sub_name = request.name, ""
        else:
            base, sub_name = data.parent.name, request.name

        def reject() -> None:
            if not rollback:
                return
            if marked:
                holders.discard(claim_i)
            for constraint in reversed(constraints[:added]):
                constraint.remove(base, sub_name, device, device_id)
            if counters_taken:
                self.counters.release(device, candidate, pool)
            if ungroup is not None:
                ungroup()

        if rules.taints and not all_tolerated(device.get("taints") or [], request.tolerations, rules):
            reject()
            return None
        for constraint in constraints:
            if request.derived:
                constraint.derived = (self.derived, request.derived)
            try:
                fits = constraint.add(base, sub_name, device, device_id)
            finally:
                constraint.derived = None
            if not fits:
                if rollback:
                    reject()
                else:
                    for previous in constraints[:added]:
                        previous.remove(base, sub_name, device, device_id)
                if must:
                    claim = self.claims[claim_i]
                    raise AllocationError(
                        f"claim {rules.kobj(claim)}, request {request.name}: cannot add device "
                        f"{'/'.join(device_id)} because a claim constraint would not be satisfied"
                    )
                return None
            added += 1

        if not shared:
            holders.add(claim_i)
            marked = True

        consumed: cap.Consumed | None = None
        share_id = None
        if rules.consumable_capacity:
            checked, checked_id = self._capacity_slot_device(candidate, device_i)
            if not self.capacity_fits(data, checked, checked_id, claim_i, "rechecking"):
                reject()
                return None
            if shared:
                consumed = cap.consumption(cap.requests_of(request.capacity), device, rules.checked_range_arithmetic,
                                           rules.fractional)
                share_id = self._share_id(claim_i, data, device_id)
                cap.add(self.allocating_capacity, device_id, consumed)

        results = self.results[claim_i]
        results.append(DeviceResult(request, data.parent.name if data.parent else "", candidate,
                                    share_id, consumed or None, request.admin_access))  # fmt: skip
        size = len(results) - 1

        def undo() -> None:
            if rollback:
                del results[size:]
                if consumed is not None:
                    cap.subtract(self.allocating_capacity, device_id, consumed)
                    if capacity_before:
                        self.allocating_capacity.setdefault(device_id, {})
                if marked:
                    holders.discard(claim_i)
                for constraint in reversed(constraints):
                    constraint.remove(base, sub_name, device, device_id)
                if counters_taken:
                    self.counters.release(device, candidate, pool)
                if ungroup is not None:
                    ungroup()
                return
            for constraint in constraints:
                constraint.remove(base, sub_name, device, device_id)
            holders.discard(claim_i)
            if shared:
                if consumed:
                    cap.subtract(self.allocating_capacity, device_id, consumed)
            elif rules.partitionable and consumes:
                self.counters.release(device, candidate, pool)
            del results[size:]

        return undo

    def capacity_in_use(self, device_id: DeviceID) -> bool:
        """Whether some allocation (existing or in this attempt) already consumes the shared device's capacity."""
        if device_id in self.state.capacity or device_id in self.allocating_capacity:
            return True
        return self.rules.shared_ids_in_use and any(s[:3] == device_id for s in self.state.shared)

    def _capacity_slot_device(self, candidate: Candidate, device_i: int) -> tuple[Mapping[str, Any], DeviceID]:
        """The device whose capacity ``allocateDevice`` checks: in 1.34 it indexes the candidate's
        slice by the request's device slot, not the candidate (fixed in 1.35)."""
        if not self.rules.capacity_slot_quirk:
            return candidate.device, candidate.id
        devices = (candidate.slice.get("spec") or {}).get("devices") or []
        if device_i >= len(devices):
            return candidate.device, candidate.id
        device = devices[device_i]
        return device, (candidate.id[0], candidate.id[1], device.get("name", ""))

    def _share_id(self, claim_i: int, data: RequestData, device_id: DeviceID) -> str:
        """A share ID (a random UUID in the scheduler; drawb derives it so runs repeat)."""
        metadata = self.claims[claim_i].get("metadata") or {}
        seed = "/".join((metadata.get("uid") or "", self.rules.kobj(self.claims[claim_i]), data.name, *device_id,
                         str(len(self.results[claim_i]))))  # fmt: skip
        return str(uuid.uuid5(uuid.NAMESPACE_URL, seed))
