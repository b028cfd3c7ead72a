"""DRA objects to pandas DataFrames: devices, slices, DeviceClasses, claims and the pods using them."""

from drawb.inventory.claims import claim_frame
from drawb.inventory.devices import device_frame
from drawb.inventory.errors import InventoryError

__all__ = ["InventoryError", "claim_frame", "device_frame"]
