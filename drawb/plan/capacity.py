"""Capacity: how many more copies of a workload fit right now, per node and in total.

Copies are placed one at a time against the shrinking free set, as the scheduler would place
them: each copy's claims are allocated by ``drawb.alloc`` with every earlier copy's devices in use.
With node-local slices a node's devices serve only its own pods, so the copies a node takes do
not depend on the other nodes: each node is filled on its own, and nodes of the same signature
(``PlanState.signature``) are filled once. Slices shared between nodes (``allNodes``,
``nodeSelector``) tie the nodes together: then copies go one by one to the first node that fits,
as the simulated scheduler places them.

For each node the result says what ran out (the requests that no longer fit even alone, or the
constraints when each would still fit alone), the MIG devices left free that no copy could use
(fragmentation), and the shared counters left on partitionable devices.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from drawb.alloc import AllocationError
from drawb.alloc.state import gather_allocated
from drawb.alloc.relevance import relevant_attributes
from drawb.alloc.verdicts import CANNOT_ALLOCATE, node_reason
from drawb.alloc.view import NodeView, PlanState, holding, results
from drawb.api.quantity import Quantity
from drawb.errors import DrawbError
from drawb.plan.preview import try_nodes
from drawb.plan.workload import Workload

PER_NODE_LIMIT = 1000  # copies counted per node before giving up (admin access takes no devices)
SHARED_LIMIT = 5000  # copies placed one by one when slices are shared between nodes


class SharedClaimsOnly(DrawbError):
    """Every copy of the pod would share all its claims: copies need no devices of their own."""

    hint = "capacity counts copies of claims stamped from templates; give the pod a resourceClaimTemplateName"


@dataclass
class NodeCapacity:
    """How many more copies one node takes."""

    node: str
    copies: int
    exhausted: str  # what ran out
    free_mig: dict[str, int] = field(default_factory=dict)  # profile -> free MIG devices left
    counters_left: dict[str, str] = field(default_factory=dict)  # counter -> amount left, summed
    capped: bool = False


@dataclass
class Capacity:
    """How many more copies of a workload fit, where."""

    workload: Workload
    nodes: list[NodeCapacity] = field(default_factory=list)  # nodes that passed the node filters
    rejected: dict[str, int] = field(default_factory=dict)  # node filter reason -> nodes
    node_count: int = 0
    error: str | None = None
    one_by_one: bool = False  # shared slices: placed copy by copy

    @property
    def total(self) -> int:
        """Copies that fit in all."""
        return sum(n.copies for n in self.nodes)


def _copy_of(claim: dict) -> dict:
    """A new claim of the same spec (and name, so that messages name the claim asked about)."""
    out = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": claim["metadata"]["name"],
                        "namespace": claim["metadata"].get("namespace", "")},
           "spec": copy.deepcopy(claim.get("spec") or {})}
    return out


def _alone(claim: dict, request: dict) -> dict:
    spec = copy.deepcopy(claim.get("spec") or {})
    spec["devices"] = {"requests": [copy.deepcopy(request)]}
    return {**claim, "spec": spec}


def _exhausted(state: PlanState, claims: list[dict], view: NodeView, extra: list[dict]) -> str:
    """What stops the next copy on this node."""
    out = []
    for claim in claims:
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            try:
                fits = state.allocate([_alone(claim, request)], view, extra) is not None
            except AllocationError:
                fits = False
            if not fits:
                classes = [request.get("exactly", {}).get("deviceClassName")] if request.get("exactly") else \
                    [s.get("deviceClassName") for s in request.get("firstAvailable") or []]
                out.append(f"{request.get('name')} ({', '.join(c for c in classes if c)})")
    if out:
        return "devices for " + ", ".join(out)
    return "constraints (every request still fits alone, not all together)"


def _leftovers(state: PlanState, view: NodeView, extra: list[dict]) -> tuple[dict[str, int], dict[str, str]]:
    """Free MIG devices by profile (static ones) and the shared counters left, after the fill."""
    in_use = gather_allocated([*view.allocated, *extra], state.consumable).allocated
    free_mig: dict[str, int] = {}
    counters: dict[str, Quantity] = {}
    available: dict[tuple, dict[str, Quantity]] = {}
    for rs in view.slices:
        spec = rs.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for counter_set in spec.get("sharedCounters") or []:
            available[(driver, pool, counter_set.get("name", ""))] = {
                n: Quantity.parse(str((c or {}).get("value", "0"))) for n, c in (counter_set.get("counters") or {}).items()}
    for rs in view.slices:
        spec = rs.get("spec") or {}
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for device in spec.get("devices") or []:
            used = (driver, pool, device.get("name", "")) in in_use
            if used:
                for consumption in device.get("consumesCounters") or []:
                    left = available.get((driver, pool, consumption.get("counterSet", "")))
                    for n, c in (consumption.get("counters") or {}).items():
                        if left is not None and n in left:
                            left[n] = left[n] - Quantity.parse(str((c or {}).get("value", "0")))
                continue
            attributes = device.get("attributes") or {}
            kind = attributes.get("type", attributes.get(f"{driver}/type")) or {}
            if kind.get("string") == "mig" and not device.get("consumesCounters"):
                profile = (attributes.get("profile", attributes.get(f"{driver}/profile")) or {}).get("string", "?")
                free_mig[profile] = free_mig.get(profile, 0) + 1
    for left in available.values():
        for n, q in left.items():
            counters[n] = counters[n] + q if n in counters else q
    return free_mig, {n: str(q) for n, q in sorted(counters.items())}


def _fill(state: PlanState, claims: list[dict], view: NodeView, extra: list[dict], start: int = 0) -> NodeCapacity:
    extra = list(extra)
    count = start
    while count < PER_NODE_LIMIT:
        allocations = state.allocate(claims, view, extra)
        if allocations is None:
            break
        extra.extend(holding(allocations))
        count += 1
    capped = count >= PER_NODE_LIMIT
    exhausted = f"not counted past {PER_NODE_LIMIT}" if capped else _exhausted(state, claims, view, extra)
    free_mig, counters = _leftovers(state, view, extra)
    return NodeCapacity(view.name, count, exhausted, free_mig, counters, capped)


def capacity(workload: Workload, state: PlanState) -> Capacity:
    """How many more copies of ``workload`` fit now (see the module)."""
    return _capacity(workload, state)


def _capacity(workload: Workload, state: PlanState) -> Capacity:
    fresh = [_copy_of(c) for c, f in zip(workload.claims, workload.fresh) if f]
    shared_new = [c for c, f in zip(workload.claims, workload.fresh) if not f and not results(c)
                  and not (c.get("status") or {}).get("allocation")]
    held = [c for c, f in zip(workload.claims, workload.fresh) if not f and (c.get("status") or {}).get("allocation")]
    if not fresh:
        raise SharedClaimsOnly(f"{workload.label} uses only claims it names (no template): every copy would "
                               "share them, so copies need no devices of their own")
    out = Capacity(workload, node_count=len(state.nodes))
    first: tuple[str, list[dict]] | None = None
    if shared_new:  # the first copy also allocates the claims the copies share
        attempt = try_nodes(workload, state, [*shared_new, *fresh], stop_at_first=True)
        if attempt.error or not attempt.fits:
            out.error = attempt.error
            out.rejected = attempt.rejected
            return out
        fit = attempt.fits[0]
        held = [*held, *({"metadata": c["metadata"], "status": {"allocation": a}}
                         for c, a in zip(shared_new, fit.allocations))]
        first = (fit.node, holding(fit.allocations))
    try:
        if state.nonlocal_slices:
            return _one_by_one(workload, state, fresh, held, first, out)
        return _per_node(workload, state, fresh, held, first, out)
    except AllocationError as err:
        out.error = str(err)
        out.nodes = []
        return out


def _passes(workload: Workload, node: dict, held: list[dict]) -> str | None:
    pod = workload.pod if workload.pod.get("spec") is not None else {**workload.pod, "spec": {}}
    return node_reason(pod, node, held)


def _per_node(workload, state, fresh, held, first, out: Capacity) -> Capacity:
    relevant = relevant_attributes(fresh, state.class_by_name, state.kubernetes_version, state.feature_gates)
    groups: dict[tuple, NodeCapacity] = {}
    for node in state.nodes:
        reason = _passes(workload, node, held)
        if reason is not None:
            out.rejected[reason] = out.rejected.get(reason, 0) + 1
            continue
        view = state.view(node)
        if first is not None and first[0] == view.name:
            out.nodes.append(_fill(state, fresh, view, first[1], start=1))
            continue
        signature = state.signature(view, relevant)
        if signature not in groups:
            groups[signature] = _fill(state, fresh, view, [])
        same = groups[signature]
        out.nodes.append(NodeCapacity(view.name, same.copies, same.exhausted, dict(same.free_mig),
                                      dict(same.counters_left), same.capped))
    return out


def _one_by_one(workload, state, fresh, held, first, out: Capacity) -> Capacity:
    """Slices shared between nodes: place copy after copy on the first node that fits."""
    out.one_by_one = True
    extra: dict[str, list[dict]] = {}
    counts: dict[str, int] = {}
    if first is not None:
        extra[first[0]] = list(first[1])
        counts[first[0]] = 1
    views = {}
    for node in state.nodes:
        reason = _passes(workload, node, held)
        if reason is not None:
            out.rejected[reason] = out.rejected.get(reason, 0) + 1
        else:
            views[node["metadata"]["name"]] = state.view(node)
    placed = sum(counts.values())
    while placed < SHARED_LIMIT:
        everywhere = [h for hs in extra.values() for h in hs]
        for name, view in views.items():
            allocations = state.allocate(fresh, view, everywhere)
            if allocations is not None:
                extra.setdefault(name, []).extend(holding(allocations))
                counts[name] = counts.get(name, 0) + 1
                break
        else:
            break
        placed += 1
    everywhere = [h for hs in extra.values() for h in hs]
    for name, view in views.items():
        free_mig, counters = _leftovers(state, view, everywhere)
        capped = placed >= SHARED_LIMIT
        exhausted = f"not counted past {SHARED_LIMIT}" if capped else _exhausted(state, fresh, view, everywhere)
        out.nodes.append(NodeCapacity(name, counts.get(name, 0), exhausted, free_mig, counters, capped))
    return out


__all__ = ["CANNOT_ALLOCATE", "Capacity", "NodeCapacity", "SharedClaimsOnly", "capacity"]
