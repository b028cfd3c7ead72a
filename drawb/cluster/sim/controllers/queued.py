"""What the Job and CronJob controllers share: their own objects by key, and one queue of keys to sync."""

from __future__ import annotations

from drawb.cluster.sim.controllers.host import Host, NsKey
from drawb.cluster.sim.controllers.owners import controller_of


class QueuedController:
    """A controller that syncs the objects of its kind (``KIND``) by key and follows the objects of kind
    ``OWNED`` they control: each change and each due timer queues the key (once); ``run`` syncs the queued
    keys, oldest first, and those the syncs queue."""

    KIND = ""
    OWNED = ""

    def __init__(self, host: Host):
        self.host = host
        self.objects: dict[NsKey, dict] = {}  # the latest object of KIND at each key
        self._queue: dict[NsKey, None] = {}
        self._deleted: dict[NsKey, str] = {}  # key -> uid of the object deleted there since the key's last sync

    @property
    def queued(self) -> bool:
        """Whether an object waits to be synced."""
        return bool(self._queue)

    def changed(self, kind: str, key: NsKey, obj: dict, deleted: bool) -> None:
        """Follow the objects of ``KIND`` and those of ``OWNED`` they control."""
        if kind == self.KIND:
            self._follow(key, obj, deleted)
        elif kind == self.OWNED:
            owner = controller_of(obj, self.KIND)
            if owner is not None:
                self._owned_changed(key, obj, deleted, owner)

    def run(self) -> None:
        """Sync the queued objects."""
        while self._queue:
            key = next(iter(self._queue))
            del self._queue[key]
            self._sync(key)

    def fire(self, key: NsKey, uid: str) -> None:
        """A timer set for the object at ``key`` is due: sync it if it is still the object with ``uid``."""
        obj = self.objects.get(key)
        if obj is not None and obj["metadata"].get("uid") == uid:
            self._queue[key] = None

    def _follow(self, key: NsKey, obj: dict, deleted: bool) -> None:
        """Keep (or forget) an object of KIND that changed, and queue its key."""
        if deleted:
            self.objects.pop(key, None)
            self._deleted[key] = obj["metadata"].get("uid", "")
        else:
            self.objects[key] = obj
        self._queue[key] = None

    def _take(self, key: NsKey) -> tuple[dict | None, str | None]:
        """The object at ``key`` now, and the uid of the one deleted there since the last sync unless it is that
        same object (what it owned is then to be deleted)."""
        obj = self.objects.get(key)
        gone = self._deleted.pop(key, None)
        if gone is not None and obj is not None and obj["metadata"].get("uid") == gone:
            gone = None
        return obj, gone

    def _owned_changed(self, key: NsKey, obj: dict, deleted: bool, owner: dict) -> None:
        """An object of ``OWNED`` whose controller is ``owner`` (a reference to an object of ``KIND``) changed."""
        raise NotImplementedError

    def _sync(self, key: NsKey) -> None:
        raise NotImplementedError
