"""The funnel of a pod's unallocated claims over every node, and the stages that empty.

Device stages come from ``drawb.explain.devices`` node by node; then, on the nodes where every request
keeps enough devices, ``drawb.alloc.allocate`` decides whether the claims fit *together* (constraints,
counters shared between requests); last, whether such a node is one the pod may use (its node selector,
required affinity, node taints, the nodes of claims already allocated).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from drawb.alloc import AllocationError
from drawb.alloc.allocator import allocate_with
from drawb.alloc.constraints import lookup_attribute, scalar
from drawb.alloc.rules import rules_for
from drawb.alloc.state import gather_allocated
from drawb.alloc.versions import flavor as resolve_flavor
from drawb.explain.devices import DEVICE_STAGES, Drop, NodeStages, RequestOnNode, node_stages
from drawb.explain.state import ClusterState, name_of

STAGES = (*DEVICE_STAGES, "constraints", "node")
EXAMPLES = 3
ALLOCATE_LIMIT = 400  # nodes tried with the allocator for the "constraints" stage


@dataclass
class Funnel:
    """Everything computed for one set of claims."""

    per_node: dict[str, NodeStages]
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

    def requests_on(self, node: str) -> dict[tuple[int, int, int], RequestOnNode]:
        return {r.key: r for r in self.per_node[node].requests} if node in self.per_node else {}

    def node_ok(self, node: str, stage: str) -> bool:
        """Whether every request keeps enough devices after ``stage`` on ``node``."""
        by_key = self.requests_on(node)
        if not by_key:
            return False
        return all(any(by_key[k].enough(stage) for k in keys if k in by_key) for keys in self.groups.values())


def compute(state: ClusterState, claims: Sequence[Mapping[str, Any]], eligible: Mapping[str, str | None]) -> Funnel:
    """The funnel of ``claims`` (to allocate together) on every node; ``eligible`` maps each node to None
    when the pod may use it, else the reason it may not."""
    flavor = resolve_flavor(state.kubernetes_version, state.feature_gates)
    gates = dict(flavor.gates)
    allocated = gather_allocated(state.allocated_claims, gates.get("DRAConsumableCapacity", False))
    classes = {name_of(c): c for c in state.classes}
    per_node: dict[str, NodeStages] = {}
    errors = []
    for node in state.nodes:
        name = name_of(node)
        slices = state.slices_for(name)
        if not slices:
            continue
        stages = node_stages(claims, node, slices, classes, allocated, flavor, state.holders)
        if stages.error:
            errors.append(stages.error)
        per_node[name] = stages
    groups: dict[tuple[int, int], list] = {}
    for stages in per_node.values():
        for r in stages.requests:
            keys = groups.setdefault(r.key[:2], [])
            if r.key not in keys:
                keys.append(r.key)
    funnel = Funnel(per_node, groups, None, None)
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
    if funnel.stage is None:
        funnel.stage = "constraints" if not funnel.fits_on else (
            None if any(n in local for n in funnel.fits_on) else "node")
    if funnel.local_stage is None and not any(n in local for n in funnel.fits_on):
        funnel.local_stage = "constraints" if local and any(funnel.node_ok(n, "counters") for n in local) else "node"
    return funnel


def _first_short(funnel: Funnel, nodes: list[str]) -> str | None:
    for stage in DEVICE_STAGES:
        if not any(funnel.node_ok(n, stage) for n in nodes):
            return stage
    return None


def _together(funnel: Funnel, state: ClusterState, claims: Sequence[Mapping[str, Any]], nodes: list[str],
              local: list[str]) -> None:  # fmt: skip
    """Run the allocator on the nodes where every request keeps enough devices: the pod's own nodes
    first (stopping at the first fit), then the others until a few fits are found."""
    ready = [n for n in nodes if funnel.node_ok(n, "counters")]
    local_set = set(local)
    order = [n for n in ready if n in local_set] + [n for n in ready if n not in local_set]
    for name in order:
        if funnel.tried >= ALLOCATE_LIMIT:
            break
        if name not in local_set and len(funnel.fits_on) >= EXAMPLES:
            break
        blocked = _constraint_blocks(funnel, claims, name)
        if blocked:
            if len(funnel.constraint_notes) < EXAMPLES:
                funnel.constraint_notes.append(f"node {name}: {blocked}")
            continue
        funnel.tried += 1
        try:
            result = funnel.run(name)
        except AllocationError as err:
            funnel.errors[name] = str(err)
            continue
        if result is not None:
            funnel.fits_on.append(name)
            if name in local_set:
                return
        elif len(funnel.constraint_notes) < EXAMPLES:
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


def drops_at(funnel: Funnel, key: tuple[int, int, int], stage: str, nodes: list[str] | None = None) -> list[Drop]:
    """The devices dropped at ``stage`` for request ``key`` (on ``nodes``, or everywhere)."""
    out = []
    for name in nodes if nodes is not None else funnel.per_node:
        r = funnel.requests_on(name).get(key)
        if r is not None:
            out += [d for d in r.drops if d.stage == stage]
    return out
