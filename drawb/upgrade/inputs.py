"""What the upgrade check reads: the connected cluster's DRA objects, roles, gates and served versions, and the
user's manifests, each object with where it came from; and the walks over claims the checks share."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb.cluster.protocol import Cluster, ClusterError, kind_of
from drawb.plan.target import dra_gates
from drawb.render.sources import Source
from drawb import versions
from drawb.versions import Rules

CLUSTER = "cluster"
KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ClusterRole", "Role")
# What drawb's read-only role does not grant cluster-wide: checks of what RBAC keeps unread are left out
_OPTIONAL = ("ResourceClaimTemplate", "ClusterRole", "Role")


@dataclass(frozen=True)
class Item:
    """One object and where it came from: ``cluster`` or a manifest file."""

    where: str
    obj: Mapping[str, Any]

    @property
    def kind(self) -> str:
        """The object's kind."""
        return str(self.obj.get("kind"))

    @property
    def label(self) -> str:
        """``ResourceClaim gpu-test/claim`` or ``DeviceClass gpu.nvidia.com``."""
        meta = self.obj.get("metadata") or {}
        namespace = f"{meta['namespace']}/" if meta.get("namespace") else ""
        return f"{self.kind} {namespace}{meta.get('name', '?')}"

    @property
    def spec(self) -> Mapping[str, Any]:
        """The object's spec (a template's: the claim spec it stamps)."""
        spec = self.obj.get("spec") or {}
        return (spec.get("spec") or {}) if self.kind == "ResourceClaimTemplate" else spec


@dataclass
class Inputs:
    """Everything one upgrade check reads."""

    current: Rules
    target: Rules
    server_version: str
    items: list[Item] = field(default_factory=list)
    gates: dict[str, bool] = field(default_factory=dict)  # the cluster's DRA gates as it reports them
    served: list[str] = field(default_factory=list)  # the resource.k8s.io versions the cluster serves

    def first_with(self, behaviour: str) -> str:
        """The first minor after the current one up to the target that has ``behaviour`` (the target if none)."""
        later = [versions.rules(m) for m in versions.known()
                 if self.current.number < versions.rules(m).number <= self.target.number]
        return next((r.minor for r in later if r.has(behaviour)), self.target.minor)

    def first_with_gate(self, gate: str) -> str:
        """The first minor after the current one up to the target where ``gate`` is on by default."""
        later = [versions.rules(m) for m in versions.known()
                 if self.current.number < versions.rules(m).number <= self.target.number]
        return next((r.minor for r in later if r.gates.get(gate) and r.gates[gate].default), self.target.minor)

    def crosses(self, behaviour: str) -> bool:
        """Whether the upgrade brings ``behaviour``: the target has it and the current minor has not."""
        return self.target.has(behaviour) and not self.current.has(behaviour)

    def of(self, *kinds: str) -> list[Item]:
        """The items of these kinds, the cluster's first."""
        return [item for item in self.items if item.kind in kinds]


def read_cluster(cluster: Cluster) -> tuple[list[Item], dict[str, str]]:
    """The cluster's objects of ``KINDS`` (each with its kind and apiVersion), and the kinds it could not read."""
    items, unread = [], {}
    for kind in KINDS:
        try:
            listed = cluster.list(kind)
        except ClusterError as exc:
            if kind not in _OPTIONAL:
                raise
            unread[kind] = str(exc).split(";")[0]
            continue
        api_version = kind_of(kind).api_version
        items += [Item(CLUSTER, {"apiVersion": api_version, "kind": kind, **obj}) for obj in listed]
    return items, unread


def cluster_gates(cluster: Cluster) -> dict[str, bool]:
    """The cluster's DRA gates as its API server reports them (empty when it cannot say)."""
    return dra_gates(cluster.feature_gates_metric()) or {}


def manifest_items(sources: list[Source]) -> list[Item]:
    """The documents of the manifests, each with its file."""
    return [Item(source.name, doc) for source in sources for doc in source.documents]


def allocated(item: Item) -> bool:
    """Whether a cluster claim holds its devices already (the upgrade does not change them)."""
    return item.kind == "ResourceClaim" and bool((item.obj.get("status") or {}).get("allocation"))


def requests(item: Item) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, request) of every request and sub-request of a claim or template, v1 or beta form (a beta request
    holds the fields v1 puts under ``exactly``)."""
    base = "spec.spec.devices" if item.kind == "ResourceClaimTemplate" else "spec.devices"
    for i, request in enumerate((item.spec.get("devices") or {}).get("requests") or ()):
        if not isinstance(request, Mapping):
            continue
        if isinstance(request.get("exactly"), Mapping):
            yield f"{base}.requests[{i}].exactly", request["exactly"]
        for j, sub in enumerate(request.get("firstAvailable") or ()):
            if isinstance(sub, Mapping):
                yield f"{base}.requests[{i}].firstAvailable[{j}]", sub
        if "deviceClassName" in request:
            yield f"{base}.requests[{i}]", request


def constraints(item: Item) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, constraint) of every constraint of a claim or template."""
    base = "spec.spec.devices" if item.kind == "ResourceClaimTemplate" else "spec.devices"
    for i, constraint in enumerate((item.spec.get("devices") or {}).get("constraints") or ()):
        if isinstance(constraint, Mapping):
            yield f"{base}.constraints[{i}]", constraint


def selectors(selectors_: object, path: str) -> Iterator[tuple[str, str]]:
    """(path, expression) of every CEL selector in a ``selectors`` list."""
    for i, selector in enumerate(selectors_ or ()):
        expression = ((selector or {}).get("cel") or {}).get("expression") if isinstance(selector, Mapping) else None
        if isinstance(expression, str):
            yield f"{path}.selectors[{i}].cel.expression", expression
