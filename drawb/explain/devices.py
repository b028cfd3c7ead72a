"""Per-device stages of one node, read from the allocator's trace (``drawb.alloc.trace``).

For every request (or subrequest) of the claims to allocate, each device visible on the node is
followed through the stages, in the order an explanation presents them: published in a usable pool,
the class's selectors, the request's selectors, not allocated to another claim, untainted or
tolerated, fitting shared counters or consumable capacity. The allocator's trace says which of its
stages turn the device away (each stage's own verdict); the first of them in this order is recorded
with the reason (a selector's runtime error, the claims holding it, the taint). The allocator's stages
of node operations, compatibility groups and constraints are left to the search (the funnel's
"constraints" stage runs it). This module is the only one of ``drawb.explain`` that reads the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc.allocator import Allocator
from drawb.alloc.errors import AllocationError
from drawb.alloc.state import AllocatedState
from drawb.alloc.trace import RequestTrace, Stage
from drawb.alloc.versions import Flavor

DEVICE_STAGES = ("published", "class", "selectors", "free", "taints", "counters")
Key = tuple[int, int, int]  # claim, request, subrequest
STAGE_OF = {  # the allocator's stage -> the index of the stage presented
    Stage.POOL: 0, Stage.BINDING: 0, Stage.NODE: 0, Stage.PARTITIONABLE: 0, Stage.CLASS_SELECTORS: 1,
    Stage.REQUEST_SELECTORS: 2, Stage.IN_USE: 3, Stage.TAINTS: 4, Stage.COUNTERS: 5, Stage.CAPACITY: 5,
}
_AFTER_COUNTERS = frozenset({Stage.CAPACITY})  # shown after the counters within the last stage


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
    """Every device visible on ``node`` through the device stages of every request of ``claims``, read
    from the allocator's trace."""
    node_name = (node.get("metadata") or {}).get("name", "")
    allocator = Allocator.for_flavor(flavor, claims, slices=slices, classes=classes.values(), state=state)
    try:
        traced = allocator.trace(node, every=True)
    except AllocationError as err:
        return NodeStages(node_name, [], str(err))
    out = [_request_on_node(r, node_name, holders) for r in traced.requests]
    return NodeStages(node_name, out, devices=traced.devices)


def _request_on_node(traced: RequestTrace, node_name: str, holders: Mapping) -> RequestOnNode:
    survivors: dict[str, list] = {s: [] for s in DEVICE_STAGES}
    drops: list[Drop] = []
    last = len(DEVICE_STAGES)
    for device_id, rejections in traced.rejections.items():
        shown = [(STAGE_OF[r.stage], r) for r in rejections if r.stage in STAGE_OF]
        first = min(shown, key=lambda s: (s[0], s[1].stage in _AFTER_COUNTERS)) if shown else (last, None)
        index, rejection = first
        for stage in DEVICE_STAGES[:index]:
            survivors[stage].append(device_id)
        if rejection is None:
            continue
        stage = DEVICE_STAGES[index]
        if stage == "free":
            drops.append(Drop(device_id, node_name, stage, held_reason(holders, device_id), blocked_by=[device_id]))
        elif stage in ("taints", "counters"):
            drops.append(Drop(device_id, node_name, stage, rejection.detail, taints=[dict(t) for t in rejection.taints],
                              blocked_by=list(rejection.users)))
        elif rejection.error and any(r.stage is Stage.IN_USE for r in rejections):
            drops.append(Drop(device_id, node_name, stage,
                              f"{rejection.detail} (the scheduler never evaluates it: the device is allocated)"))
        else:
            drops.append(Drop(device_id, node_name, stage, rejection.detail, rejection.error))
    count = len(survivors["selectors"]) if traced.all_mode else traced.count
    return RequestOnNode(traced.key, traced.name, traced.class_name, count, traced.all_mode, survivors, drops)


def held_reason(holders: Mapping[tuple[str, str, str], Any], device_id: tuple[str, str, str]) -> str:
    """Why an allocated device is not free: the claims (and pods) holding it."""
    held = holders.get(device_id) or []
    return "allocated to " + (", ".join(str(h) for h in held) or "another claim")


