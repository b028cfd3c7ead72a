"""What the allocator reads from a ResourceSlice, extracted once per slice object.

The extraction is remembered per slice object (``drawb.memo``), stamped with its ``spec`` and
``spec.devices`` objects, so a slice whose spec or device list is replaced is read again. Fields of a device are read where they are
used, except what CEL sees (see drawb.alloc.selectors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.memo import Table


class Candidate:
    """One device of a slice: its id, JSON, slice and position in the slice."""

    __slots__ = ("id", "device", "slice", "index", "pool_key")

    def __init__(self, device_id: tuple[str, str, str], device: Mapping[str, Any], slice_: Mapping[str, Any], index: int):
        self.id, self.device, self.slice, self.index = device_id, device, slice_, index
        self.pool_key = device_id[:2]


class SliceInfo:
    """The fields of one slice the pool gathering and the search use."""

    __slots__ = ("name", "driver", "pool", "generation", "count", "node_name", "all_nodes", "node_selector",
                 "per_device", "per_device_set", "shared_counters", "binding", "duplicate", "candidates")  # fmt: skip

    def __init__(self, slice_: Mapping[str, Any]) -> None:
        spec = slice_.get("spec") or {}
        pool = spec.get("pool") or {}
        self.name = (slice_.get("metadata") or {}).get("name", "")
        self.driver = spec.get("driver", "")
        self.pool = pool.get("name", "")
        self.generation = int(pool.get("generation") or 0)
        self.count = int(pool.get("resourceSliceCount") or 0)
        self.node_name = spec.get("nodeName") or ""
        self.all_nodes = bool(spec.get("allNodes"))
        self.node_selector = spec.get("nodeSelector")
        self.per_device = bool(spec.get("perDeviceNodeSelection"))
        self.per_device_set = spec.get("perDeviceNodeSelection") is not None
        self.shared_counters = bool(spec.get("sharedCounters"))
        devices = spec.get("devices") or []
        self.binding = any(d.get("bindingConditions") is not None for d in devices)
        names = [d.get("name", "") for d in devices]
        seen: set[str] = set()
        self.duplicate = next((n for n in names if n in seen or seen.add(n)), None)
        self.candidates = [Candidate((self.driver, self.pool, n), d, slice_, i) for i, (n, d) in enumerate(zip(names, devices))]


_infos: Table[SliceInfo] = Table("slice fields", 200_000)


def info(slice_: Mapping[str, Any]) -> SliceInfo:
    """The (remembered) SliceInfo of a slice object."""
    spec = slice_.get("spec")
    stamp = (spec, (spec or {}).get("devices"))
    return _infos.get(slice_, None, stamp) or _infos.put(slice_, SliceInfo(slice_), None, stamp)
