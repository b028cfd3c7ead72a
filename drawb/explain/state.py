"""What ``why`` reads from a cluster, as plain objects, with the indexes the explanation needs.

``ClusterState`` holds the objects (pods, claims, templates, slices, classes, nodes, events) and the
Kubernetes version and feature gates the scheduler runs with. It does no I/O: the command reads the
objects through the Cluster protocol and hands them over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from drawb import versions
from drawb.alloc.claimindex import DeviceID, claim_index

Obj = Mapping[str, Any]


def meta(obj: Obj) -> Mapping[str, Any]:
    """An object's metadata (empty when absent)."""
    return obj.get("metadata") or {}


def name_of(obj: Obj) -> str:
    return meta(obj).get("name", "")


def namespace_of(obj: Obj) -> str:
    return meta(obj).get("namespace", "")


def allocation_of(claim: Obj) -> Mapping[str, Any] | None:
    """A claim's ``status.allocation`` (None while unallocated)."""
    return (claim.get("status") or {}).get("allocation") or None


def results_of(claim: Obj) -> list[Mapping[str, Any]]:
    return list(((allocation_of(claim) or {}).get("devices") or {}).get("results") or [])


@dataclass
class Holder:
    """A claim holding a device, and the pods it is reserved for."""

    claim: str  # namespace/name
    pods: list[str]  # namespace/name of the pods in reservedFor
    admin: bool = False

    def __str__(self) -> str:
        return f"claim {self.claim}" + (f" (pod {', '.join(self.pods)})" if self.pods else " (no pod)")


class Holders(Mapping):
    """Device -> the Holders of it, indexed on first use; a device's Holders are made when asked for."""

    def __init__(self, claims: list[dict]) -> None:
        self._claims = claims
        self._index: dict[DeviceID, list[tuple[dict, bool]]] | None = None
        self._made: dict[DeviceID, list[Holder]] = {}

    def _by_device(self) -> dict[DeviceID, list[tuple[dict, bool]]]:
        if self._index is None:
            self._index = claim_index(self._claims).by_device
        return self._index

    def __getitem__(self, device_id: DeviceID) -> list[Holder]:
        made = self._made.get(device_id)
        if made is None:
            made = self._made[device_id] = [_holder(claim, admin) for claim, admin in self._by_device()[device_id]]
        return made

    def __iter__(self):
        return iter(self._by_device())

    def __len__(self) -> int:
        return len(self._by_device())

    def __contains__(self, device_id: object) -> bool:
        return device_id in self._by_device()


def _holder(claim: Obj, admin: bool) -> Holder:
    reserved = (claim.get("status") or {}).get("reservedFor") or []
    pods = [f"{namespace_of(claim)}/{r.get('name', '')}" for r in reserved if r.get("resource") == "pods"]
    return Holder(f"{namespace_of(claim)}/{name_of(claim)}", pods, admin)


@dataclass
class ClusterState:
    """The objects one explanation reads; ``kubernetes_version`` and ``feature_gates`` are the scheduler's."""

    pods: list[dict]
    claims: list[dict]  # every namespace: their allocations decide which devices are free
    slices: list[dict]
    classes: list[dict]
    nodes: list[dict]
    templates: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    kubernetes_version: str = versions.DEFAULT
    feature_gates: dict[str, bool] | None = None
    simulated: bool = False
    pods_namespace: str | None = None  # pods and templates are those of this namespace (None: of every namespace)

    def pod_read(self, namespace: str) -> bool:
        """Whether the pods of ``namespace`` were read."""
        return self.pods_namespace is None or self.pods_namespace == namespace

    def pod(self, namespace: str, name: str) -> dict | None:
        return self._pods.get((namespace, name))

    def claim(self, namespace: str, name: str) -> dict | None:
        return self._claims.get((namespace, name))

    def template(self, namespace: str, name: str) -> dict | None:
        return next((t for t in self.templates if namespace_of(t) == namespace and name_of(t) == name), None)

    def device_class(self, name: str) -> dict | None:
        return self._classes.get(name)

    @cached_property
    def _pods(self) -> dict[tuple[str, str], dict]:
        return {(namespace_of(p), name_of(p)): p for p in self.pods}

    @cached_property
    def _claims(self) -> dict[tuple[str, str], dict]:
        return {(namespace_of(c), name_of(c)): c for c in self.claims}

    @cached_property
    def _classes(self) -> dict[str, dict]:
        return {name_of(c): c for c in self.classes}

    @cached_property
    def allocated_claims(self) -> list[dict]:
        return [c for c in self.claims if allocation_of(c)]

    @cached_property
    def holders(self) -> Holders:
        """Who holds each allocated device (admin-access results too, marked)."""
        return Holders(self.allocated_claims)

    @cached_property
    def node_by_name(self) -> dict[str, dict]:
        return {name_of(n): n for n in self.nodes}

    @cached_property
    def slices_by_node(self) -> dict[str | None, list[dict]]:
        """Node-local slices by node name; every other slice (allNodes, nodeSelector, per device) under None."""
        out: dict[str | None, list[dict]] = {}
        for rs in self.slices:
            out.setdefault((rs.get("spec") or {}).get("nodeName") or None, []).append(rs)
        return out

    def slices_for(self, node: str) -> list[dict]:
        """The slices that may be visible on ``node``."""
        return [*self.slices_by_node.get(node, []), *self.slices_by_node.get(None, [])]

    def pod_events(self, pod: Obj) -> list[dict]:
        """Events about ``pod`` (by uid where the event names one, else by name), oldest first."""
        uid, name, namespace = meta(pod).get("uid"), name_of(pod), namespace_of(pod)
        found = []
        for event in self.events:
            involved = event.get("involvedObject") or event.get("regarding") or {}
            if involved.get("kind") != "Pod" or involved.get("name") != name:
                continue
            if (involved.get("namespace") or namespace_of(event)) != namespace:
                continue
            if uid and involved.get("uid") and involved["uid"] != uid:
                continue
            found.append(event)
        return found
