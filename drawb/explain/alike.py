"""Nodes alike for the funnel: their device stages are computed once and renamed for the others.

Two nodes whose slices are all their own (no slice without a node name in the cluster, every pool of
the node published on it alone) with the same signature in the scheduler's view
(``drawb.alloc.view.PlanState.signature``: the slices equal up to names and the attributes no selector
or constraint reads, the same devices of each pool in use) have the same stages: the same devices (by
name) pass and fail the same stages for the same reasons. Only the pool and node names differ, and who
holds an allocated device. ``Alike.signature`` is that key (None: the node is computed on its own);
``renamed`` turns the stages of one node into another's. A node whose stages carry a text that may
name its pool (an invalid pool, a selector's error, the allocator's refusal) is never renamed:
``renamable`` says so, and such a group's nodes are computed one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.alloc.slices import info
from drawb.alloc.view import NodeView, PlanState, PoolID
from drawb.explain.devices import Drop, NodeStages, RequestOnNode, held_reason

# Reasons that name no pool or node (device names only); every other reason keeps a node on its own.
_FIXED = ("not selected by class ", "its shared counters are used up by allocated device(s) ")
_EXACT = ("not selected by the request's selectors", "it needs more of the shared counters than the pool has",
          "not enough of its capacity is left for the request")


class Alike:
    """Signatures of the nodes of one explanation (see the module)."""

    def __init__(self, state: PlanState, relevant: frozenset[str] | None) -> None:
        self.relevant = relevant
        self._state = state
        self.disjoint = state.disjoint  # no device on two nodes
        self.pools: dict[str, list[PoolID]] = {}

    def signature(self, view: NodeView) -> tuple | None:
        """What the node's stages depend on, names left out; None: compute the node on its own."""
        state, name = self._state, view.name
        if state.nonlocal_slices:
            return None
        # disjoint: each pool is one node's, so the view's own pools are published by this node alone
        if not self.disjoint and state.nodes_publishing(view.pools) != {name}:
            return None
        self.pools[name] = view.pools
        return state.signature(view, self.relevant)


def renamable(stages: NodeStages) -> bool:
    """Whether ``stages`` carry no text that may name the node's pool or node (see the module)."""
    if stages.error:
        return False
    for request in stages.requests:
        for drop in request.drops:
            if drop.error or drop.stage == "published":
                return False
            if drop.stage in ("free", "taints"):
                continue
            if drop.reason not in _EXACT and not drop.reason.startswith(_FIXED):
                return False
    return True


def renamed(stages: NodeStages, pools: Mapping[PoolID, PoolID], node: str, slices: list[Mapping[str, Any]],
            holders: Mapping) -> NodeStages:  # fmt: skip
    """The stages of a node alike to the one of ``stages``: ``pools`` maps that node's pools to this one's."""
    names = {driver_pool: renamed_pool[1] for driver_pool, renamed_pool in pools.items()}

    def move(device_id: tuple[str, str, str]) -> tuple[str, str, str]:
        return device_id[0], names[device_id[:2]], device_id[2]

    requests = []
    for r in stages.requests:
        drops = []
        for d in r.drops:
            device_id = move(d.device)
            reason = held_reason(holders, device_id) if d.stage == "free" else d.reason
            drops.append(Drop(device_id, node, d.stage, reason, d.error, d.taints, [move(b) for b in d.blocked_by]))
        survivors = {stage: [move(i) for i in ids] for stage, ids in r.survivors.items()}
        requests.append(RequestOnNode(r.key, r.name, r.class_name, r.count, r.all_mode, survivors, drops))
    devices = {c.id: c.device for rs in slices for c in info(rs).candidates}
    return NodeStages(node, requests, devices=devices)


def blocked(stages: NodeStages, pools: Mapping[PoolID, PoolID] | None, stage: str) -> list[tuple[str, str, str]]:
    """The allocated devices in the way at ``stage`` on a node alike to the one of ``stages`` (its own
    when ``pools`` is None)."""
    ids = [b for r in stages.requests for d in r.drops if d.stage == stage for b in d.blocked_by]
    if pools is None:
        return ids
    return [(i[0], pools[i[:2]][1], i[2]) for i in ids]
