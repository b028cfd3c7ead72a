"""Per-device stages of one node, read with the allocator's own parts (``drawb.alloc``).

For every request (or subrequest) of the claims to allocate, each device visible on the node is
followed through the stages the scheduler's allocator applies to it, in its order: published in a
usable pool, the class's selectors, the request's selectors, not allocated to another claim,
untainted or tolerated, fitting shared counters or consumable capacity. The first stage a device
fails is recorded with the reason (a selector's runtime error, the claims holding it, the taint).
This module is the only one of ``drawb.explain`` that reaches into the allocator's internals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc.errors import AllocationError
from drawb.alloc.pools import gather_pools
from drawb.alloc.rules import rules_for
from drawb.alloc.search import Search
from drawb.alloc.selectors import evaluator_for
from drawb.alloc.state import AllocatedState
from drawb.alloc.taints import BLOCKING
from drawb.alloc.validation import validate
from drawb.alloc.nodes import node_matches
from drawb.alloc.versions import Flavor
from drawb.api.nodeaffinity import NodeSelectorError, tolerates

DEVICE_STAGES = ("published", "class", "selectors", "free", "taints", "counters")
Key = tuple[int, int, int]  # claim, request, subrequest


@dataclass
class Drop:
    """One device that failed a stage, and why."""

    device: tuple[str, str, str]  # driver, pool, device
    node: str
    stage: str
    reason: str
    error: bool = False  # a selector's runtime or compile error: the scheduler aborts on it
    taints: list[dict] = field(default_factory=list)  # the taints not tolerated (stage taints)
    blocked_by: list[tuple[str, str, str]] = field(default_factory=list)  # allocated devices in the way


@dataclass
class RequestOnNode:
    """One request's stages on one node: survivors per stage and the devices dropped."""

    key: Key
    name: str  # request or request/subrequest
    class_name: str
    count: int  # devices wanted (for All: every device passing the selectors)
    all_mode: bool
    survivors: dict[str, list[tuple[str, str, str]]]
    drops: list[Drop]

    def enough(self, stage: str) -> bool:
        """Whether enough devices are left after ``stage`` on this node."""
        left = len(self.survivors[stage])
        if self.all_mode and DEVICE_STAGES.index(stage) >= DEVICE_STAGES.index("selectors"):
            return left >= 1 and left == len(self.survivors["selectors"])
        return left >= max(self.count, 1)


@dataclass
class NodeStages:
    """Every request's stages on one node, or the allocator's refusal of the claims there."""

    node: str
    requests: list[RequestOnNode]
    error: str | None = None  # validation refused the claims (AllocationError text)
    devices: dict[tuple[str, str, str], Mapping[str, Any]] = field(default_factory=dict)  # visible here, by id


def node_stages(claims: Sequence[Mapping[str, Any]], node: Mapping[str, Any], slices: list[Mapping[str, Any]],
                classes: Mapping[str, Mapping[str, Any]], state: AllocatedState, flavor: Flavor,
                holders: Mapping[tuple[str, str, str], Any]) -> NodeStages:  # fmt: skip
    """Follow every device visible on ``node`` through the device stages of every request of ``claims``."""
    rules = rules_for(flavor)
    node_name = (node.get("metadata") or {}).get("name", "")
    try:
        pools = gather_pools(slices, node, flavor)
        search = Search(list(claims), node, pools, rules, state, evaluator_for(flavor.minor, flavor.gates))
        validate(search, classes)
    except AllocationError as err:
        return NodeStages(node_name, [], str(err))
    out = []
    for key, data in search.request_data.items():
        out.append(_request_on_node(search, key, data, node_name, holders))
    return NodeStages(node_name, out, devices={c.id: c.device for c in search.flat})


def _request_on_node(search: Search, key: Key, data: Any, node_name: str, holders: Mapping) -> RequestOnNode:
    rules = search.rules
    request = data.request
    evaluator = search.evaluator
    survivors: dict[str, list] = {s: [] for s in DEVICE_STAGES}
    drops: list[Drop] = []
    class_name = request.class_name
    for candidate in search.flat:
        device, device_id = candidate.device, candidate.id
        stage, reason, error = "", *_published(search, candidate)
        if reason:
            stage = "published"
        if not stage:
            survivors["published"].append(device_id)
            try:
                passed = evaluator.matches(data.class_selectors, device, device_id, data.class_owner)
            except AllocationError as err:
                passed, reason, error = False, str(err), True
            if not passed:
                stage, reason = "class", reason or f"not selected by class {class_name}"
        if not stage:
            survivors["class"].append(device_id)
            try:
                passed = evaluator.matches(request.selectors, device, device_id, search.claim_owners[key[0]])
            except AllocationError as err:
                passed, reason, error = False, str(err), True
            if not passed:
                stage, reason = "selectors", reason or "not selected by the request's selectors"
        if not stage:
            survivors["selectors"].append(device_id)
            if not request.admin_access and search.in_use(device_id):
                drops.append(Drop(device_id, node_name, "free", held_reason(holders, device_id), blocked_by=[device_id]))
                continue
        if not stage:
            survivors["free"].append(device_id)
            blocking = _untolerated(device.get("taints") or [], request.tolerations, rules)
            if blocking:
                drop = Drop(device_id, node_name, "taints", "taint " + ", ".join(_taint_text(t) for t in blocking)
                            + " not tolerated", taints=blocking)
                drops.append(drop)
                continue
        if not stage:
            survivors["taints"].append(device_id)
            reason, users = _counters_or_capacity(search, key, data, candidate)
            if reason:
                drops.append(Drop(device_id, node_name, "counters", reason, blocked_by=users))
                continue
        if stage:
            if error and not request.admin_access and search.in_use(device_id):
                error, reason = False, f"{reason} (the scheduler never evaluates it: the device is allocated)"
            drops.append(Drop(device_id, node_name, stage, reason, error))
            continue
        survivors["counters"].append(device_id)
    count = request.count if request.mode != "All" else len(survivors["selectors"])
    return RequestOnNode(key, data.name, class_name, count, request.mode == "All", survivors, drops)


def held_reason(holders: Mapping[tuple[str, str, str], Any], device_id: tuple[str, str, str]) -> str:
    """Why an allocated device is not free: the claims (and pods) holding it."""
    held = holders.get(device_id) or []
    return "allocated to " + (", ".join(str(h) for h in held) or "another claim")


def _published(search: Search, candidate: Any) -> tuple[str, bool]:
    """Why the device cannot be used on this node at all ("" when it can), and whether the scheduler
    stops with an error on it (1.34: an invalid pool)."""
    rules = search.rules
    if candidate.pool_key in search.unusable:
        pool = search.pool_of[candidate.pool_key]
        if pool.invalid and rules.invalid_pool_error:
            return f"pool {pool.name} is invalid: {pool.invalid_reason}", True
        if rules.skip_unusable_pools:
            return f"pool {pool.id} is {'invalid: ' + pool.invalid_reason if pool.invalid else 'incomplete (slices missing)'}", False
    device = candidate.device
    if not rules.binding and device.get("bindingConditions"):
        return "has binding conditions, and DRADeviceBindingConditions is off", False
    if (candidate.slice.get("spec") or {}).get("perDeviceNodeSelection"):
        try:
            ok = node_matches(search.node, device.get("nodeName") or "", bool(device.get("allNodes")), device.get("nodeSelector"))
        except NodeSelectorError as err:
            return f"its node selector cannot be parsed: {err}", True
        if not ok:
            return "not available on this node (per-device node selection)", False
    if device.get("consumesCounters") and not rules.partitionable:
        return "consumes shared counters, and DRAPartitionableDevices is off", False
    return "", False


def _untolerated(taints: list, tolerations: list, rules: Any) -> list[dict]:
    if not rules.taints:
        return []
    return [dict(t) for t in taints
            if (rules.taint_effects_all or (t.get("effect") or "") in BLOCKING)
            and not any(tolerates(tol, t) for tol in tolerations)]  # fmt: skip


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = taint.get("value")
    return f"{taint.get('key', '')}{'=' + value if value else ''}:{taint.get('effect', '')}"


def _counters_or_capacity(search: Search, key: Key, data: Any, candidate: Any) -> tuple[str, list]:
    """Why the device's shared counters or capacity cannot serve the request ("" when they can), and
    the allocated devices that use them up."""
    device = candidate.device
    if device.get("consumesCounters"):
        pool = search.pool_of[candidate.pool_key]
        if not search.counters.take(device, candidate, pool):
            users = _counter_users(search, candidate)
            return ("its shared counters are used up by allocated device(s) " + ", ".join(u[2] for u in users)
                    if users else "it needs more of the shared counters than the pool has"), users
        search.counters.release(device, candidate, pool)
    if search.rules.consumable_capacity and data.request.capacity:
        try:
            fits = search.capacity_fits(data, device, candidate.id, key[0])
        except AllocationError as err:
            return str(err), []
        if not fits:
            return "not enough of its capacity is left for the request", [candidate.id]
    return "", []


def _counter_users(search: Search, candidate: Any) -> list[tuple[str, str, str]]:
    """The allocated devices of the pool that consume the same counter sets."""
    sets = {c.get("counterSet") for c in candidate.device.get("consumesCounters") or []}
    pool = search.pool_of[candidate.pool_key]
    others = search.by_pool.get(id(pool), [])
    if search.rules.counter_scope == "slice":  # 1.34 keeps counter sets per slice
        others = [o for o in others if o.slice is candidate.slice]
    users = []
    for other in others:
        if search._counts_as_allocated(other.id) and any(
                c.get("counterSet") in sets for c in other.device.get("consumesCounters") or []):
            users.append(other.id)
    return users
