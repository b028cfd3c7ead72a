"""DRA objects to pandas DataFrames: devices, slices, DeviceClasses, claims and the pods using them.

``device_frame(slices, claims=None, strict=False)`` has one row per device of the newest generation
of each pool. Columns, in order:

- ``node`` (``spec.nodeName``, ``<all nodes>`` or ``<selector: ...>``), ``driver``, ``pool``, ``slice``,
  ``device``: strings;
- one column per attribute under its fully qualified name (``gpu.nvidia.com/productName``; bare
  names take the driver as domain): string and version attributes as strings, ints as ``Int64``,
  bools as ``boolean``, list attributes as Python lists;
- per capacity ``capacity:<name>`` (the published quantity, ``"80Gi"``) and ``capacity:<name>:value``
  (the exact value in base units: ``Int64``, or ``float64`` when some value is fractional);
- ``allow_multiple_allocations``, ``taints``, ``consumes_counters``, ``request_policy``
  (``{capacity name: requestPolicy}``), ``pool_complete``;
- ``claim`` (``namespace/name``), ``request``, ``reserved_for`` (pod names): null where free.

``frame.attrs["drawb"]`` holds ``attributes`` (column -> string|int|bool|version|list), ``lists``
(list column -> ints|bools|strings|versions), ``capacities`` (qualified names) and ``problems``
(malformed input, each naming the object and field; ``strict=True`` raises `InventoryError`).
`DeviceInventory` keeps that frame current under slice events without rebuilding it. The column
names are made by `drawb.inventory.schema`, which every reader of the frame uses.
"""

from importlib import import_module
from typing import Any

_HOMES = {  # each public name's module, imported on first use: the schema alone (the CEL device) needs no pandas
    "DeviceInventory": "live",
    "InventoryError": "errors",
    "attribute_summary": "summary",
    "claim_frame": "claims",
    "class_frame": "classes",
    "device_frame": "devices",
    "pod_frame": "pods",
    "slice_frame": "slices",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'drawb.inventory' has no attribute {name!r}")
    return getattr(import_module(f"drawb.inventory.{home}"), name)


__all__ = [
    "DeviceInventory",
    "InventoryError",
    "attribute_summary",
    "claim_frame",
    "class_frame",
    "device_frame",
    "pod_frame",
    "slice_frame",
]
