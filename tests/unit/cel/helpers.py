"""Building devices, slices and inventory frames for the CEL tests."""

from __future__ import annotations

from typing import Any

from drawb.inventory import device_frame


def device(name: str = "dev", attributes: dict | None = None, capacity: dict | None = None,
           allow_multiple_allocations: bool | None = None) -> dict:
    """A ResourceSlice `spec.devices` entry; capacity values given as quantity strings."""
    out: dict[str, Any] = {"name": name}
    if attributes:
        out["attributes"] = attributes
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if allow_multiple_allocations is not None:
        out["allowMultipleAllocations"] = allow_multiple_allocations
    return out


def resource_slice(devices: list[dict], driver: str, node: str = "node-0") -> dict:
    """A one-slice pool holding `devices`."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver or 'none'}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def frame_of(slices: list[dict]):
    """The inventory frame of some slices (strict: a malformed device fails the test)."""
    return device_frame(slices, strict=True)
