"""How the apps/v1 controllers talk to the simulated control plane (``apps.AppsControllers`` stands for it).

It calls ``wake`` for every stored or deleted object of a kind in a controller's
``watches``; each item it returns is queued (once) and later handed to ``sync`` with the control plane
as ``ControllerApi``. A controller reads only through the API, writes new objects (never a stored one)
through ``store`` and deletes through ``remove``; a sync that finds nothing to do writes nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Protocol

from drawb.cluster.sim.controllers.index import ObjectIndex
from drawb.cluster.sim.events import EventRecorder


class ControllerApi(Protocol):
    """What a controller sees of the simulated control plane."""

    index: ObjectIndex
    events: EventRecorder
    nodes: dict[str, dict]

    def store(self, obj: dict) -> dict:
        """Create or replace an object (a new dict nobody else holds); the stored object. ClusterError when the
        API server refuses it (a pod whose ServiceAccount does not exist)."""

    def remove(self, kind: str, namespace: str | None, name: str) -> None:
        """Delete an object."""

    def timestamp(self) -> str:
        """The simulated time now, RFC 3339."""


class Controller(Protocol):
    """One controller: the kinds that wake it, the work items a change makes, the work itself."""

    watches: frozenset[str]

    def wake(self, kind: str, obj: dict, deleted: bool, index: ObjectIndex) -> Iterable[Hashable]:
        """The work items a change of ``obj`` makes."""

    def sync(self, api: ControllerApi, item: Hashable) -> None:
        """Do one work item."""
