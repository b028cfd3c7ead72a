"""One scheduling attempt's verdict per node, nodes in name order, alike nodes allocated once.

The filters run in the scheduler's order: NodeUnschedulable, TaintToleration, NodeAffinity
(``drawb.api.nodeaffinity.node_filter``), NodeResourcesFit for extended resources when the pod asks for
any (``drawb.api.resourcefit.ResourceFit``), then DynamicResources: the claims the pod holds already
must be available on the node, the others are allocated by ``drawb.alloc`` with the devices in use
counted, with the claim kube-scheduler makes for the pod's extended resources a DeviceClass serves where the
node leaves them to DRA (``drawb.alloc.extended``). Nodes of the same signature (``PlanState.signature``) are allocated once, on the first of
them that passes the other filters, so a node that fits always has its allocation made on itself
or on an alike node before it. The simulated scheduler, ``preview`` and ``capacity`` all walk the
nodes through ``verdicts``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drawb.alloc.extended import ExtendedClaim, NodeClaim
from drawb.alloc.relevance import relevant_attributes
from drawb.alloc.view import NodeView, PlanState
from drawb.api.nodeaffinity import node_filter, selector_matches
from drawb.api.resourcefit import ResourceFit

CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"

Obj = Mapping[str, Any]


@dataclass
class Verdict:
    """One node's verdict: the scheduler's reason for turning it away, or the allocations of the
    claims being allocated (made on ``source``, a node of the same signature: ``rename`` them); ``extended``:
    the node's extended-resource claim, allocated last."""

    node: Obj
    reason: str | None = None
    view: NodeView | None = None
    source: NodeView | None = None
    allocations: list[dict] | None = None
    extended: NodeClaim | None = None


def node_reason(pod: Obj, node: Obj, held: Sequence[Obj], plain: bool = False,
                fit: ResourceFit | None = None) -> str | None:
    """The reason the filters before allocating turn ``node`` away for ``pod`` (whose ``held`` claims are
    allocated already), or None; ``plain``: the pod has no node selector or required node affinity;
    ``fit``: the pod's extended resources to check (None: it asks for none)."""
    node_spec = node.get("spec") or {}
    if plain and not node_spec.get("unschedulable") and not node_spec.get("taints"):
        reason = None
    else:
        reason = node_filter(pod, node)
    if reason is None and fit is not None:
        short = fit.exclusion(node)
        reason = short.scheduler if short else None
    if reason is None and held and any(not selector_matches(c["status"]["allocation"].get("nodeSelector"), node)
                                       for c in held):
        reason = NOT_AVAILABLE
    return reason


def verdicts(state: PlanState, pod: Obj, allocating: Sequence[Obj], held: Sequence[Obj],
             fit: ResourceFit | None = None, extended: ExtendedClaim | None = None) -> Iterator[Verdict]:
    """Each node's verdict in name order for ``pod``, whose claims ``allocating`` are to be allocated and
    ``held`` are allocated already, whose extended resources ``fit`` checks (None: it asks for none) and
    ``extended`` serves through DRA where a node leaves them to it (None: no DeviceClass serves them);
    the allocator's AllocationError is raised at the node that meets it."""
    spec = pod.get("spec") or {}
    if pod.get("spec") is None:
        pod = {**pod, "spec": spec}
    relevant = relevant_attributes([*allocating, *([extended.classes_claim()] if extended else [])],
                                   state.class_by_name, state.kubernetes_version, state.feature_gates)
    groups: dict[tuple, tuple[NodeView, list[dict] | None]] = {}
    made: dict[tuple, NodeClaim | None] = {}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    plain = not (spec.get("nodeSelector") or required)  # only the node's own spec can exclude it
    for node in state.nodes:
        node_spec = node.get("spec")
        if plain and not held and fit is None and not (node_spec and (node_spec.get("unschedulable") or node_spec.get("taints"))):
            reason = None  # the common case, decided without a call
        else:
            reason = node_reason(pod, node, held, plain, fit)
        if reason is not None:
            yield Verdict(node, reason)
            continue
        view = state.view(node)
        variant = extended.variant(node) if extended else ()
        if variant not in made:
            made[variant] = extended.for_node(node) if extended else None
        own = made[variant]
        claims = [*allocating, own.claim] if own else allocating
        if not claims:
            yield Verdict(node, None, view, view, [])
            continue
        signature = (state.signature(view, relevant), variant)
        found = groups.get(signature)
        if found is None:
            found = groups[signature] = (view, state.allocate(claims, view))
        if found[1] is None:
            yield Verdict(node, CANNOT_ALLOCATE, view)
        else:
            yield Verdict(node, None, view, found[0], found[1], own)
