"""Device frames that stay current: a watched cluster's slice and claim events feed one JoinedInventory."""

from __future__ import annotations

import threading

import pandas as pd

from drawb.cluster.protocol import WatchableCluster
from drawb.cluster.refusal import RbacRefused
from drawb.inventory.allocated import JoinedInventory


class LiveDevices:
    """The device frame of a watched cluster, allocations joined, kept current event by event; where RBAC
    refuses the claims, the devices alone (``claims_refused`` says why)."""

    def __init__(self, cluster: WatchableCluster):
        # Re-entrant: the simulated cluster calls handlers in the thread that subscribes or reads.
        self._lock = threading.RLock()
        self._early: list[tuple[str, str, dict]] | None = []  # events that came before the snapshots
        with self._lock:
            slices = cluster.watch("ResourceSlice").subscribe(self._on_slice)
            self.claims_refused: RbacRefused | None = None
            try:
                claims = cluster.watch("ResourceClaim").subscribe(self._on_claim)
            except RbacRefused as exc:
                claims, self.claims_refused = [], exc
            self.inventory = JoinedInventory(slices, claims)
            early, self._early = self._early, None
            for kind, event_type, obj in early:  # in order, after the snapshots: the last event wins
                self.inventory.apply(kind, event_type, obj)
        self.cluster = cluster

    def _on_slice(self, event_type: str, obj: dict) -> None:
        self._handle("ResourceSlice", event_type, obj)

    def _on_claim(self, event_type: str, obj: dict) -> None:
        self._handle("ResourceClaim", event_type, obj)

    def _handle(self, kind: str, event_type: str, obj: dict) -> None:
        with self._lock:
            if self._early is not None:
                self._early.append((kind, event_type, obj))
            else:
                self.inventory.apply(kind, event_type, obj)

    def frame(self) -> pd.DataFrame:
        """Current devices with current allocations joined."""
        if self.claims_refused is None:
            self.cluster.list("ResourceClaim")  # on the simulated cluster, reading lets time pass (events arrive)
        with self._lock:
            return self.inventory.frame

    def current(self) -> pd.DataFrame:
        """The frame as the events so far left it, without reading the cluster (safe from any thread: the
        simulated cluster is only ever called from the thread that uses it)."""
        with self._lock:
            return self.inventory.frame
