"""The cluster as the scheduler sees it for one attempt, node by node, and which nodes are alike.

``PlanState`` indexes nodes (in name order: the simulated scheduler's order), slices per node and
the allocated claims per pool, and allocates claims on one node with ``drawb.alloc`` under the
cluster's version and gates. ``signature(view)`` is what an allocation on a node can depend on:
its pools in the allocator's order with their slices (attributes nobody reads left out, names
left out), and which of their devices are already in use. Two nodes with the same signature get
the same allocation, up to pool and node names (``rename``). Slices that are not local to a node
(``allNodes``, ``nodeSelector``) make every node its own group. The nodes in order, the slices per
node and their canonical content are remembered for the last nodes and slices seen (the same
objects), so the next command on an unchanged cluster does not redo them.

It is the one snapshot of the scheduler's view: the simulated scheduler, ``preview``, ``capacity`` and
``why`` read it. ``why`` also reads the pods, claim templates and events it holds (those of one
namespace, or of every namespace), who holds each device (``holders``) and the nodes alike
(``signature``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

import orjson

from drawb.alloc.allocator import allocate_with
from drawb.alloc.claimindex import ClaimIndex, Holders, claim_index, same_objects
from drawb.alloc.state import AllocatedState, changed_since, gather_allocated, tally_of
from drawb.alloc.versions import flavor as resolve_flavor
from drawb.alloc.relevance import keeps
from drawb.memo import Table

Obj = Mapping[str, Any]
PoolID = tuple[str, str]


def _name(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace", ""), meta.get("name", "")


def results(claim: Obj) -> list[dict]:
    """The device results of a claim's allocation (empty when unallocated)."""
    return (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []


def holding(allocations: Iterable[Mapping[str, Any]]) -> list[dict]:
    """Claim-shaped stand-ins for new allocations, so they count as in use in the next attempt."""
    return [{"metadata": {"name": ""}, "status": {"allocation": a}} for a in allocations]


@dataclass
class NodeView:
    """One node with the slices and allocated claims an allocation there looks at."""

    node: Obj
    slices: list[Obj]
    pools: list[PoolID]  # the node's own pools, in the allocator's order
    allocated: list[dict] = field(default_factory=list)  # claims holding devices of those pools
    shared: bool = False  # slices not local to the node are visible too

    @cached_property
    def name(self) -> str:
        return _name(self.node)


class PlanState:
    """Nodes, slices, classes and allocated claims of a cluster, under its version and gates; the pods,
    claim templates and events read with them (``pods_namespace``: those of that namespace only; None: of
    every namespace); ``where`` describes the cluster, ``simulated`` says whether it is."""

    def __init__(self, *, nodes: Iterable[Obj], slices: Iterable[Obj], classes: Iterable[Obj],
                 claims: Iterable[Obj], kubernetes_version: str, feature_gates: Mapping[str, bool] | None,
                 pods: Iterable[Obj] = (), templates: Iterable[Obj] = (), events: Iterable[Obj] = (),
                 pods_namespace: str | None = None, where: str = "", simulated: bool = False):
        self.pods, self.templates, self.events = list(pods), list(templates), list(events)
        self.pods_namespace, self.where, self.simulated = pods_namespace, where, simulated
        self._gather(nodes, slices, classes, claims, kubernetes_version, feature_gates)

    def _gather(self, nodes, slices, classes, claims, kubernetes_version, feature_gates) -> None:
        self.flavor = resolve_flavor(kubernetes_version, feature_gates)
        self.kubernetes_version = kubernetes_version
        self.feature_gates = dict(self.flavor.gates)
        self.consumable = self.feature_gates.get("DRAConsumableCapacity", False)
        layout = _layout(nodes, slices)
        self.nodes = layout.nodes
        self.slices = layout.given_slices
        self.classes = list(classes)
        self.class_by_name = {_name(c): c for c in self.classes}
        self._layout = layout
        self._local = layout.local
        self.nonlocal_slices = layout.nonlocal_slices
        self.claims = list(claims)
        self._index = claim_index(self.claims)
        self._by_pool = self._index.by_pool
        self.allocated = gather_allocated(self.claims, self.consumable)
        self._in_use = in_use_by_pool(self.allocated)
        self._views = layout.views(self._index)
        self._signatures = layout.signatures(self._in_use)

    # --- the objects, by name ----------------------------------------------------------------

    def pod_read(self, namespace: str) -> bool:
        """Whether the pods of ``namespace`` were read."""
        return self.pods_namespace is None or self.pods_namespace == namespace

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self._pods.get((namespace, name))

    def claim(self, namespace: str, name: str) -> Obj | None:
        return self._claims.get((namespace, name))

    def template(self, namespace: str, name: str) -> Obj | None:
        return next((t for t in self.templates if _key(t) == (namespace, name)), None)

    def device_class(self, name: str) -> Obj | None:
        return self.class_by_name.get(name)

    @cached_property
    def _pods(self) -> dict[tuple[str, str], Obj]:
        return {_key(p): p for p in self.pods}

    @cached_property
    def _claims(self) -> dict[tuple[str, str], Obj]:
        return {_key(c): c for c in self.claims}

    @cached_property
    def allocated_claims(self) -> list[Obj]:
        return [c for c in self.claims if (c.get("status") or {}).get("allocation")]

    @cached_property
    def holders(self) -> Holders:
        """Who holds each allocated device (admin-access results too, marked)."""
        return Holders(self._index)

    @cached_property
    def node_by_name(self) -> dict[str, Obj]:
        return {_name(n): n for n in self.nodes}

    def slices_for(self, node: str) -> list[Obj]:
        """The slices that may be visible on ``node``: its own, then those not local to one node."""
        return [*self._local.get(node, ()), *self.nonlocal_slices]

    def pod_events(self, pod: Obj) -> list[Obj]:
        """Events about ``pod`` (by uid where the event names one, else by name), oldest first."""
        uid = (pod.get("metadata") or {}).get("uid")
        namespace, name = _key(pod)
        found = []
        for event in self.events:
            involved = event.get("involvedObject") or event.get("regarding") or {}
            if involved.get("kind") != "Pod" or involved.get("name") != name:
                continue
            if (involved.get("namespace") or _key(event)[0]) != namespace:
                continue
            if uid and involved.get("uid") and involved["uid"] != uid:
                continue
            found.append(event)
        return found

    # --- allocating node by node ---------------------------------------------------------------

    def view(self, node: Obj) -> NodeView:
        """What an allocation on ``node`` looks at (remembered per node)."""
        name = _name(node)
        cached = self._views.get(name)
        if cached is not None and cached.node is node:
            return cached
        local = self._local.get(name, [])
        shared = bool(self.nonlocal_slices)
        pools = self._layout.pools(name)
        allocated = list({id(c): c for p in pools for c in self._by_pool.get(p, ())}.values())
        view = NodeView(node, [*local, *self.nonlocal_slices], pools, allocated, shared)
        self._views[name] = view
        return view

    def allocate(self, claims: Sequence[Obj], view: NodeView, extra: Sequence[Obj] = ()) -> list[dict] | None:
        """``drawb.alloc``'s allocation of ``claims`` on the view's node, with ``extra`` claims in use
        too; None when they do not fit; AllocationError as the scheduler reports it."""
        state = gather_allocated([*view.allocated, *extra], self.consumable)
        return allocate_with(self.flavor, list(claims), node=view.node, slices=view.slices, classes=self.classes,
                             state=state)

    def devices_in_use(self, view: NodeView) -> int:
        """How many devices of the view's pools are in use (dedicated or shared)."""
        return sum(len(entry[0]) + len(entry[1]) for entry in (self._in_use.get(pool) for pool in view.pools) if entry)

    def nodes_publishing(self, pools: Iterable[PoolID]) -> set[str] | None:
        """The nodes whose own slices publish any of ``pools``; None when a slice not local to one node
        publishes one (every node sees it)."""
        wanted = set(pools)
        if any(pool_of(rs) in wanted for rs in self.nonlocal_slices):
            return None
        index = self._layout._nodes_of_pool()
        return {name for pool in wanted for name in index.get(pool, ())}

    @cached_property
    def disjoint(self) -> bool:
        """Whether no device is visible on two nodes: every slice is one node's, and each pool too."""
        return not self.nonlocal_slices and all(len(names) == 1 for names in self._layout._nodes_of_pool().values())

    # --- alike nodes -------------------------------------------------------------------------

    def signature(self, view: NodeView, relevant: frozenset[str] | None) -> tuple:
        """What an allocation on the view's node depends on, names left out (see the module)."""
        if view.shared:
            return ("node", view.name)
        known = self._signatures.get(view.name)
        if known is None:
            known = self._signatures[view.name] = {}
        cached = known.get(relevant)
        if cached is not None:
            return cached
        slices = self._layout.canonical(view, relevant)
        signature = (slices, tuple(self._in_use.get(pool, ((), (), ())) for pool in view.pools))
        known[relevant] = signature
        return signature


class _Layout:
    """Nodes in name order and slices per node, with each node's pools and its slices' content names
    left out: what does not change while the cluster's nodes and slices are the same objects."""

    def __init__(self, nodes: Sequence[Obj], slices: Sequence[Obj]) -> None:
        self.given_nodes, self.given_slices = list(nodes), list(slices)
        self.sources = (nodes, slices)  # tuples (which cannot change) are known again by identity
        self.nodes = sorted(nodes, key=_name)
        self.local: dict[str, list[Obj]] = {}
        self.nonlocal_slices: list[Obj] = []
        for rs in sorted(slices, key=_name):
            node_name = (rs.get("spec") or {}).get("nodeName")
            if node_name:
                self.local.setdefault(node_name, []).append(rs)
            else:
                self.nonlocal_slices.append(rs)
        self._pools: dict[str, list[PoolID]] = {}
        self._canonical: dict[tuple[str, frozenset[str] | None], tuple] = {}
        self._views: tuple[Any, dict[str, NodeView]] | None = None
        self._signatures: tuple[Any, dict[str, dict[frozenset[str] | None, tuple]]] | None = None
        self._pool_nodes: dict[PoolID, list[str]] | None = None

    def views(self, index: ClaimIndex) -> dict[str, NodeView]:
        """The node views made for this claim index: kept while it is
        the same; after a change, those of the nodes whose pools' claims are the same are kept."""
        if self._views is None or self._views[0] is not index:
            changed = None if self._views is None else index.changed_since(self._views[0])
            self._views = (index, self._kept(self._views and self._views[1], changed))
        return self._views[1]

    def signatures(self, in_use: dict) -> dict[str, dict[frozenset[str] | None, tuple]]:
        """Node -> the signatures made for these devices in use (``in_use_by_pool``'s object), per set of
        attributes read: kept while it is the same; after a change, those of the nodes whose pools'
        devices in use are the same are kept."""
        if self._signatures is None or self._signatures[0] is not in_use:
            changed = None if self._signatures is None else changed_pools(self._signatures[0], in_use)
            self._signatures = (in_use, self._kept(self._signatures and self._signatures[1], changed))
        return self._signatures[1]

    def _kept(self, per_node: dict | None, changed: frozenset[PoolID] | None) -> dict:
        """``per_node`` without the nodes that see a pool of ``changed`` (empty when that is unknown)."""
        if per_node is None or changed is None:
            return {}
        kept = dict(per_node)
        if changed and self.nonlocal_slices:
            return {}
        for pool in changed:
            for name in self._nodes_of_pool().get(pool, ()):
                kept.pop(name, None)
        return kept

    def _nodes_of_pool(self) -> dict[PoolID, list[str]]:
        """The nodes whose own slices publish each pool."""
        if self._pool_nodes is None:
            self._pool_nodes = {}
            for name, local in self.local.items():
                for pool in dict.fromkeys(pool_of(rs) for rs in local):
                    self._pool_nodes.setdefault(pool, []).append(name)
        return self._pool_nodes

    def same(self, nodes: Sequence[Obj], slices: Sequence[Obj]) -> bool:
        """Whether ``nodes`` and ``slices`` are the objects this layout was made of, in order (objects of a
        cluster are replaced whole: ``claimindex``): the same tuples at once, other sequences object by object."""
        if type(nodes) is tuple and type(slices) is tuple and nodes is self.sources[0] and slices is self.sources[1]:
            return True
        return same_objects(nodes, self.given_nodes) and same_objects(slices, self.given_slices)

    def pools(self, name: str) -> list[PoolID]:
        """The pools a node sees, in the allocator's order."""
        found = self._pools.get(name)
        if found is None:
            found = self._pools[name] = sorted({pool_of(rs) for rs in (*self.local.get(name, ()), *self.nonlocal_slices)})
        return found

    def canonical(self, view: NodeView, relevant: frozenset[str] | None) -> tuple:
        """The view's slices as (pool index, canonical content), names left out."""
        key = (view.name, relevant)
        found = self._canonical.get(key)
        if found is None:
            index = {pool: i for i, pool in enumerate(view.pools)}
            found = self._canonical[key] = tuple((index[pool_of(rs)], canonical_slice(rs, relevant)) for rs in view.slices)
        return found


_last_layout: list[_Layout] = []
def _layout(nodes: Sequence[Obj], slices: Sequence[Obj]) -> _Layout:
    """The layout of these nodes and slices (the last one is remembered, as the scheduler keeps its
    node and slice caches between pods)."""
    if _last_layout and _last_layout[0].same(nodes, slices):
        return _last_layout[0]
    layout = _Layout(nodes, slices)
    _last_layout[:] = [layout]
    return layout


_last_in_use: list[tuple[AllocatedState, dict]] = []
_last_change: list[tuple[dict, dict, frozenset]] = []


def in_use_by_pool(state: AllocatedState) -> dict[PoolID, tuple]:
    """Per pool, the devices in use as the allocator counts them: (dedicated, shared, consumed).
    Remembered for the last state (``gather_allocated`` returns the same one for the same claims);
    for another state only the pools whose devices in use differ are made again, the others keep
    their entries (the same tuples, so a signature can be compared by identity: ``changed_pools``).
    Callers must not modify it."""
    if _last_in_use and _last_in_use[0][0] is state:
        return _last_in_use[0][1]
    if _last_in_use:
        old_state, old = _last_in_use[0]
        tally, since = tally_of(state), changed_since(state, old_state)
        if tally is not None and since is not None and not state.capacity:
            changed = set(since)
            entries = {pool: (tuple(sorted(tally.dedicated.get(pool, ()))), tuple(sorted(tally.shared.get(pool, ()))), ())
                       for pool in changed}
        else:
            changed = _pools_changed(old_state, state)
            entries = _in_use_by_pool(state, changed)
        found = dict(old)
        found.update(entries)
        for pool in changed:
            if pool not in found or found[pool] == ((), (), ()):
                found.pop(pool, None)
        _last_change[:] = [(old, found, frozenset(changed))]
    else:
        found = _in_use_by_pool(state)
    _last_in_use[:] = [(state, found)]
    return found


def changed_pools(old: dict, new: dict) -> frozenset[PoolID] | None:
    """The pools whose entries differ between two results of ``in_use_by_pool`` made one after the
    other (None when unknown: treat every pool as changed)."""
    if old is new:
        return frozenset()
    if _last_change and _last_change[0][0] is old and _last_change[0][1] is new:
        return _last_change[0][2]
    return None


def _pools_changed(old: AllocatedState, new: AllocatedState) -> set[PoolID]:
    changed = {(d, p) for d, p, _ in old.allocated ^ new.allocated}
    changed.update((d, p) for d, p, _, _ in old.shared ^ new.shared)
    changed.update(k[:2] for k in old.capacity.keys() | new.capacity.keys()
                   if _amounts(old.capacity.get(k)) != _amounts(new.capacity.get(k)))
    return changed


def _amounts(amounts: Mapping[str, Any] | None) -> tuple | None:
    return None if amounts is None else tuple(sorted((k, str(v)) for k, v in amounts.items()))


def _in_use_by_pool(state: AllocatedState, only: set[PoolID] | None = None) -> dict[PoolID, tuple]:
    """The entries of ``in_use_by_pool`` (of the pools in ``only``, when given; an empty entry for a
    pool of ``only`` without devices in use)."""
    dedicated: dict[PoolID, list] = {}
    shared: dict[PoolID, list] = {}
    consumed: dict[PoolID, list] = {}
    for driver, pool, name in state.allocated:
        if only is None or (driver, pool) in only:
            dedicated.setdefault((driver, pool), []).append(name)
    for driver, pool, name, share in state.shared:
        if only is None or (driver, pool) in only:
            shared.setdefault((driver, pool), []).append((name, share))
    for (driver, pool, name), amounts in state.capacity.items():
        if only is None or (driver, pool) in only:
            consumed.setdefault((driver, pool), []).append((name, _amounts(amounts)))
    pools = {*dedicated, *shared, *consumed} if only is None else only
    return {pool: (tuple(sorted(dedicated.get(pool, ()))), tuple(sorted(shared.get(pool, ()))),
                   tuple(sorted(consumed.get(pool, ()))))
            for pool in pools}


def pool_of(rs: Obj) -> PoolID:
    spec = rs.get("spec") or {}
    return spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")


_canonical: Table[bytes] = Table("slice contents without names", 200_000)  # per slice and relevant attributes


@lru_cache(maxsize=65_536)
def _kept_names(relevant: frozenset[str] | None, driver: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The attribute names of a device that a selector may read."""
    return tuple(k for k in names if keeps(relevant, driver, k))


def canonical_slice(rs: Obj, relevant: frozenset[str] | None) -> bytes:
    """A slice's content without its names and the attributes no selector reads (remembered per object)."""
    cached = _canonical.get(rs, relevant)
    if cached is not None:
        return cached
    spec = dict(rs.get("spec") or {})
    driver = spec.get("driver", "")
    spec.pop("nodeName", None)
    pool = dict(spec.get("pool") or {})
    pool.pop("name", None)
    spec["pool"] = pool
    devices = []
    for d in spec.get("devices") or []:
        attributes = d.get("attributes") or {}
        names = tuple(attributes)
        kept = _kept_names(relevant, driver, names)
        devices.append(d if kept == names and d.get("attributes") else
                       {**d, "attributes": {k: attributes[k] for k in kept}})
    spec["devices"] = devices
    return _canonical.put(rs, orjson.dumps(spec, option=orjson.OPT_SORT_KEYS), relevant)


def rename(allocations: list[dict], source: NodeView, target: NodeView) -> list[dict]:
    """Allocations made on ``source`` as they read on ``target``, a node of the same signature."""
    if source is target:
        return allocations
    pools = {pool[1]: renamed[1] for pool, renamed in zip(source.pools, target.pools)}
    out = []
    for allocation in allocations:
        copied = dict(allocation)
        devices = dict(allocation.get("devices") or {})
        devices["results"] = [{**r, "pool": pools.get(r.get("pool", ""), r.get("pool", ""))}
                              for r in devices.get("results") or []]
        copied["devices"] = devices
        if allocation.get("nodeSelector") is not None:
            copied["nodeSelector"] = orjson.loads(orjson.dumps(allocation["nodeSelector"]).replace(
                orjson.dumps(source.name), orjson.dumps(target.name)))
        out.append(copied)
    return out
