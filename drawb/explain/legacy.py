"""``why`` for a pod that asks for extended resources (``nvidia.com/gpu: 1`` in its limits) and uses no
ResourceClaim: what it asks for, which nodes offer it (allocatable, free), whether a DeviceClass maps it
(``extendedResourceName``) and DRAExtendedResource is on, and the fix. The node filters are the
scheduler's (``drawb.api.nodeaffinity`` then ``drawb.api.resourcefit``), as the simulated scheduler runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb import versions
from drawb.alloc.versions import flavor
from drawb.api.nodeaffinity import node_exclusion
from drawb.api.resourcefit import ResourceFit, dra_mapped, node_allocatable, resource_fit
from drawb.explain import result as r
from drawb.explain.ran import containers_text, ended_text, has_ended
from drawb.explain.result import Explanation, Remedy
from drawb.explain.state import ClusterState, name_of

GATE = "DRAExtendedResource"


def _gate_text(state: ClusterState, on: bool) -> str:
    gate = versions.rules(state.kubernetes_version).gates.get(GATE)
    minor = flavor(state.kubernetes_version, state.feature_gates).minor
    if gate is None:
        return f"Kubernetes 1.{minor} has no {GATE} feature gate"
    default = "on" if gate.default else "off"
    return f"{GATE} is {'on' if on else 'off'} (Kubernetes 1.{minor}: {gate.stage}, {default} by default)"


def extended_fit(state: ClusterState, pod: Mapping[str, Any]) -> ResourceFit | None:
    """The scheduler's NodeResourcesFit check of ``pod``'s extended resources on this cluster (None: it asks for none)."""
    on = bool(dict(flavor(state.kubernetes_version, state.feature_gates).gates).get(GATE, False))
    return resource_fit(pod, state.pods, state.classes, on)


def _offers(state: ClusterState, fit: ResourceFit) -> list[str]:
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


def explain_legacy(state: ClusterState, out: Explanation, pod: Mapping[str, Any], wanted: Mapping[str, int]) -> Explanation:
    """The explanation of ``pod``, which asks for the extended resources ``wanted`` and uses no claim."""
    on = bool(dict(flavor(state.kubernetes_version, state.feature_gates).gates).get(GATE, False))
    fit = extended_fit(state, pod) or ResourceFit(wanted)
    asked = ", ".join(f"{name}: {count}" for name, count in wanted.items())
    mapped = dra_mapped(state.classes)
    out.notes += _offers(state, fit)
    for name in wanted:
        if name in mapped:
            served = "so the scheduler serves it through DRA where no node's device plugin offers it" if on else \
                "which the scheduler ignores while the gate is off"
            out.notes.append(f"DeviceClass {mapped[name]} maps {name} (extendedResourceName), {served}")
            out.cited.append(f"DeviceClass {mapped[name]}")
        else:
            out.notes.append(f"no DeviceClass maps {name} (spec.extendedResourceName)")
    out.notes.append(_gate_text(state, on))
    node_name = (pod.get("spec") or {}).get("nodeName")
    if has_ended(pod):
        out.state, out.summary = r.ENDED, f"{ended_text(pod)}; it asked for {asked} through a device plugin"
        return out
    if node_name:
        running = (pod.get("status") or {}).get("phase") == "Running"
        head = f"the pod runs on node {node_name}" if running else f"the pod is bound to node {node_name} and starting"
        node = state.node_by_name.get(node_name) or {}
        by_plugin = all(name in node_allocatable(node) for name in wanted)
        served = ("the node's device plugin serves it" if by_plugin else
                  "the node's device plugin does not advertise it, so DRA serves it (DRAExtendedResource; drawb's "
                  "simulation does not yet make the claim the real scheduler makes for such a pod)")
        containers = containers_text(pod)
        out.state, out.summary = r.ALLOCATED, (f"{head}; it asks for {asked} and {served}"
                                               + (f": {containers}" if containers else ""))
        return out
    fits = []
    for node in state.nodes:
        exclusion = node_exclusion(pod, node) or fit.exclusion(node)
        if exclusion is None:
            fits.append(name_of(node))
        else:
            out.excluded[name_of(node)] = exclusion.detail
    out.stage = "node"
    if fits:
        out.fits_on = fits
        out.state, out.summary = r.FITS_NOW, (f"node(s) {', '.join(fits[:3])} advertise enough {asked} for the pod; "
                                              "the scheduler binds it on its next attempt")
        return out
    out.state = r.PENDING
    out.summary = (f"the pod asks for {asked} in its container resources (the device plugin road, no ResourceClaim), "
                   "and no node the pod may use advertises enough of it free (NodeResourcesFit: Insufficient)")
    out.remedies.append(Remedy("migrate", "ask for the GPU through DRA instead: a ResourceClaimTemplate and "
                               "spec.resourceClaims (the migrate command rewrites the manifest)"))
    out.remedies.append(Remedy("wait", "or run it where a device plugin advertises " + ", ".join(wanted)
                               + " (a node with NVIDIA's device plugin, which this cluster's DRA nodes do not run)"))
    return out
