"""core/v1 Events as the simulated cluster's components record them.

Each event names its object, reason, message and the component that reported it, in the shape
the API server lists them. Events the simulation makes carry ``reportingInstance`` ending in
``-simulated`` so that they can never be taken for a real component's.
"""

from __future__ import annotations

from collections.abc import Callable

from drawb.cluster.sim.publish import stable_hex
from drawb.cluster.sim.tree import copy_tree

SIMULATED_SUFFIX = "-simulated"


class EventRecorder:
    """Writes Events into the simulated store through ``store(obj)``; names are deterministic."""

    def __init__(self, store: Callable[[dict], dict], timestamp: Callable[[], str]):
        self._store = store
        self._timestamp = timestamp
        self._count = 0

    def record(self, obj: dict, *, type_: str, reason: str, message: str, component: str,
               action: str | None = None) -> dict:
        """Record one event about ``obj`` (a Pod, a ResourceClaim) and return it."""
        meta = obj["metadata"]
        self._count += 1
        now = self._timestamp()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{stable_hex(meta.get('uid'), self._count, length=16)}",
                "namespace": meta.get("namespace") or "default",
            },
            "involvedObject": {
                "apiVersion": obj.get("apiVersion", "v1"),
                "kind": obj.get("kind", ""),
                "name": meta["name"],
                "namespace": meta.get("namespace") or "default",
                "uid": meta.get("uid", ""),
            },
            "type": type_,
            "reason": reason,
            "message": message,
            "eventTime": now[:-1] + ".000000Z",  # written through events.k8s.io/v1, as the scheduler does
            "firstTimestamp": None,
            "lastTimestamp": None,
            "source": {},
            "reportingComponent": component,
            "reportingInstance": component + SIMULATED_SUFFIX,
        }
        if action:
            event["action"] = action
        return self._store(event)

    def repeat(self, event: dict) -> dict:
        """The same event seen again: its ``series`` counts it (in a new stored object, returned)."""
        event = copy_tree(event)
        series = event.setdefault("series", {"count": 1})
        series["count"] += 1
        series["lastObservedTime"] = self._timestamp()[:-1] + ".000000Z"
        return self._store(event)


def events_for(events: list[dict], obj: dict) -> list[dict]:
    """The events in ``events`` about ``obj`` (matched by kind, namespace and name)."""
    meta = obj["metadata"]
    return [e for e in events if e["involvedObject"].get("kind") == obj.get("kind")
            and e["involvedObject"].get("name") == meta["name"]
            and e["involvedObject"].get("namespace") == meta.get("namespace")]
