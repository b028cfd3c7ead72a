"""``why`` for a pod that asks for extended resources (``nvidia.com/gpu: 1`` in its limits) and uses no
ResourceClaim: what it asks for, which nodes offer it (allocatable, free), whether a DeviceClass maps it
(``extendedResourceName`` or its implicit name) and DRAExtendedResource is on, the road taken (the node's device
plugin, or the claim the scheduler made and the devices allocated to it), and the fix. The node filters are the
scheduler's (``drawb.api.nodeaffinity``, ``drawb.api.resourcefit``, then DynamicResources with the claim
``drawb.alloc.extended`` makes), as the simulated scheduler runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb import versions
from drawb.alloc.extended import ExtendedClaim, extended_claim
from drawb.alloc.verdicts import verdicts
from drawb.alloc.view import PlanState
from drawb.api.nodeaffinity import node_exclusion
from drawb.api.resourcefit import (IMPLICIT_PREFIX, ResourceFit, class_mapping, extended_requests, node_allocatable,
                                   resource_fit)
from drawb.explain import result as r
from drawb.explain.ran import containers_text, ended_text, has_ended
from drawb.explain.result import Explanation, Remedy
from drawb.explain.objects import name_of, results_of

GATE = "DRAExtendedResource"


def _gate_text(state: PlanState, on: bool) -> str:
    gate = versions.rules(state.kubernetes_version).gates.get(GATE)
    minor = state.flavor.minor
    if gate is None:
        return f"Kubernetes 1.{minor} has no {GATE} feature gate"
    default = "on" if gate.default else "off"
    return f"{GATE} is {'on' if on else 'off'} (Kubernetes 1.{minor}: {gate.stage}, {default} by default)"


def extended_fit(state: PlanState, pod: Mapping[str, Any]) -> ResourceFit | None:
    """The scheduler's NodeResourcesFit check of ``pod``'s extended resources on this cluster (None: it asks for none)."""
    run = state.flavor
    return resource_fit(pod, state.pods, state.classes, bool(dict(run.gates).get(GATE, False)), run.minor)


def _served_text(state: PlanState, pod: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    """How the pod bound to ``node`` gets what it asks for: the node's device plugin, or the claim the scheduler
    made (its name, requests mapped to containers, the devices allocated)."""
    status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    name = status.get("resourceClaimName")
    if not name:
        offered = node_allocatable(node)
        missing = [r for r, count in extended_requests(pod).items() if offered.get(r, 0) < count]
        if not missing:
            return "the node's device plugin serves it (its allocatable offers it)"
        return (f"neither the node's device plugin nor DRA serves {', '.join(missing)}: the scheduler left it to "
                "DynamicResources, which made no claim for it (kube-scheduler 1.34 does so for a pod that asks only "
                "for a DeviceClass's implicit name), so the pod runs without those devices")
    claim = state.claim((pod.get("metadata") or {}).get("namespace", ""), name)
    mapped = "; ".join(f"container {m.get('containerName')}: {m.get('resourceName')} -> request {m.get('requestName')}"
                       for m in status.get("requestMappings") or ())
    text = (f"the scheduler serves it through DRA (DRAExtendedResource): the node does not offer it, so it made "
            f"ResourceClaim {name} for the pod ({mapped})")
    if claim is None:
        return text + ", which is gone now"
    devices = ", ".join(f"{res.get('device')} ({res.get('request')})" for res in results_of(claim))
    return text + (f", allocated {devices}" if devices else ", not allocated now")


def _dra_verdicts(state: PlanState, pod: Mapping[str, Any], fit: ResourceFit,
                  extended: ExtendedClaim) -> dict[str, str | None]:
    """Node -> the scheduler's reason to turn it away, DynamicResources with the pod's extended claim included
    (None: it fits)."""
    return {name_of(v.node): v.reason for v in verdicts(state, pod, [], [], fit, extended)}


def _offers(state: PlanState, fit: ResourceFit) -> list[str]:
    """For each resource asked for, the nodes that list it in their allocatable, with what is free there."""
    lines = []
    for name, count in fit.wanted.items():
        offering = []
        for node in state.nodes:
            have = node_allocatable(node).get(name, 0)
            if have:
                taken = fit.used.get(name_of(node), {}).get(name, 0)
                offering.append(f"{name_of(node)} (allocatable {have}, free {max(have - taken, 0)})")
        lines.append(f"{name}: the pod asks for {count}; " + (
            f"offered by {', '.join(offering)}" if offering
            else f"no node lists it in its allocatable (no device plugin advertises it; {len(state.nodes)} node(s))"))
    return lines


def explain_legacy(state: PlanState, out: Explanation, pod: Mapping[str, Any], wanted: Mapping[str, int]) -> Explanation:
    """The explanation of ``pod``, which asks for the extended resources ``wanted`` and uses no claim."""
    run = state.flavor
    on = bool(dict(run.gates).get(GATE, False))
    fit = extended_fit(state, pod) or ResourceFit(wanted)
    extended = extended_claim(pod, state.classes, state.kubernetes_version, state.feature_gates or {})
    asked = ", ".join(f"{name}: {count}" for name, count in wanted.items())
    mapped = class_mapping(state.classes, run.minor)
    out.notes += _offers(state, fit)
    for name in wanted:
        if name in mapped:
            how = "its implicit name" if name.startswith(IMPLICIT_PREFIX) else "extendedResourceName"
            served = ("so the scheduler serves it through DRA on a node whose device plugin does not offer it"
                      if extended and name in extended.mapping else "which the scheduler ignores while the gate is off"
                      if not on else "which the scheduler of this version does not serve through DRA")
            out.notes.append(f"DeviceClass {mapped[name]} maps {name} ({how}), {served}")
            out.cited.append(f"DeviceClass {mapped[name]}")
        else:
            out.notes.append(f"no DeviceClass maps {name} (spec.extendedResourceName)")
    out.notes.append(_gate_text(state, on))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if has_ended(pod):
        claim = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        road = (f"through DRA: the scheduler made ResourceClaim {claim} for it"
                + ("" if state.claim((pod.get("metadata") or {}).get("namespace", ""), claim) else ", deleted since")
                if claim else "through a device plugin")
        out.state, out.summary = r.ENDED, f"{ended_text(pod)}; it asked for {asked} {road}"
        return out
    if node_name:
        running = (pod.get("status") or {}).get("phase") == "Running"
        head = f"the pod runs on node {node_name}" if running else f"the pod is bound to node {node_name} and starting"
        served = _served_text(state, pod, state.node_by_name.get(node_name) or {})
        containers = containers_text(pod)
        out.state, out.summary = r.ALLOCATED, (f"{head}; it asks for {asked} and {served}"
                                               + (f": {containers}" if containers else ""))
        return out
    fits = []
    dra = _dra_verdicts(state, pod, fit, extended) if extended else {}
    for node in state.nodes:
        exclusion = node_exclusion(pod, node) or fit.exclusion(node)
        if exclusion is not None:
            out.excluded[name_of(node)] = exclusion.detail
        elif dra.get(name_of(node)):
            node_claim = extended.for_node(node) if extended else None
            asks = ", ".join(f"{q['exactly']['count']} of DeviceClass {q['exactly']['deviceClassName']}"
                             for q in (node_claim.claim["spec"]["devices"]["requests"] if node_claim else ()))
            out.excluded[name_of(node)] = (f"{dra[name_of(node)]}: the claim the scheduler would make asks for {asks}, "
                                           "more than the node has free")
        else:
            fits.append(name_of(node))
    out.stage = "node"
    if fits:
        out.fits_on = fits
        out.state, out.summary = r.FITS_NOW, (f"node(s) {', '.join(fits[:3])} advertise enough {asked} for the pod; "
                                              "the scheduler binds it on its next attempt")
        return out
    out.state = r.PENDING
    if extended:
        out.summary = (f"the pod asks for {asked} in its container resources; where no device plugin offers it the "
                       "scheduler would serve it through DRA with a claim it makes for the pod, and no node the pod "
                       "may use has enough devices free (DynamicResources: cannot allocate all claims)")
        out.remedies.append(Remedy("wait", "wait until devices of " + ", ".join(sorted(set(extended.mapping.values())))
                                   + " are free, or ask for fewer"))
        return out
    out.summary = (f"the pod asks for {asked} in its container resources (the device plugin road, no ResourceClaim), "
                   "and no node the pod may use advertises enough of it free (NodeResourcesFit: Insufficient)")
    out.remedies.append(Remedy("migrate", "ask for the GPU through DRA instead: a ResourceClaimTemplate and "
                               "spec.resourceClaims (the migrate command rewrites the manifest)"))
    out.remedies.append(Remedy("wait", "or run it where a device plugin advertises " + ", ".join(wanted)
                               + " (a node with NVIDIA's device plugin, which this cluster's DRA nodes do not run)"))
    return out
