"""The NodeResourcesFit filter for extended resources (``nvidia.com/gpu`` from a device plugin).

- What a pod asks for (``extended_requests``): each container's requests (its limits where a request is
  unset, as the API server defaults them), summed over the containers, raised to the largest init
  container (sidecars, ``restartPolicy: Always``, add to what runs after them), as ``resource.PodRequests``
  computes them. Only extended resources: a name with a domain that is not ``kubernetes.io``.
- What a node offers (``node_allocatable``) and what the pods bound to it already take (``in_use``: pods
  that have not ended, as the scheduler's cache holds them).
- ``ResourceFit.exclusion``: the filter's verdict for one node, ``Insufficient <name>`` in the scheduler's
  words. With DRAExtendedResource on, a resource a DeviceClass maps (``class_mapping``) that the node does not
  offer is left to DynamicResources, as the real filter leaves it: at 1.34 a node that does not list it in its
  allocatable, from 1.35 on also one that lists it as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from drawb import versions
from drawb.api.nodeaffinity import NodeExclusion
from drawb.api.quantity import Quantity, QuantityError

Obj = Mapping[str, Any]
INSUFFICIENT = "Insufficient {}"
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix
_ENDED = ("Succeeded", "Failed")


def is_extended(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-qualified name outside ``kubernetes.io``, not a quota name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _counted(name: str) -> bool:
    """The names this check counts: extended ones and a DeviceClass's implicit name (a scalar resource the
    scheduler checks against allocatable like them)."""
    return is_extended(name) or name.startswith(IMPLICIT_PREFIX)


def count_of(value: Any) -> int:
    """An extended resource quantity as the scheduler counts it (``Value()``, rounded up); 0 when unreadable."""
    try:
        return int(Quantity.parse(str(value)).scaled_value(0))
    except (QuantityError, ValueError):
        return 0


def _container_requests(container: Obj) -> dict[str, int]:
    resources = container.get("resources") or {}
    asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {name: count_of(value) for name, value in asked.items() if _counted(name)}


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def _raise_to(total: dict[str, int], other: Mapping[str, int]) -> None:
    for name, value in other.items():
        total[name] = max(total.get(name, 0), value)


def extended_requests(pod: Obj) -> dict[str, int]:
    """The extended resources ``pod`` asks for, by name (zero requests left out)."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        _add(total, _container_requests(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.get("initContainers") or ():
        asked = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            _add(total, asked)
            _add(sidecars, asked)
            _raise_to(init_peak, sidecars)
        else:
            during = dict(sidecars)
            _add(during, asked)
            _raise_to(init_peak, during)
    _raise_to(total, init_peak)
    return {name: value for name, value in sorted(total.items()) if value}


def node_allocatable(node: Obj) -> dict[str, int]:
    """The extended resources ``node`` offers (``status.allocatable``)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return {name: count_of(value) for name, value in allocatable.items() if _counted(name)}


def in_use(pods: Iterable[Obj]) -> dict[str, dict[str, int]]:
    """Node name -> the extended resources the pods bound there take (pods that ended take none)."""
    used: dict[str, dict[str, int]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node and (pod.get("status") or {}).get("phase") not in _ENDED:
            asked = extended_requests(pod)
            if asked:
                _add(used.setdefault(node, {}), asked)
    return used


def class_mapping(classes: Iterable[Obj], minor: int) -> dict[str, str]:
    """Extended resource name -> the DeviceClass that serves it, as kube-scheduler 1.<minor> maps them.

    1.34 (``extended.DeviceClassMapping``): a class's ``spec.extendedResourceName``, else its implicit name
    ``deviceclass.resource.kubernetes.io/<class>``; where two classes name the same resource the scheduler
    takes whichever it lists last (an order it does not fix): here the first by name. From 1.35 on (the
    extended resource cache): every class maps its implicit name, and its ``extendedResourceName`` too; where
    two classes name the same resource the one created last serves it (the same second: the smaller name).
    """
    ordered = sorted(classes, key=lambda c: (c.get("metadata") or {}).get("name", ""))
    mapped: dict[str, str] = {}
    if not versions.has(minor, "extended.resource_cache"):
        for device_class in ordered:
            name = (device_class.get("metadata") or {}).get("name", "")
            mapped.setdefault((device_class.get("spec") or {}).get("extendedResourceName") or IMPLICIT_PREFIX + name, name)
        return mapped
    created: dict[str, str] = {}
    for device_class in ordered:
        meta = device_class.get("metadata") or {}
        name, stamp = meta.get("name", ""), meta.get("creationTimestamp") or ""
        mapped[IMPLICIT_PREFIX + name] = name
        explicit = (device_class.get("spec") or {}).get("extendedResourceName")
        if explicit and (explicit not in created or stamp > created[explicit]):
            mapped[explicit], created[explicit] = name, stamp
    return mapped


def left_to_dra(name: str, node: Obj, minor: int) -> bool:
    """Whether ``node`` leaves resource ``name`` (which a DeviceClass maps) to DRA: at 1.34 where its allocatable
    does not list it, from 1.35 on also where it lists 0."""
    allocatable = node_allocatable(node)
    if versions.has(minor, "extended.zero_allocatable_left_to_dra"):
        return not allocatable.get(name)
    return name not in allocatable


@dataclass(frozen=True)
class ResourceFit:
    """One pod's NodeResourcesFit check for extended resources: ``wanted`` by the pod, ``used`` per node by
    the pods bound there, ``left_to_dra`` the names a DeviceClass maps while DRAExtendedResource is on, by the
    rules of Kubernetes 1.<minor>."""

    wanted: Mapping[str, int]
    used: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    left_to_dra: frozenset[str] = frozenset()
    minor: int = 34

    def short(self, node: Obj) -> list[tuple[str, int, int]]:
        """(name, allocatable, in use) of each resource ``node`` has too little of, by name."""
        allocatable = node_allocatable(node)
        used = self.used.get((node.get("metadata") or {}).get("name", ""), {})
        out = []
        for name, count in self.wanted.items():
            if name in self.left_to_dra and left_to_dra(name, node, self.minor):
                continue
            have, taken = allocatable.get(name, 0), used.get(name, 0)
            if count > have - taken:
                out.append((name, have, taken))
        return out

    def exclusion(self, node: Obj) -> NodeExclusion | None:
        """The filter's verdict on ``node`` (the first short resource by name), or None when it fits."""
        short = self.short(node)
        if not short:
            return None
        name, have, taken = short[0]
        detail = (f"the pod asks for {name}: {self.wanted[name]}; the node offers {have}"
                  + (f", {taken} taken by pods bound there" if taken else "")
                  + ("" if have else f" (no device plugin advertises {name} on it)"))
        return NodeExclusion("resources", INSUFFICIENT.format(name), detail)

    def reasons(self, node: Obj) -> list[str]:
        """Every reason the filter gives for ``node`` (one per short resource, as the scheduler counts them)."""
        return [INSUFFICIENT.format(name) for name, _, _ in self.short(node)]

    def resolvable(self, node: Obj) -> bool:
        """Whether evicting pods could make room (every short resource fits the node's allocatable)."""
        return all(self.wanted[name] <= have for name, have, _ in self.short(node))


def counted_reasons(reason: str, node: Obj, fit: ResourceFit | None) -> list[str]:
    """The reasons a FitError counts for a node turned away with ``reason``: every short resource where
    NodeResourcesFit turned it away, else ``reason`` alone."""
    if fit is not None and reason.startswith(INSUFFICIENT.format("")):
        return fit.reasons(node) or [reason]
    return [reason]


def resource_fit(pod: Obj, pods: Iterable[Obj], classes: Iterable[Obj] = (),
                 extended_resource_gate: bool = False, minor: int = 34) -> ResourceFit | None:
    """``pod``'s check against the cluster of Kubernetes 1.<minor> whose ``pods`` (the bound ones take their
    share) and DeviceClasses ``classes`` are given; None when the pod asks for no extended resource (the filter
    passes every node)."""
    wanted = extended_requests(pod)
    if not wanted:
        return None
    if not extended_resource_gate:
        left: frozenset[str] = frozenset()
    elif not versions.has(minor, "extended.implicit_names_served") and not any(is_extended(name) for name in wanted):
        # 1.34 reads no mapping for a pod without an extended resource name (only implicit names): it leaves every
        # resource a node does not list to DynamicResources, which does not take implicit names at 1.34
        left = frozenset(wanted)
    else:
        left = frozenset(class_mapping(classes, minor))
    return ResourceFit(wanted, in_use(pods), left, minor)
