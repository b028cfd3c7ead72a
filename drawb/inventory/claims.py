"""ResourceClaims to a frame (state, requests, allocated devices, reserving pods) and to allocations."""

from __future__ import annotations

from typing import Any

import pandas as pd

from drawb.inventory._frame import Allocations, bool_array, object_array, string_array
from drawb.inventory._read import list_items

TEMPLATE_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
EXTENDED_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"  # made by the scheduler, not from a template


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _status(obj: dict) -> dict:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def claim_key(obj: dict) -> str:
    """``namespace/name`` of a claim."""
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"


def claim_state(obj: dict) -> str:
    """The STATE column of ``kubectl get resourceclaims``: ``pending``, ``allocated``,
    ``allocated,reserved``, with ``deleted`` first while the claim is being deleted."""
    states = ["deleted"] if _meta(obj).get("deletionTimestamp") else []
    status = _status(obj)
    if status.get("allocation"):
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    elif not states:
        states.append("pending")
    return ",".join(states)


def reserved_for(obj: dict) -> list[str]:
    """Consumers of a claim: pod names, or ``resource/name`` for other kinds."""
    names = []
    for ref in _status(obj).get("reservedFor") or ():
        if isinstance(ref, dict):
            resource, name = ref.get("resource", "pods"), ref.get("name", "?")
            names.append(name if resource == "pods" and not ref.get("apiGroup") else f"{resource}/{name}")
    return names


def allocation_results(obj: dict) -> list[dict]:
    """``status.allocation.devices.results`` of a claim (empty when unallocated)."""
    allocation = _status(obj).get("allocation")
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    return [r for r in results or () if isinstance(r, dict)]


def allocated_devices(obj: dict) -> list[str]:
    """The claim's allocated devices as ``driver/pool/device``."""
    return [f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in allocation_results(obj)]


def _exact_text(req: dict) -> str:
    cls = req.get("deviceClassName", "?")
    if req.get("allocationMode") == "All":
        text = f"all x {cls}"
    else:
        text = f"{req.get('count', 1)} x {cls}"
    selectors = req.get("selectors") or []
    if selectors:
        text += f" ({len(selectors)} selector{'s' if len(selectors) > 1 else ''})"
    if req.get("adminAccess"):
        text += " admin"
    return text


def request_summary(spec: Any) -> str:
    """A one-line summary of a claim spec's requests: ``gpu: 1 x gpu.nvidia.com; mig: first of [...]``."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    parts = []
    for req in requests or ():
        if not isinstance(req, dict):
            continue
        name = req.get("name", "?")
        if isinstance(req.get("exactly"), dict):
            parts.append(f"{name}: {_exact_text(req['exactly'])}")
        elif isinstance(req.get("firstAvailable"), list):
            alternatives = " | ".join(_exact_text(s) for s in req["firstAvailable"] if isinstance(s, dict))
            parts.append(f"{name}: first of [{alternatives}]")
        else:  # v1beta1 puts the fields on the request itself
            parts.append(f"{name}: {_exact_text(req)}")
    return "; ".join(parts)


def allocations(claims: list[dict] | None, problems: list[str] | None = None) -> Allocations:
    """Allocated devices of all claims: (driver, pool, device) -> (claims, requests, reserving pods)."""
    out: Allocations = {}
    for position, obj in enumerate(list_items(claims)):
        if not isinstance(obj, dict):
            if problems is not None:
                problems.append(f"ResourceClaim <item {position}>: not an object; left out")
            continue
        key, pods = claim_key(obj), reserved_for(obj)
        for j, result in enumerate(allocation_results(obj)):
            driver, pool, device = result.get("driver"), result.get("pool"), result.get("device")
            if not all(isinstance(v, str) for v in (driver, pool, device)):
                if problems is not None:
                    problems.append(f"ResourceClaim '{key}' status.allocation.devices.results[{j}]: "
                                    "driver, pool and device must be strings; result left out")
                continue
            entry = out.setdefault((driver, pool, device), ([], [], []))
            entry[0].append(key)
            entry[1].append(str(result.get("request", "")))
            entry[2].extend(p for p in pods if p not in entry[2])
    return out


def claim_frame(claims: list[dict]) -> pd.DataFrame:
    """One row per ResourceClaim: namespace, name, state, requests, devices, reserved_for, template origin."""
    rows = [c for c in list_items(claims) if isinstance(c, dict)]
    metas = [_meta(c) for c in rows]
    owners = []
    for meta in metas:
        pod = None
        for ref in meta.get("ownerReferences") or ():
            if isinstance(ref, dict) and ref.get("kind") == "Pod" and ref.get("controller"):
                pod = ref.get("name")
        owners.append(pod)
    annotations = [m.get("annotations") if isinstance(m.get("annotations"), dict) else {} for m in metas]
    return pd.DataFrame(
        {
            "namespace": string_array([m.get("namespace") for m in metas]),
            "name": string_array([m.get("name") for m in metas]),
            "state": string_array([claim_state(c) for c in rows]),
            "requests": string_array([request_summary(c.get("spec")) for c in rows]),
            "devices": object_array([allocated_devices(c) for c in rows]),
            "reserved_for": object_array([reserved_for(c) for c in rows]),
            "from_template": bool_array([(o is not None and a.get(EXTENDED_ANNOTATION) != "true") or TEMPLATE_ANNOTATION in a
                                         for o, a in zip(owners, annotations)]),
            "owner_pod": string_array(owners),
            "pod_claim_name": string_array([a.get(TEMPLATE_ANNOTATION) for a in annotations]),
        }
    )
