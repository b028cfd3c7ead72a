"""Nodes beside their devices: DRA devices published for each node, and its extended-resource allocatable.

A mixed cluster (some GPUs from the NVIDIA device plugin as ``nvidia.com/gpu``, some from the DRA driver)
shows both on one row per node.
"""

from __future__ import annotations

import pandas as pd

from drawb.inventory._frame import int_array, object_array, string_array
from drawb.inventory._quantity import whole_count
from drawb.inventory._read import list_items
from drawb.inventory.pods import DEVICE_PLUGIN_RESOURCE

_CORE_RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage")


def _allocatable_gpus(node: dict) -> int | None:
    return whole_count(((node.get("status") or {}).get("allocatable") or {}).get(DEVICE_PLUGIN_RESOURCE))


def node_frame(nodes: list[dict], devices: pd.DataFrame) -> pd.DataFrame:
    """One row per node (and per node name that only devices name): ``dra_devices`` (all drivers),
    ``dra_gpus`` (``gpu.nvidia.com`` devices, MIG included), ``dra_drivers``, ``nvidia_gpu_allocatable``
    (<NA> without a device plugin) and the node's other extended resources."""
    items = [n for n in list_items(nodes) if isinstance(n, dict)]
    names = [(n.get("metadata") or {}).get("name") for n in items]
    per_node = devices.groupby("node", dropna=True) if len(devices) else None
    extra = sorted(set(devices["node"].dropna().unique()) - set(names)) if len(devices) else []
    rows = names + extra
    counts = per_node.size() if per_node is not None else pd.Series(dtype="int64")
    gpus = (devices[devices["driver"] == "gpu.nvidia.com"].groupby("node").size() if len(devices)
            else pd.Series(dtype="int64"))
    drivers = per_node["driver"].agg(lambda d: sorted(set(d))) if per_node is not None else pd.Series(dtype=object)
    by_name = dict(zip(names, items))
    extended = []
    for name in rows:
        allocatable = ((by_name.get(name) or {}).get("status") or {}).get("allocatable") or {}
        extended.append({k: v for k, v in allocatable.items()
                         if k not in _CORE_RESOURCES and k != DEVICE_PLUGIN_RESOURCE and not k.startswith("hugepages-")})
    return pd.DataFrame(
        {
            "node": string_array(rows),
            "dra_devices": int_array([int(counts.get(n, 0)) for n in rows]),
            "dra_gpus": int_array([int(gpus.get(n, 0)) for n in rows]),
            "dra_drivers": object_array([drivers.get(n, []) for n in rows]),
            "nvidia_gpu_allocatable": int_array([_allocatable_gpus(by_name[n]) if n in by_name else None for n in rows]),
            "other_extended_resources": object_array(extended),
        }
    )
