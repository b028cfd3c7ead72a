"""Nodes alike for the funnel: their device stages are computed once and renamed for the others.

Two nodes whose slices are all their own (``nodeName``: no slice without a node name in the
cluster, every pool of the node published on it alone, one pool per driver) and equal up to names
(``drawb.alloc.view.canonical_slice``: node and pool names and the attributes no selector or
constraint reads left out) with the same devices of each pool in use have the same stages: the same
devices (by name) pass and fail the same stages for the same reasons. Only the pool and node names
differ, and who holds an allocated device. ``Alike.signature`` is that key (None: the node is computed
on its own); ``renamed`` turns the stages of one node into another's. A node whose stages carry a text
that may name its pool (an invalid pool, a selector's error, the allocator's refusal) is never renamed:
``renamable`` says so, and such a group's nodes are computed one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.alloc.slices import info
from drawb.alloc.state import AllocatedState
from drawb.explain.devices import Drop, NodeStages, RequestOnNode, held_reason
from drawb.explain.state import ClusterState
from drawb.alloc.view import PoolID, canonical_slice, in_use_by_pool, pool_of

_NOT_IN_USE = ((), (), ())
_MANY = object()  # a pool published on several nodes (or without a node name)
# Reasons that name no pool or node (device names only); every other reason keeps a node on its own.
_FIXED = ("not selected by class ", "its shared counters are used up by allocated device(s) ")
_EXACT = ("not selected by the request's selectors", "it needs more of the shared counters than the pool has",
          "not enough of its capacity is left for the request")


class Alike:
    """Signatures of the nodes of one explanation (see the module)."""

    def __init__(self, state: ClusterState, relevant: frozenset[str] | None, allocated: AllocatedState) -> None:
        self.relevant = relevant
        self.shared = bool(state.slices_by_node.get(None))
        self._pool_node = _pool_nodes(state.slices)
        self.disjoint = not self.shared and _MANY not in self._pool_node.values()  # no device on two nodes
        self._in_use = in_use_by_pool(allocated)
        self.pools: dict[str, list[PoolID]] = {}
        self._known = _signatures(state.slices, relevant, self._in_use)

    def signature(self, name: str, slices: list[Mapping[str, Any]]) -> tuple | None:
        """What the node's stages depend on, names left out; None: compute the node on its own."""
        known = self._known.get(name)
        if known is None:
            known = self._known[name] = self._signature(name, slices)
        pools, signature = known
        if pools is not None:
            self.pools[name] = pools
        return signature

    def _signature(self, name: str, slices: list[Mapping[str, Any]]) -> tuple[list[PoolID] | None, tuple | None]:
        if self.shared:
            return None, None
        parts = _node_parts(name, slices, self.relevant)
        if parts is None:
            return None, None
        pools, canonical = parts
        if any(self._pool_node.get(p) != name for p in pools):
            return None, None
        return pools, (canonical, tuple(self._in_use.get(pool, _NOT_IN_USE) for pool in pools))


# What does not change while the slices are the same objects (objects of a cluster are replaced
# whole, never changed in place): the pool -> node map of all slices, and each node's pools and
# canonical slices. The last ones seen are remembered, as the scheduler keeps its slice cache.
_last_pools: list[tuple[list, dict]] = []
_parts: dict[str, tuple[list, frozenset[str] | None, tuple | None]] = {}
_last_signatures: list[tuple[list, frozenset[str] | None, dict, dict]] = []


def _signatures(slices: list[Mapping[str, Any]], relevant: frozenset[str] | None, in_use: dict) -> dict:
    """Node -> (pools, signature), remembered while the slices are the same objects and the attributes
    read the same: all while the devices in use are the same (``in_use_by_pool`` returns the same
    object), those of the nodes whose pools' devices in use are unchanged after a change."""
    from drawb.alloc.claimindex import same_objects
    from drawb.alloc.view import changed_pools

    known = {}
    if _last_signatures:
        seen, seen_relevant, seen_in_use, seen_known = _last_signatures[0]
        if seen_relevant == relevant and same_objects(seen, slices):
            if seen_in_use is in_use:
                return seen_known
            changed = changed_pools(seen_in_use, in_use)
            if changed is not None:  # the nodes whose pools' devices in use are the same keep theirs
                known = dict(seen_known)
                pool_node = _pool_nodes(slices)  # a node with a signature is the one node of each of its pools
                for pool in changed:
                    known.pop(pool_node.get(pool), None)
    _last_signatures[:] = [(list(slices), relevant, in_use, known)]
    return known


def _pool_nodes(slices: list[Mapping[str, Any]]) -> dict[PoolID, Any]:
    """Each pool's node (``_MANY``: several, or a slice without a node name)."""
    if _last_pools and len(_last_pools[0][0]) == len(slices) and all(a is b for a, b in zip(_last_pools[0][0], slices)):
        return _last_pools[0][1]
    found: dict[PoolID, Any] = {}
    for rs in slices:
        pool, node = pool_of(rs), (rs.get("spec") or {}).get("nodeName") or None
        seen = found.get(pool, node)
        found[pool] = node if seen == node and node is not None else _MANY
    _last_pools[:] = [(list(slices), found)]
    return found


def _node_parts(name: str, slices: list[Mapping[str, Any]], relevant: frozenset[str] | None) -> tuple | None:
    """(pools, canonical slices) of a node, or None when it has two pools of one driver."""
    cached = _parts.get(name)
    if cached is not None and cached[1] == relevant and len(cached[0]) == len(slices) and all(
            a is b for a, b in zip(cached[0], slices)):
        return cached[2]
    pools = sorted({pool_of(rs) for rs in slices})
    parts = None
    if len({d for d, _ in pools}) == len(pools):
        index = {pool: i for i, pool in enumerate(pools)}
        parts = (pools, tuple((index[pool_of(rs)], canonical_slice(rs, relevant)) for rs in slices))
    if len(_parts) > 100_000:
        _parts.clear()
    _parts[name] = (list(slices), relevant, parts)
    return parts


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
