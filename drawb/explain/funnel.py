"""The funnel of a pod's unallocated claims over every node, and the stages that empty.

Device stages come from ``drawb.explain.devices`` node by node; then, on the nodes where every request
keeps enough devices, ``drawb.alloc.allocate`` decides whether the claims fit *together* (constraints,
counters shared between requests); last, whether such a node is one the pod may use (its node selector,
required affinity, node taints, the nodes of claims already allocated).

Nodes alike (``drawb.explain.alike``) are computed once: ``Funnel.per_node`` holds every node's
stages, made for the others of a group on first use by renaming, and the counts the explanation
reports over all nodes are read from each group's first node.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc import AllocationError
from drawb.alloc.allocator import allocate_with
from drawb.alloc.constraints import lookup_attribute, scalar
from drawb.alloc.rules import rules_for
from drawb.alloc.view import PlanState
from drawb.explain.alike import Alike, blocked, renamable, renamed
from drawb.explain.devices import DEVICE_STAGES, Drop, NodeStages, RequestOnNode, node_stages
from drawb.alloc.relevance import relevant_attributes

STAGES = (*DEVICE_STAGES, "constraints", "node")
EXAMPLES = 3
ALLOCATE_LIMIT = 400  # nodes tried with the allocator for the "constraints" stage


@dataclass
class Group:
    """Nodes alike: the first node's stages stand for every member's (see ``drawb.explain.alike``)."""

    first: str
    stages: NodeStages
    members: list[str]  # in the cluster's order, the first one first
    position: int  # the first member's place among the nodes
    by_key: dict[tuple[int, int, int], RequestOnNode] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_key = {r.key: r for r in self.stages.requests}


class NodeMap(Mapping):
    """Every node's stages (nodes with slices, in the cluster's order): a node alike to an earlier one
    is renamed from it on first use; ``group(node)`` is its group."""

    def __init__(self, state: PlanState, alike: Alike) -> None:
        self._state, self._alike = state, alike
        self._group: dict[str, Group] = {}
        self.groups: list[Group] = []
        self._made: dict[str, NodeStages] = {}

    def add(self, node: str, stages: NodeStages) -> Group:
        """A node computed on its own (the first of its group)."""
        group = self._group[node] = Group(node, stages, [node], len(self._group))
        self.groups.append(group)
        return group

    def join(self, node: str, group: Group) -> None:
        """A node alike to ``group``'s first one."""
        self._group[node] = group
        group.members.append(node)

    def group(self, node: str) -> Group:
        return self._group[node]

    @property
    def group_of(self) -> Mapping[str, Group]:
        """Node -> its group (read-only)."""
        return self._group

    def first(self, node: str) -> NodeStages:
        return self._group[node].stages

    def pools(self, node: str) -> dict | None:
        """The group's first node's pools -> this node's (None: the node is its group's first)."""
        first = self._group[node].first
        if first == node:
            return None
        return dict(zip(self._alike.pools[first], self._alike.pools[node]))

    def __getitem__(self, node: str) -> NodeStages:
        group = self._group[node]
        if group.first == node:
            return group.stages
        made = self._made.get(node)
        if made is None:
            made = self._made[node] = renamed(group.stages, self.pools(node), node, self._state.slices_for(node),
                                              self._state.holders)  # fmt: skip
        return made

    def __contains__(self, node: object) -> bool:
        return node in self._group

    def __iter__(self) -> Iterator[str]:
        return iter(self._group)

    def __len__(self) -> int:
        return len(self._group)


@dataclass
class Funnel:
    """Everything computed for one set of claims."""

    per_node: NodeMap
    groups: dict[tuple[int, int], list[tuple[int, int, int]]]  # (claim, request) -> its keys (subrequests)
    stage: str | None  # first stage that empties over all nodes (None: fits on a node the pod may use)
    local_stage: str | None  # the same over the nodes the pod may use
    fits_on: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # node -> allocator error
    tried: int = 0  # nodes the allocator was run on
    constraint_notes: list[str] = field(default_factory=list)
    validation_error: str | None = None
    distinct_by_pointer: bool = False
    run: Any = None  # node name -> the allocator's answer for the claims there (the allocated state gathered once)
    disjoint: bool = False  # no device is visible on two nodes
    _ok: dict[tuple[int, str], bool] = field(default_factory=dict, repr=False)

    def requests_on(self, node: str) -> dict[tuple[int, int, int], RequestOnNode]:
        return {r.key: r for r in self.per_node[node].requests} if node in self.per_node else {}

    def first_requests(self, node: str) -> dict[tuple[int, int, int], RequestOnNode]:
        """The requests of the first node of ``node``'s group: the same counts and reasons, other names."""
        return self.per_node.group(node).by_key if node in self.per_node else {}

    def node_ok(self, node: str, stage: str) -> bool:
        """Whether every request keeps enough devices after ``stage`` on ``node``."""
        if node not in self.per_node:
            return False
        by_key = self.per_node.group(node).by_key
        cache = (id(by_key), stage)
        ok = self._ok.get(cache)
        if ok is None:
            ok = self._ok[cache] = bool(by_key) and all(any(by_key[k].enough(stage) for k in keys if k in by_key)
                                                        for keys in self.groups.values())  # fmt: skip
        return ok

    @property
    def refused(self) -> bool:
        """Whether the allocator refused the claims on some node (``NodeStages.error``)."""
        return any(g.stages.error for g in self.per_node.groups)

    @property
    def has_errors(self) -> bool:
        """Whether some device fails a stage with an error on some node."""
        return any(d.error for g in self.per_node.groups for r in g.stages.requests for d in r.drops)

    def ok_nodes(self, nodes: Sequence[str], stage: str) -> list[str]:
        """The nodes of ``nodes`` where every request keeps enough devices after ``stage``, in order
        (decided once per group)."""
        groups = self.per_node.groups
        good = {id(g) for g in groups if self.node_ok(g.first, stage)}
        if not good:
            return []
        group_of = self.per_node.group_of
        if len(good) == len(groups):
            return [n for n in nodes if n in group_of]
        return [n for n in nodes if id(group_of.get(n)) in good]

    def group_firsts(self, nodes: Sequence[str]) -> list[str]:
        """The first node of ``nodes`` of each group that has one there, in order."""
        group_of, seen, count = self.per_node.group_of, {}, len(self.per_node.groups)
        for node in nodes:
            group = group_of.get(node)
            if group is not None and id(group) not in seen:
                seen[id(group)] = node
                if len(seen) == count:
                    break
        return list(seen.values())

    def blocked_by(self, node: str, stage: str) -> list[tuple[str, str, str]]:
        """The allocated devices in the way at ``stage`` on ``node``."""
        if node not in self.per_node:
            return []
        return blocked(self.per_node.first(node), self.per_node.pools(node), stage)


def compute(state: PlanState, claims: Sequence[Mapping[str, Any]], eligible: Mapping[str, str | None]) -> Funnel:
    """The funnel of ``claims`` (to allocate together) on every node; ``eligible`` maps each node to None
    when the pod may use it, else the reason it may not."""
    flavor, allocated, classes = state.flavor, state.allocated, state.class_by_name
    alike = Alike(state, relevant_attributes(claims, classes, state.kubernetes_version, state.feature_gates))
    per_node = NodeMap(state, alike)
    firsts: dict[tuple, Group | None] = {}  # signature -> its group (None: each node on its own)
    errors = []
    for node in state.nodes:
        view = state.view(node)
        if not view.slices:
            continue
        name = view.name
        signature = alike.signature(view)
        group = firsts.get(signature) if signature is not None else None
        if group is not None:
            per_node.join(name, group)
            continue
        stages = node_stages(claims, node, view.slices, classes, allocated, flavor, state.holders)
        group = per_node.add(name, stages)
        if signature is not None and signature not in firsts:
            firsts[signature] = group if renamable(stages) else None
        if stages.error:
            errors.append(stages.error)
    groups: dict[tuple[int, int], list] = {}
    for group in per_node.groups:
        for r in group.stages.requests:
            keys = groups.setdefault(r.key[:2], [])
            if r.key not in keys:
                keys.append(r.key)
    funnel = Funnel(per_node, groups, None, None, disjoint=alike.disjoint)
    funnel.distinct_by_pointer = rules_for(flavor).distinct_by_pointer
    funnel.run = lambda name: allocate_with(flavor, claims, node=state.node_by_name[name], slices=state.slices_for(name),
                                            classes=state.classes, state=allocated)
    if errors and len(errors) == len(per_node):
        funnel.validation_error = errors[0]
        return funnel
    nodes = list(per_node)
    local = [n for n in nodes if eligible.get(n, "no such node") is None]
    funnel.stage = _first_short(funnel, nodes)
    funnel.local_stage = _first_short(funnel, local)
    if funnel.stage is None or funnel.local_stage is None:
        _together(funnel, state, claims, nodes, local)
    fits_here = any(eligible.get(n, "no such node") is None for n in funnel.fits_on)  # on a node the pod may use
    if funnel.stage is None:
        funnel.stage = "constraints" if not funnel.fits_on else (None if fits_here else "node")
    if funnel.local_stage is None and not fits_here:
        ready = any(funnel.node_ok(n, "counters") for n in funnel.group_firsts(local))
        funnel.local_stage = "constraints" if ready else "node"
    return funnel


def _first_short(funnel: Funnel, nodes: list[str]) -> str | None:
    firsts = funnel.group_firsts(nodes)
    for stage in DEVICE_STAGES:
        if not any(funnel.node_ok(n, stage) for n in firsts):
            return stage
    return None


def _together(funnel: Funnel, state: PlanState, claims: Sequence[Mapping[str, Any]], nodes: list[str],
              local: list[str]) -> None:  # fmt: skip
    """Run the allocator on the nodes where every request keeps enough devices: the pod's own nodes
    first (stopping at the first fit), then the others until a few fits are found. A node alike to
    one already tried gets that node's refusal (the allocation depends only on what makes them alike)."""
    ready = funnel.ok_nodes(nodes, "counters")
    local_set = set(local)
    order = [n for n in ready if n in local_set] + [n for n in ready if n not in local_set]
    refusals: dict[str, str] = {}  # a group (its first node) -> the constraint's quick refusal there
    no_fit: set[str] = set()  # groups the allocator refused
    for name in order:
        if funnel.tried >= ALLOCATE_LIMIT:
            break
        if name not in local_set and len(funnel.fits_on) >= EXAMPLES:
            break
        group = funnel.per_node.first(name).node  # the group's first node
        blocked = refusals.get(group)
        if blocked is None:
            blocked = refusals[group] = _constraint_blocks(funnel, claims, name)
        if blocked:
            if len(funnel.constraint_notes) < EXAMPLES:
                funnel.constraint_notes.append(f"node {name}: {blocked}")
            continue
        funnel.tried += 1
        if group in no_fit:
            result = None
        else:
            try:
                result = funnel.run(name)
            except AllocationError as err:
                funnel.errors[name] = str(err)
                continue
        if result is not None:
            funnel.fits_on.append(name)
            if name in local_set:
                return
        else:
            no_fit.add(group)
            if len(funnel.constraint_notes) < EXAMPLES:
                funnel.constraint_notes.append(f"node {name}: every request has enough devices alone, but not together")


def _constraint_blocks(funnel: Funnel, claims: Sequence[Mapping[str, Any]], node: str) -> str:
    """A quick, exact refusal for a claim whose matchAttribute (scalar values) no value group can meet, or
    whose distinctAttribute has fewer values than devices wanted; "" when the allocator must decide."""
    by_key = funnel.requests_on(node)
    for claim_i, claim in enumerate(claims):
        devices = (claim.get("spec") or {}).get("devices") or {}
        names = [r.get("name", "") for r in devices.get("requests") or []]
        for constraint in devices.get("constraints") or []:
            attribute = constraint.get("matchAttribute") or constraint.get("distinctAttribute")
            applies = [i for i, n in enumerate(names) if not constraint.get("requests") or n in constraint["requests"]]
            single = []
            for request_i in applies:
                keys = funnel.groups.get((claim_i, request_i), [])
                if len(keys) != 1 or keys[0] not in by_key:
                    single = []
                    break
                single.append(by_key[keys[0]])
            if not single:
                continue
            values: list[dict] = []
            for r in single:
                counted: dict = {}
                for device_id in r.survivors["counters"]:
                    device = _device(funnel, node, device_id)
                    found = lookup_attribute(device, device_id, attribute) if device is not None else None
                    value = scalar(found[1]) if found else None
                    if found and value is None:
                        return ""  # a list-type attribute: leave it to the allocator
                    if value is not None:
                        counted[value] = counted.get(value, 0) + 1
                values.append(counted)
            if constraint.get("matchAttribute"):
                common = set.intersection(*(set(v) for v in values)) if values else set()
                if not any(all(v[value] >= r.count for v, r in zip(values, single)) for value in common):
                    groups = "; ".join(", ".join(f"{val[1]}: {n}" for val, n in sorted(v.items(), key=str)) or "none"
                                       for v in values)
                    wanted = " + ".join(str(r.count) for r in single)
                    return (f"matchAttribute {attribute} needs {wanted} device(s) with one value; the devices left "
                            f"per value are {groups}")
            elif not funnel.distinct_by_pointer:  # 1.34 compares by pointer: only a shared device clashes
                distinct = set().union(*(set(v) for v in values)) if values else set()
                wanted = sum(r.count for r in single)
                if len(distinct) < wanted:
                    return (f"distinctAttribute {attribute} needs {wanted} different values; the devices left have "
                            f"{len(distinct)}")
    return ""


def _device(funnel: Funnel, node: str, device_id: tuple[str, str, str]) -> Mapping[str, Any] | None:
    return funnel.per_node[node].devices.get(device_id)


def drop_count(funnel: Funnel, key: tuple[int, int, int], stage: str) -> int:
    """How many devices (per node) are dropped at ``stage`` for request ``key``, over every node."""
    total = 0
    for group in funnel.per_node.groups:
        r = group.by_key.get(key)
        if r is not None:
            total += len(group.members) * len({d.device for d in r.drops if d.stage == stage})
    return total


def drops_at(funnel: Funnel, key: tuple[int, int, int], stage: str, limit: int) -> list[Drop]:
    """The first ``limit`` devices dropped at ``stage`` for request ``key``, in node order."""
    dropping = {id(g) for g in funnel.per_node.groups if key in g.by_key and any(d.stage == stage for d in g.by_key[key].drops)}
    out: list[Drop] = []
    if not dropping:
        return out
    for name in funnel.per_node:
        if id(funnel.per_node.group(name)) in dropping:
            out += [d for d in funnel.requests_on(name)[key].drops if d.stage == stage]
            if len(out) >= limit:
                break
    return out[:limit]
