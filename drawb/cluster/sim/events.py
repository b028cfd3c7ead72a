"""core/v1 Events as the simulated cluster's components record them.

Each event names its object, reason, message and the component that reported it, in the shape
the API server lists them: the scheduler's as written through events.k8s.io/v1 (``eventTime``),
a node's kubelet's through core/v1 (``firstTimestamp``, ``lastTimestamp``, ``source.host``).
Events the simulation makes carry ``reportingInstance`` ending in ``-simulated`` so that they
can never be taken for a real component's. As client-go's recorder names an event
``<object>.<hex of the time in nanoseconds>``, an object's events sort by name in the order they
happened (here the count of events recorded so far is added, keeping names distinct within a second).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from drawb.cluster.sim.tree import copy_tree

SIMULATED_SUFFIX = "-simulated"


class EventRecorder:
    """Writes Events into the simulated store through ``store(obj)``; names are deterministic."""

    def __init__(self, store: Callable[[dict], dict], timestamp: Callable[[], str]):
        self._store = store
        self._timestamp = timestamp
        self._count = 0
        self._counted: dict[tuple[str, str, str], dict] = {}  # (object uid, reason, message) -> its counted event

    def record(self, obj: dict, *, type_: str, reason: str, message: str, component: str,
               action: str | None = None, host: str | None = None, field_path: str | None = None,
               core_v1: bool = False) -> dict:
        """Record one event about ``obj`` (a Pod, a ResourceClaim, a Job) and return it; ``host``: a node's
        component's (the kubelet's) event, about the part of ``obj`` at ``field_path``; ``core_v1``: written
        through core/v1 as kube-controller-manager's controllers write theirs (``source.component`` alone)."""
        meta = obj["metadata"]
        self._count += 1
        now = self._timestamp()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{_unix_nanos(now) + self._count:x}",
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
        if host or core_v1:
            event.update(eventTime=None, firstTimestamp=now, lastTimestamp=now, count=1,
                         source={"component": component, **({"host": host} if host else {})},
                         reportingInstance=(host or component) + SIMULATED_SUFFIX)
        if field_path:
            event["involvedObject"]["fieldPath"] = field_path
        return self._store(event)

    def record_counted(self, obj: dict, *, type_: str, reason: str, message: str, component: str) -> dict:
        """A controller's core/v1 event, counted as client-go's correlator counts them: the same event again
        (same object, reason and message) raises the stored one's ``count`` and ``lastTimestamp``."""
        key = (obj["metadata"].get("uid", ""), reason, message)
        last = self._counted.get(key)
        if last is None:
            stored = self.record(obj, type_=type_, reason=reason, message=message, component=component, core_v1=True)
        else:
            event = copy_tree(last)
            event["count"] = event.get("count", 1) + 1
            event["lastTimestamp"] = self._timestamp()
            stored = self._store(event)
        self._counted[key] = stored
        return stored

    def repeat(self, event: dict) -> dict:
        """The same event seen again: its ``series`` counts it (in a new stored object, returned)."""
        event = copy_tree(event)
        series = event.setdefault("series", {"count": 1})
        series["count"] += 1
        series["lastObservedTime"] = self._timestamp()[:-1] + ".000000Z"
        return self._store(event)


def _unix_nanos(timestamp: str) -> int:
    """Nanoseconds since 1970 at an RFC 3339 timestamp of whole seconds (``2026-01-01T00:00:05Z``)."""
    return int(datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%S%z").timestamp()) * 1_000_000_000


def events_for(events: list[dict], obj: dict) -> list[dict]:
    """The events in ``events`` about ``obj`` (matched by kind, namespace and name)."""
    meta = obj["metadata"]
    return [e for e in events if e["involvedObject"].get("kind") == obj.get("kind")
            and e["involvedObject"].get("name") == meta["name"]
            and e["involvedObject"].get("namespace") == meta.get("namespace")]
