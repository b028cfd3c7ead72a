"""DRA objects to pandas DataFrames: devices, slices, DeviceClasses, claims and the pods using them."""

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
