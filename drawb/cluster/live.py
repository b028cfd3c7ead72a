"""Device frames that stay current: a watched cluster feeds DeviceInventory event by event."""

from __future__ import annotations

import threading

import pandas as pd

from drawb.cluster.protocol import WatchableCluster
from drawb.inventory.claims import allocations
from drawb.inventory.join import join_allocations
from drawb.inventory.live import DeviceInventory


class LiveDevices:
    """The device frame of a watched cluster: built once, then spliced per slice event."""

    def __init__(self, cluster: WatchableCluster):
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
        claims = self.cluster.list("ResourceClaim")  # first: on the simulated cluster, reading lets time pass
        with self._lock:
            frame = self.inventory.frame
        problems: list[str] = []
        return join_allocations(frame, allocations(claims, problems), problems)
