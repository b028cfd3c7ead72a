"""Pods that use ResourceClaims to a frame, with each claim reference resolved to a claim name."""

from __future__ import annotations

from typing import Any

import pandas as pd

from drawb.inventory._frame import object_array, string_array
from drawb.inventory._quantity import whole_count
from drawb.inventory._read import list_items


def resolved_claims(pod: dict) -> tuple[list[str], list[str | None]]:
    """The pod's claim entry names and the ResourceClaim each one resolves to (None: not created yet).

    A ``resourceClaimName`` names the claim directly; a ``resourceClaimTemplateName`` resolves
    through ``status.resourceClaimStatuses``.
    """
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    generated = {
        s.get("name"): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or ()
        if isinstance(s, dict)
    }
    names, resolved = [], []
    for entry in spec.get("resourceClaims") or ():
        if not isinstance(entry, dict):
            continue
        names.append(entry.get("name"))
        if entry.get("resourceClaimName"):
            resolved.append(entry["resourceClaimName"])
        else:
            resolved.append(generated.get(entry.get("name")))
    return names, resolved


def _extended_claim(status: Any) -> str | None:
    ext = status.get("extendedResourceClaimStatus") if isinstance(status, dict) else None
    return ext.get("resourceClaimName") if isinstance(ext, dict) else None


def pod_frame(pods: list[dict]) -> pd.DataFrame:
    """One row per pod that uses claims: namespace, pod, node, phase, claims and resolved claim names."""
    rows = []
    for pod in list_items(pods):
        if not isinstance(pod, dict):
            continue
        names, resolved = resolved_claims(pod)
        extended = _extended_claim(pod.get("status"))
        if names or extended:
            rows.append((pod, names, resolved, extended))
    meta = [p.get("metadata") or {} for p, *_ in rows]
    return pd.DataFrame(
        {
            "namespace": string_array([m.get("namespace") for m in meta]),
            "pod": string_array([m.get("name") for m in meta]),
            "node": string_array([(p.get("spec") or {}).get("nodeName") for p, *_ in rows]),
            "phase": string_array([(p.get("status") or {}).get("phase") for p, *_ in rows]),
            "claims": object_array([n for _, n, _, _ in rows]),
            "resource_claims": object_array([r for _, _, r, _ in rows]),
            "extended_resource_claim": string_array([e for *_, e in rows]),
        }
    )


DEVICE_PLUGIN_RESOURCE = "nvidia.com/gpu"


def device_plugin_gpus(pod: dict) -> int | None:
    """The pod's ``nvidia.com/gpu`` (device plugin) request: limits, else requests, summed over its
    containers (init containers: the largest, as the scheduler counts them); None when it asks for none."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}

    def amount(container: Any) -> int | None:
        resources = (container or {}).get("resources") or {} if isinstance(container, dict) else {}
        value = (resources.get("limits") or {}).get(DEVICE_PLUGIN_RESOURCE)
        return whole_count(value if value is not None else (resources.get("requests") or {}).get(DEVICE_PLUGIN_RESOURCE))

    main = [a for a in map(amount, spec.get("containers") or ()) if a is not None]
    init = [a for a in map(amount, spec.get("initContainers") or ()) if a is not None]
    if not main and not init:
        return None
    return max(sum(main), max(init, default=0))


def every_pod_frame(pods: list[dict]) -> pd.DataFrame:
    """One row per pod, claims or not: namespace, pod, node, phase, claims, resolved claims and ``nvidia_gpu``
    (its device-plugin ``nvidia.com/gpu`` request, <NA> when none)."""
    from drawb.inventory._frame import int_array

    items = [p for p in list_items(pods) if isinstance(p, dict)]
    meta = [p.get("metadata") or {} for p in items]
    claims = [resolved_claims(p) for p in items]
    return pd.DataFrame(
        {
            "namespace": string_array([m.get("namespace") for m in meta]),
            "pod": string_array([m.get("name") for m in meta]),
            "node": string_array([(p.get("spec") or {}).get("nodeName") for p in items]),
            "phase": string_array([(p.get("status") or {}).get("phase") for p in items]),
            "claims": object_array([names for names, _ in claims]),
            "resource_claims": object_array([resolved for _, resolved in claims]),
            "nvidia_gpu": int_array([device_plugin_gpus(p) for p in items]),
        }
    )
