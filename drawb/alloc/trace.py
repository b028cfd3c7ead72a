"""The allocator's optional trace: why each device of a node is turned away, request by request.

``Allocator.trace(node)`` follows every device visible on ``node`` through the per-device stages of
the search (``Search.allocate_one`` and ``allocate_device``), for every request and subrequest of the
claims, with the search's own checks, in the search's order (``Stage``). A device's first rejection
is the stage at which the allocator turns it away; with ``every=True`` the later stages are checked
too (an explanation may present the stages in another order). Each rejection carries a reason code
and what an explanation needs: the selector's error, the taints not tolerated, the allocated devices
in the way. ``Stage.CONSTRAINT`` records a device that no claim constraint can accept alone (it lacks
the attribute); whether devices fit together is the search's to decide.

The search records nothing: ``allocate`` pays nothing for the trace. A change to a per-device check of
the search is made here too, in the same order; ``tests/unit/alloc/test_trace.py`` holds them together.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.alloc.nodes import node_matches
from drawb.alloc.requests import RequestData
from drawb.alloc.search import Search
from drawb.alloc.slices import Candidate
from drawb.alloc.taints import untolerated
from drawb.api.nodeaffinity import NodeSelectorError

DeviceID = tuple[str, str, str]
Key = tuple[int, int, int]  # claim, request, subrequest


class Stage(enum.IntEnum):
    """The per-device stages of the search, in its order."""

    POOL = 1  # the device's pool is invalid or incomplete
    IN_USE = 2  # allocated to another claim
    BINDING = 3  # binding conditions while DRADeviceBindingConditions is off
    CLASS_SELECTORS = 4
    REQUEST_SELECTORS = 5
    NODE = 6  # per-device node selection
    CAPACITY = 7  # consumable capacity left
    NODE_OPERATIONS = 8  # the slice skips node operations the node does not declare
    PARTITIONABLE = 9  # consumes counters while DRAPartitionableDevices is off
    COMPATIBILITY = 10  # a compatibility group of its counter sets is taken
    COUNTERS = 11  # shared counters used up
    TAINTS = 12  # a taint not tolerated
    CONSTRAINT = 13  # lacks the attribute of a matchAttribute or distinctAttribute


@dataclass(frozen=True)
class Rejection:
    """One stage turning a device away: ``code`` names the reason, ``detail`` says it in words;
    ``error``: the search stops there with an AllocationError (``detail`` is its message)."""

    stage: Stage
    code: str
    detail: str
    error: bool = False
    taints: tuple[Mapping[str, Any], ...] = ()  # TAINTS: the taints not tolerated
    users: tuple[DeviceID, ...] = ()  # IN_USE, CAPACITY, COUNTERS: the allocated devices in the way


@dataclass
class RequestTrace:
    """One request's (or subrequest's) devices on the node: each device's rejections (empty: none)."""

    key: Key
    name: str  # request or request/subrequest
    class_name: str
    count: int  # devices wanted (ExactCount)
    all_mode: bool
    admin_access: bool
    rejections: dict[DeviceID, tuple[Rejection, ...]] = field(default_factory=dict)  # in the node's device order


@dataclass
class Trace:
    """Every request's devices on one node (``devices``: the devices visible there, by id)."""

    node: str
    requests: list[RequestTrace]
    devices: dict[DeviceID, Mapping[str, Any]]


def trace(search: Search, every: bool = False) -> Trace:
    """The trace of a validated ``search`` (nothing allocated in it yet)."""
    node = ((search.node or {}).get("metadata") or {}).get("name", "")
    requests = []
    for key, data in search.request_data.items():
        request = data.request
        traced = RequestTrace(key, data.name, request.class_name, request.count, request.mode == "All",
                              request.admin_access)  # fmt: skip
        for candidate in search.flat:
            traced.rejections[candidate.id] = screen(search, key, data, candidate, every)
        requests.append(traced)
    return Trace(node, requests, {c.id: c.device for c in search.flat})


def screen(search: Search, key: Key, data: RequestData, candidate: Candidate, every: bool = False) -> tuple[Rejection, ...]:
    """The stages that turn ``candidate`` away for one request, in the search's order: the first only,
    or (``every``) each stage's own verdict."""
    found: list[Rejection] = []
    for check in _CHECKS:
        rejection = check(search, key, data, candidate)
        if rejection is not None:
            found.append(rejection)
            if not every:
                break
    return tuple(found)


def _pool(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    if candidate.pool_key not in search.unusable:
        return None
    rules, pool = search.rules, search.pool_of[candidate.pool_key]
    if rules.invalid_pool_error and pool.invalid:
        return Rejection(Stage.POOL, "PoolInvalid", f"pool {pool.name} is invalid: {pool.invalid_reason}", True)
    if not rules.skip_unusable_pools:
        return None
    if pool.invalid:
        return Rejection(Stage.POOL, "PoolInvalid", f"pool {pool.id} is invalid: {pool.invalid_reason}")
    return Rejection(Stage.POOL, "PoolIncomplete", f"pool {pool.id} is incomplete (slices missing)")


def _in_use(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    device_id = candidate.id
    taken = search.in_use_by_claim(device_id, key[0]) if data.request.admin_access else search.in_use(device_id)
    return Rejection(Stage.IN_USE, "Allocated", "allocated to another claim", users=(device_id,)) if taken else None


def _binding(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    if search.rules.binding or not candidate.device.get("bindingConditions"):
        return None
    return Rejection(Stage.BINDING, "BindingConditionsOff",
                     "has binding conditions, and DRADeviceBindingConditions is off")  # fmt: skip


def _selectors(stage: Stage, search: Search, selectors: list, owner: str, unselected: str,
               candidate: Candidate) -> Rejection | None:  # fmt: skip
    try:
        if search.evaluator.matches(selectors, candidate.device, candidate.id, owner):
            return None
    except AllocationError as err:
        return Rejection(stage, "SelectorError", str(err), True)
    return Rejection(stage, "NotSelected", unselected)


def _class(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    return _selectors(Stage.CLASS_SELECTORS, search, data.class_selectors, data.class_owner,
                      f"not selected by class {data.request.class_name}", candidate)  # fmt: skip


def _request(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    return _selectors(Stage.REQUEST_SELECTORS, search, data.request.selectors, search.claim_owners[key[0]],
                      "not selected by the request's selectors", candidate)  # fmt: skip


def _node(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    device = candidate.device
    if not (candidate.slice.get("spec") or {}).get("perDeviceNodeSelection"):
        return None
    try:
        ok = node_matches(search.node, device.get("nodeName") or "", bool(device.get("allNodes")), device.get("nodeSelector"))
    except NodeSelectorError as err:
        return Rejection(Stage.NODE, "NodeSelectorInvalid", f"its node selector cannot be parsed: {err}", True)
    return None if ok else Rejection(Stage.NODE, "NotOnNode", "not available on this node (per-device node selection)")


def _capacity(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    if not search.rules.consumable_capacity:
        return None
    try:
        fits = search.capacity_fits(data, candidate.device, candidate.id, key[0])
    except AllocationError as err:
        return Rejection(Stage.CAPACITY, "CapacityError", str(err), True)
    if fits:
        return None
    return Rejection(Stage.CAPACITY, "CapacityUsedUp", "not enough of its capacity is left for the request",
                     users=(candidate.id,))  # fmt: skip


def _node_operations(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    rules = search.rules
    if not (rules.node_operations and (candidate.slice.get("spec") or {}).get("skipNodeOperations")):
        return None
    if not rules.flavor.has("OptionalNodeOperations"):
        return Rejection(Stage.NODE_OPERATIONS, "NodeOperationsOff",
                         "its slice skips node operations, and DRAOptionalNodeOperations is off")  # fmt: skip
    declared = ((search.node or {}).get("status") or {}).get("declaredFeatures") or []
    if "DRAOptionalNodeOperations" in declared:
        return None
    return Rejection(Stage.NODE_OPERATIONS, "NodeOperationsUndeclared",
                     "its slice skips node operations, and the node does not declare DRAOptionalNodeOperations")  # fmt: skip


def _partitionable(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    if search.rules.partitionable or not candidate.device.get("consumesCounters"):
        return None
    return Rejection(Stage.PARTITIONABLE, "PartitionableOff",
                     "consumes shared counters, and DRAPartitionableDevices is off")  # fmt: skip


def _skips_counters(search: Search, candidate: Candidate) -> bool:
    """A shared device already consuming capacity has its counters taken once (1.35+)."""
    rules = search.rules
    shared = rules.consumable_capacity and bool(candidate.device.get("allowMultipleAllocations"))
    return rules.skip_shared_counters and shared and search.capacity_in_use(candidate.id)


def _compatibility(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    device = candidate.device
    if not (search.rules.compatibility_groups and device.get("consumesCounters")) or _skips_counters(search, candidate):
        return None
    ungroup = search.compatibility.take(device, search.pool_of[candidate.pool_key])
    if ungroup is None:
        return Rejection(Stage.COMPATIBILITY, "IncompatibleGroup",
                         "a compatibility group of its counter sets does not admit it")  # fmt: skip
    ungroup()
    return None


def _counters(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    device = candidate.device
    if not device.get("consumesCounters") or _skips_counters(search, candidate):
        return None
    pool = search.pool_of[candidate.pool_key]
    if search.counters.take(device, candidate, pool):
        search.counters.release(device, candidate, pool)
        return None
    users = _counter_users(search, candidate)
    detail = ("its shared counters are used up by allocated device(s) " + ", ".join(u[2] for u in users)
              if users else "it needs more of the shared counters than the pool has")  # fmt: skip
    return Rejection(Stage.COUNTERS, "CountersUsedUp", detail, users=tuple(users))


def _counter_users(search: Search, candidate: Candidate) -> list[DeviceID]:
    """The allocated devices of the pool that consume the same counter sets."""
    sets = {c.get("counterSet") for c in candidate.device.get("consumesCounters") or []}
    others = search.by_pool.get(id(search.pool_of[candidate.pool_key]), [])
    if search.rules.counter_scope == "slice":  # 1.34 keeps counter sets per slice
        others = [o for o in others if o.slice is candidate.slice]
    return [o.id for o in others if search._counts_as_allocated(o.id)
            and any(c.get("counterSet") in sets for c in o.device.get("consumesCounters") or [])]  # fmt: skip


def _taints(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    if not search.rules.taints:
        return None
    blocking = untolerated(candidate.device.get("taints") or [], data.request.tolerations, search.rules)
    if not blocking:
        return None
    text = ", ".join(_taint_text(t) for t in blocking)
    return Rejection(Stage.TAINTS, "TaintNotTolerated", f"taint {text} not tolerated", taints=tuple(dict(t) for t in blocking))


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect', '')}"


def _constraint(search: Search, key: Key, data: RequestData, candidate: Candidate) -> Rejection | None:
    request = data.request
    base, sub = (request.name, "") if data.parent is None else (data.parent.name, request.name)
    for constraint in search.constraints[key[0]]:
        if constraint.count:  # only a constraint that holds no device yet judges the device alone
            continue
        if request.derived:
            constraint.derived = (search.derived, request.derived)
        try:
            fits = constraint.add(base, sub, candidate.device, candidate.id)
        except AllocationError as err:  # a derived attribute that cannot be evaluated
            return Rejection(Stage.CONSTRAINT, "DerivedAttributeError", str(err), True)
        finally:
            constraint.derived = None
        if fits:
            constraint.remove(base, sub, candidate.device, candidate.id)
            continue
        kind = type(constraint).__name__
        return Rejection(Stage.CONSTRAINT, "AttributeMissing",
                         f"{kind[0].lower()}{kind[1:]} {constraint.attribute}: the device has no such attribute")  # fmt: skip
    return None


_CHECKS = (_pool, _in_use, _binding, _class, _request, _node, _capacity, _node_operations, _partitionable,
           _compatibility, _counters, _taints, _constraint)  # fmt: skip
