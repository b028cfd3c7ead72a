"""Device frames that stay current: a watched cluster feeds DeviceInventory event by event."""

from __future__ import annotations

import threading

import pandas as pd

from drawb.cluster.protocol import Cluster
from drawb.inventory import device_frame
from drawb.inventory.join import join_allocations
from drawb.inventory.live import DeviceInventory


class LiveDevices:
    """The device frame of a cluster that can ``watch``: built once, then spliced per slice event."""

    def __init__(self, cluster: Cluster):
        self._lock = threading.Lock()
        with self._lock:
            snapshot = cluster.watch("ResourceSlice").subscribe(self._on_event)
            self.inventory = DeviceInventory(snapshot)
        cluster.watch("ResourceClaim")
        self.cluster = cluster

    def _on_event(self, event_type: str, obj: dict) -> None:
        with self._lock:
            self.inventory.apply(event_type, obj)

    def frame(self) -> pd.DataFrame:
        """Current devices with current allocations joined."""
        with self._lock:
            frame = self.inventory.frame
        return join_allocations(frame, self.cluster.list("ResourceClaim"))


def current_devices(cluster: Cluster, live: LiveDevices | None) -> pd.DataFrame:
    """The device frame: from the live inventory when there is one, else built from lists."""
    if live is not None:
        return live.frame()
    return device_frame(cluster.list("ResourceSlice"), cluster.list("ResourceClaim"))
