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

from drawb.inventory.claims import claim_frame
from drawb.inventory.classes import class_frame
from drawb.inventory.devices import device_frame
from drawb.inventory.errors import InventoryError
from drawb.inventory.live import DeviceInventory
from drawb.inventory.pods import pod_frame
from drawb.inventory.slices import slice_frame
from drawb.inventory.summary import attribute_summary

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
