"""What the simulated control plane offers its workload controllers (the Lifecycle implements it)."""

from __future__ import annotations

from typing import Protocol

from drawb.cluster.sim.events import EventRecorder

NsKey = tuple[str, str]


class Host(Protocol):
    """The store, the clock and the recorder, as a controller in kube-controller-manager sees them."""

    events: EventRecorder
    pods: dict[NsKey, dict]
    nodes: dict[str, dict]
    now: float

    def create(self, obj: dict) -> dict:
        """Store a new object (the other loops hear of it: a pod is scheduled, a Job synced); ClusterError when
        the API server refuses it (a pod whose ServiceAccount does not exist)."""

    def update(self, obj: dict) -> dict:
        """Store a changed copy of an object (a status written back)."""

    def remove(self, kind: str, namespace: str, name: str) -> None:
        """Delete an object, as a controller or the garbage collector does."""

    def after(self, seconds: float, action: str, key: NsKey, uid: str) -> None:
        """Call the controller of ``action`` back for ``key`` once ``seconds`` of simulated time have passed."""

    def timestamp(self, at: float | None = None) -> str:
        """The RFC 3339 time at simulated second ``at`` (now by default)."""
