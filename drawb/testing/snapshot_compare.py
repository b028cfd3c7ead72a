"""What a replayed snapshot must reproduce of its original: inventory frames, selector results and
allocation previews, each in a canonical order (and, for a redacted snapshot, renamed first)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from drawb.alloc import AllocationError, allocate
from drawb.cel import preview
from drawb.cluster.protocol import Cluster
from drawb.inventory import claim_frame, class_frame, device_frame, pod_frame, slice_frame

Rename = Callable[[object], object]
_KEYS = ("node", "driver", "pool", "slice", "device", "namespace", "name", "pod")


def _same(value: object) -> object:
    return value


def canonical(frame: pd.DataFrame, rename: Rename = _same) -> pd.DataFrame:
    """``frame`` with every text cell renamed, sorted by its key columns, index reset."""
    frame = frame.copy()
    frame.attrs = {}
    for column in frame.columns:
        if frame[column].dtype == object or isinstance(frame[column].dtype, pd.StringDtype):
            frame[column] = frame[column].map(lambda v: v if v is None or v is pd.NA else rename(v)).astype(frame[column].dtype)
    keys = [c for c in _KEYS if c in frame.columns]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True) if keys else frame


def inventory(cluster: Cluster, rename: Rename = _same) -> dict[str, pd.DataFrame]:
    """The devices (with allocations), slices, classes, claims and pods frames of ``cluster``."""
    slices, claims = cluster.list("ResourceSlice"), cluster.list("ResourceClaim")
    return {
        "devices": canonical(device_frame(slices, claims), rename),
        "slices": canonical(slice_frame(slices), rename),
        "classes": canonical(class_frame(cluster.list("DeviceClass")), rename),
        "claims": canonical(claim_frame(claims), rename),
        "pods": canonical(pod_frame(cluster.list("Pod")), rename),
    }


def selections(cluster: Cluster, expressions: dict[str, tuple[str | None, list[str]]], kubernetes_version: str,
               rename: Rename = _same) -> dict[str, pd.DataFrame]:
    """Per name, the devices ``(class, selectors)`` selects on ``cluster``'s frame: (node, driver, pool, device)."""
    frame = device_frame(cluster.list("ResourceSlice"), cluster.list("ResourceClaim"))
    classes = cluster.list("DeviceClass")
    found = {}
    for name, (class_name, selectors) in expressions.items():
        result = preview(frame, selectors, device_classes=classes, class_name=class_name,
                         kubernetes_version=kubernetes_version)
        assert result.error_count == 0, result.errors
        found[name] = canonical(result.matches[["node", "driver", "pool", "device"]], rename)
    return found


def previews(cluster: Cluster, claims: list[dict], kubernetes_version: str, feature_gates: dict[str, bool],
             rename: Rename = _same) -> dict[tuple[str, str], object]:
    """``drawb.alloc.allocate`` of each claim on each node of ``cluster``: results, None, or the error."""
    slices, classes = cluster.list("ResourceSlice"), cluster.list("DeviceClass")
    allocated = [c for c in cluster.list("ResourceClaim") if (c.get("status") or {}).get("allocation")]
    found: dict[tuple[str, str], object] = {}
    for node in cluster.list("Node"):
        name = node["metadata"]["name"]
        on_node = [s for s in slices if s["spec"].get("nodeName") in (name, None)]
        for claim in claims:
            try:
                result = allocate([claim], node=node, slices=on_node, classes=classes, allocated=allocated,
                                  kubernetes_version=kubernetes_version, feature_gates=feature_gates)
            except AllocationError as exc:
                result = f"{type(exc).__name__}: {exc}"
            found[(claim["metadata"]["name"], rename(name))] = rename(result)
    return found
