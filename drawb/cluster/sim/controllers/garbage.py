"""The garbage collector: when an owner is deleted, what it controls is deleted too (background
propagation: the owner goes at once, its dependents after it, theirs after them)."""

from __future__ import annotations

from collections.abc import Iterable

from drawb.cluster.sim.controllers.index import ObjectIndex
from drawb.cluster.sim.controllers.api import ControllerApi


class GarbageCollector:
    """Deletes the objects whose controlling owner is gone."""

    watches = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"})  # the Job controllers collect theirs

    def wake(self, kind: str, obj: dict, deleted: bool, index: ObjectIndex) -> Iterable[str]:
        """The uid of a deleted owner."""
        return [obj["metadata"].get("uid", "")] if deleted else []

    def sync(self, api: ControllerApi, item: str) -> None:
        """Delete every object ``item`` controlled."""
        for dependent in api.index.owned(item):
            meta = dependent["metadata"]
            api.remove(dependent["kind"], meta.get("namespace"), meta["name"])
