"""The objects the workload controllers read, by kind and by the uid of their controlling owner."""

from __future__ import annotations

from drawb.cluster.sim.controllers.owners import controller_uid

INDEXED = frozenset({"Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet"})
NsKey = tuple[str, str]


class ObjectIndex:
    """Stored objects of the controllers' kinds, updated on every change (the store's objects, read-only)."""

    def __init__(self) -> None:
        self.by_kind: dict[str, dict[NsKey, dict]] = {kind: {} for kind in INDEXED}
        self._owned: dict[str, dict[tuple[str, NsKey], dict]] = {}  # owner uid -> (kind, key) -> object

    def changed(self, kind: str, obj: dict, deleted: bool) -> None:
        """Index (or forget) one stored object."""
        if kind not in INDEXED:
            return
        meta = obj["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        old = self.by_kind[kind].pop(key, None)
        if old is not None:
            self._owned.get(controller_uid(old) or "", {}).pop((kind, key), None)
        if not deleted:
            self.by_kind[kind][key] = obj
            owner = controller_uid(obj)
            if owner:
                self._owned.setdefault(owner, {})[(kind, key)] = obj

    def get(self, kind: str, key: NsKey) -> dict | None:
        """One indexed object, or None."""
        return self.by_kind[kind].get(key)

    def owned(self, owner_uid: str, kind: str | None = None) -> list[dict]:
        """The objects (of ``kind``) whose controller is the object with ``owner_uid``, in name order."""
        found = self._owned.get(owner_uid) or {}
        return [found[k] for k in sorted(found) if kind is None or k[0] == kind]

    def owners_of(self, kind: str, obj: dict) -> list[NsKey]:
        """The key of ``obj``'s controller if it is of ``kind`` and indexed."""
        for ref in obj["metadata"].get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") == kind:
                key = (obj["metadata"].get("namespace") or "", ref.get("name", ""))
                owner = self.by_kind[kind].get(key)
                if owner is not None and owner["metadata"].get("uid") == ref.get("uid"):
                    return [key]
        return []
