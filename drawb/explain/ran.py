"""Where a bound pod runs or ran: its phase and containers, and what became of its claims once it ended.

A pod that ended (Succeeded or Failed) waits for nothing: the resourceclaim controller takes it out of
its claims' ``reservedFor``, deallocates a claim no other pod holds, and deletes a claim it made from a
template for that pod. A claim's allocation is the only record of the devices a pod had; once the
claim is deallocated or deleted, only the pod's ``allocatedResourcesStatus`` (the ResourceHealthStatus
gate, on from 1.36) still names them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drawb.alloc.view import PlanState
from drawb.explain.objects import allocation_of, meta, name_of, namespace_of

ENDED = ("Succeeded", "Failed")
NOT_RECORDED = ("which devices it had is no longer recorded: a claim's allocation is the only record, and it went "
                "when the claim was deallocated or deleted (from 1.36 the pod's allocatedResourcesStatus keeps it); "
                "the pod's log may name the GPUs it saw")


def has_ended(pod: Mapping[str, Any]) -> bool:
    """Whether the pod is Succeeded or Failed (its containers will not run again)."""
    return (pod.get("status") or {}).get("phase") in ENDED


def containers_text(pod: Mapping[str, Any]) -> str:
    """Each container's state: running since, waiting for what, or exited with what code when."""
    parts = []
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        state = status.get("state") or {}
        restarts = status.get("restartCount") or 0
        again = f", restarted {restarts} time(s)" if restarts else ""
        if "running" in state:
            parts.append(f"container {status['name']} running since {state['running'].get('startedAt', '?')}{again}")
        elif "terminated" in state:
            ended = state["terminated"]
            parts.append(f"container {status['name']} exited with code {ended.get('exitCode')} "
                         f"({ended.get('reason', 'no reason')}) at {ended.get('finishedAt', '?')}{again}")
        elif "waiting" in state:
            waiting = state["waiting"]
            parts.append(f"container {status['name']} waiting: {waiting.get('reason', '?')}{again}")
    return "; ".join(parts)


def progress_text(pod: Mapping[str, Any], node: str) -> str:
    """A bound pod that has not ended: running, or starting on its node."""
    status = pod.get("status") or {}
    if status.get("phase") == "Running":
        since = f" (Running since {status['startTime']})" if status.get("startTime") else ""
        head = f"the pod runs on node {node}{since}"
    else:
        head = f"the pod is bound to node {node} and starting"
    containers = containers_text(pod)
    return f"{head}, its claims allocated and reserved for it" + (f": {containers}" if containers else "")


def ended_text(pod: Mapping[str, Any]) -> str:
    """Where a pod that ended ran, and how it ended."""
    status = pod.get("status") or {}
    node = (pod.get("spec") or {}).get("nodeName") or "no node (it ended before it was scheduled)"
    verb = "succeeded" if status.get("phase") == "Succeeded" else "failed"
    reason = f" ({status['reason']}: {status.get('message', '')})" if status.get("reason") else ""
    containers = containers_text(pod)
    return (f"the pod ran on node {node} and {verb}{reason}" + (f": {containers}" if containers else "")
            + "; it has ended, so it waits for nothing and holds no device")


@dataclass
class ClaimFate:
    """What became of one of an ended pod's claims."""

    entry: str  # the pod's resourceClaims entry
    claim: str | None  # the claim's name (None: none was made)
    text: str
    still_held: dict | None = None  # the claim, while it is still reserved for the pod


def claim_fates(state: PlanState, pod: Mapping[str, Any]) -> list[ClaimFate]:
    """What became of each claim of an ended pod."""
    namespace = namespace_of(pod)
    made = {s.get("name"): s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
    fates = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        key, template = entry.get("name", ""), entry.get("resourceClaimTemplateName")
        name = entry.get("resourceClaimName") or made.get(key)
        if not name:
            text = (f"entry {key!r}: no claim was made from template {template} (the controller needed none, or the pod "
                    "ended first)" if template else f"entry {key!r} names no claim")
            fates.append(ClaimFate(key, None, text))
            continue
        claim = state.claim(namespace, name)
        fates.append(ClaimFate(key, name, *_fate(claim, name, template, pod)))
    return fates


def _fate(claim: dict | None, name: str, template: str | None, pod: Mapping[str, Any]) -> tuple[str, dict | None]:
    if claim is None:
        if template:
            return (f"claim {name} (made from template {template} for this pod) was deleted by the resourceclaim "
                    "controller when the pod ended: its devices are free", None)
        return f"claim {name} no longer exists", None
    reserved = [r for r in (claim.get("status") or {}).get("reservedFor") or [] if r.get("resource") == "pods"]
    if any(r.get("uid") == meta(pod).get("uid") and r.get("name") == name_of(pod) for r in reserved):
        return (f"claim {name} is still reserved for the pod: the resourceclaim controller releases it shortly "
                "(is kube-controller-manager running?)", claim)
    if allocation_of(claim) and reserved:
        return (f"claim {name} stays allocated, reserved for pod(s) {', '.join(r.get('name', '') for r in reserved)}: "
                "it is shared, its devices are theirs now", None)
    if allocation_of(claim):
        return f"claim {name} is allocated but reserved for no pod: the resourceclaim controller deallocates it", None
    kept = "" if template else ", and kept: it was created on its own, not for this pod"
    return f"claim {name} was deallocated when the pod ended (its devices are free){kept}", None


def recorded_devices(pod: Mapping[str, Any]) -> list[tuple[str, tuple[str, str, str]]]:
    """(claim/request, (driver, pool, device)) from the containers' ``allocatedResourcesStatus``."""
    found: list[tuple[str, tuple[str, str, str]]] = []
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        for entry in status.get("allocatedResourcesStatus") or []:
            label = entry.get("name", "")
            if not label.startswith("claim:"):
                continue
            for resource in entry.get("resources") or []:
                driver, _, rest = str(resource.get("resourceID", "")).partition("/")
                pool, _, device = rest.rpartition("/")  # a pool's name may hold slashes, a driver's and device's not
                item = (label.removeprefix("claim:"), (driver, pool, device))
                if driver and pool and device and item not in found:
                    found.append(item)
    return found
